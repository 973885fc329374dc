"""Post hoc on shape runs 1-11 (docs/validation.md finding 46): the model's own sampling error in a nested/flat
ratio. Each run's committed profile (RUN/xg/host.json.gz, calibrate on that server) predicted as check.py
score predicts it, the nested/flat ratios and the held-out ITL scored against the run's sweeps, under a label:
  before   the model at b628c84 (traces drawn with replacement, max(200, 4 x clients) requests a point)
  dealt    traces dealt from each schema's shuffled deck, the same request counts
  precise  dealt, and each point run until its ITL mean is known to +-2% (predict's --precision 0.02)
  LABEL=dealt CHECK_PREDICT_ARGS="--precision 0" python validation/h200-vllm-0.25.1/shape/posthoc/sampling.py [RUN ...]
  LABEL=precise python ...sampling.py (predict's default now)   (repository root; for `before`, from a checkout of
  b628c84 with this script and check.py copied in; the rows here were made before --precision 0.02 was the default,
  so `dealt` then ran with no flag)  -> appends to
  sampling.json; `python sampling.py --table` -> sampling.txt"""
import json
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHAPE = HERE.parent
sys.path.insert(0, str(SHAPE))
import check  # noqa: E402

RUNS = ("run1", "run3", "run4", "run5", "run6", "run7", "run8", "run9", "run10", "run11")
OUT = HERE / "sampling.json"  # a list of rows, one a run and label


def one(run: str, label: str) -> dict:
    r = SHAPE / run
    meas, meas6 = check.measured(r), check.measured(r, "6")
    pred = check.predictions(str(r / "xg" / "host.json.gz"), cores6=bool(meas6),
                             sweep_request=run in check.SWEEP_REQUEST_RUNS, team16=run in check.TEAM16_RUNS)
    mean = lambda b, s, c: statistics.fmean(x["itl_ms"] for x in meas[(b, s, c)])  # noqa: E731
    ratios = {}
    for b in check.SERVERS.values():
        for c in check.LOADS:
            if (b, "nested", c) in meas and (b, "flat", c) in meas:
                m = mean(b, "nested", c) / mean(b, "flat", c)
                ratios[f"{b[:2]}{c}"] = 100 * (pred["ratios"]["nested"][b][str(c)] / m - 1)
    errs = check.itl_score(pred["points"], meas)["errors_pct"] + \
        (check.itl_score(pred["cores6"], meas6)["errors_pct"] if meas6 else [])
    running = {f"{b[:2]} {s} {c}": [round(pred["points"][s][b][str(c)]["running"]),
                                     round(statistics.fmean(x["running"] for x in meas[(b, s, c)]))]
               for b in check.SERVERS.values() for s in ("flat", "nested") for c in (256,) if (b, s, c) in meas}
    return {"run": run, "label": label, "predict_args": check.PREDICT_ARGS, "ratio_error_pct": ratios,
            "within_10": sum(abs(e) <= check.BAR_PCT for e in ratios.values()), "ratios": len(ratios),
            "itl_median_abs_pct": statistics.median(abs(e) for e in errs), "itl_points": len(errs),
            "running_256_model_engine": running}


def table() -> str:
    rows = json.loads(OUT.read_text())
    out = ["run | label | nested/flat within 10% | each ratio's error (model/measured - 1) | median |ITL error| | "
           "running at 256, model/engine", "---|---|---|---|---|---"]
    for run in RUNS:
        for r in (x for x in rows if x["run"] == run):
            out.append(f"{run} | {r['label']} | {r['within_10']} of {r['ratios']} | "
                       + ", ".join(f"{k} {v:+.0f}%" for k, v in r["ratio_error_pct"].items())
                       + f" | {r['itl_median_abs_pct']:.1f}% over {r['itl_points']} | "
                       + ", ".join(f"{k} {a}/{b}" for k, (a, b) in r["running_256_model_engine"].items()))
    for label in dict.fromkeys(x["label"] for x in rows):
        got = [x for x in rows if x["label"] == label]
        out.append(f"\n{label}: nested/flat within 10% at {sum(x['within_10'] for x in got)} of "
                   f"{sum(x['ratios'] for x in got)} over {len(got)} runs; median of the runs' median |ITL error| "
                   f"{statistics.median(x['itl_median_abs_pct'] for x in got):.1f}%")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    if sys.argv[1:] == ["--table"]:
        (HERE / "sampling.txt").write_text(table())
        print(table())
    else:
        label = os.environ.get("LABEL", "dealt")
        for run in sys.argv[1:] or RUNS:
            got = one(run, label)
            rows = json.loads(OUT.read_text()) if OUT.exists() else []
            OUT.write_text(json.dumps(rows + [got], indent=0) + "\n")
            print(json.dumps(got), flush=True)
