"""Post hoc (finding 81): finding 80's two ratio predictors, fixed before shape run 21 ran, scored on run 21.

Finding 80 built two predictions of a schema's ITL ratio over flat from runs other than the one scored: LOO, the
geometric mean of the same cell's measured ratio on every other shape run (here runs 5-20, all before run 21), and
POOLED, the run's own profile with its traces replaced by runs 13-20's traces of the same schemas, each source run's
traces scaled per backend so that its flat's mean fill a token is this run's. Neither read anything of run 21 but its
profile's speed and flat (POOLED), so run 21 is a held-out test of both; AS MADE (run 21's profile, today's model) and
the run's registered score beside them. Each ratio as the shape check scores it (within 10%).

Run from the repository root with the repository's environment (about a minute: 2 scorings):
  python validation/h200-vllm-0.25.1/shape/posthoc/run21_heldout.py > validation/h200-vllm-0.25.1/shape/posthoc/run21_heldout.txt
"""
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(ROOT))
from maskcost.profile import load_profile, save_profile  # noqa: E402

SHAPE = ROOT / "validation/h200-vllm-0.25.1/shape"
RUN = 21
SOURCES = range(13, 21)  # POOLED's trace sources (finding 80's runs)
RECORD = range(5, 21)  # LOO's measured ratios (finding 80's record)


def rows(run: int) -> dict:
    """(backend, load, schema) -> the run's committed score.json row, where a ratio was measured."""
    d = json.loads((SHAPE / f"run{run}" / "score.json").read_text())
    return {(r["backend"], r["load"], r["schema"]): r for r in d["rows"] if r.get("measured_ratio")}


def err_pct(pred: float, meas: float) -> float:
    return 100 * (pred / meas - 1)


def flat_mean(backend) -> float:
    fills = [f for t in backend.traces if t.schema_id == "flat" for f in t.fill_us]
    return sum(fills) / len(fills)


def pooled(run: int):
    prof = load_profile(SHAPE / f"run{run}" / "xg" / "host.json.gz")
    backends = {}
    for name, b in prof.backends.items():
        own, traces = flat_mean(b), []
        for o in SOURCES:
            ob = load_profile(SHAPE / f"run{o}" / "xg" / "host.json.gz").backends[name]
            k = own / flat_mean(ob)
            traces += [replace(t, fill_us=tuple(f * k for f in t.fill_us), accept_us=tuple(a * k for a in t.accept_us))
                       for t in ob.traces if t.schema_id in ("flat", "nested", "deep")]
        backends[name] = replace(b, traces=tuple(traces))
    return replace(prof, backends=backends)


def scored(run: int, profile) -> dict:
    with tempfile.TemporaryDirectory() as t:
        copy = Path(t) / f"run{run}"
        shutil.copytree(SHAPE / f"run{run}", copy, ignore=shutil.ignore_patterns(
            "*.raw.jsonl.gz", "*.log.gz", "score.*", "predicted.json"))
        save_profile(profile, Path(t) / "p.json.gz")
        subprocess.run([sys.executable, str(SHAPE / "check.py"), "score", str(copy), str(Path(t) / "p.json.gz")],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, env=os.environ)
        return json.loads((copy / "score.json").read_text())


def main() -> None:
    meas = rows(RUN)
    record = {r: rows(r) for r in RECORD if (SHAPE / f"run{r}" / "score.json").is_file()}
    preds = {"REGISTERED": {k: x["predicted_ratio"] for k, x in meas.items()}, "LOO": {}}
    for key in meas:
        others = [record[o][key]["measured_ratio"] for o in record if key in record[o]]
        preds["LOO"][key] = math.exp(statistics.fmean(math.log(x) for x in others))
    for name in ("AS MADE", "POOLED"):
        prof = load_profile(SHAPE / f"run{RUN}" / "xg" / "host.json.gz") if name == "AS MADE" else pooled(RUN)
        d = scored(RUN, prof)
        preds[name] = {(x["backend"], x["load"], x["schema"]): x["predicted_ratio"] for x in d["rows"]
                       if x.get("measured_ratio")}
        it = d["itl"]
        preds[name]["_itl"] = f"ITL median |error| {it['median_abs_pct']:.1f}%, interval {it['inside_interval']}/{it['points']}"
    print(f"shape run {RUN}: ratio errors (predicted over measured - 1, %); within 10% counted; LOO from runs "
          f"{RECORD.start}-{RECORD.stop - 1}, POOLED's traces from runs {SOURCES.start}-{SOURCES.stop - 1}")
    keys = sorted(meas)
    print("  cell            measured " + " ".join(f"{n:>12s}" for n in preds))
    for k in keys:
        print(f"  {k[0][:8]:<8s} {k[1]:>3d} {k[2]:<6s} {meas[k]['measured_ratio']:6.2f}   " +
              " ".join(f"{v[k]:5.2f} {err_pct(v[k], meas[k]['measured_ratio']):+4.0f}%" for v in preds.values()))
    for n, v in preds.items():
        nf = sum(abs(err_pct(v[k], meas[k]["measured_ratio"])) <= 10 for k in keys if k[2] == "nested")
        df = sum(abs(err_pct(v[k], meas[k]["measured_ratio"])) <= 10 for k in keys if k[2] == "deep")
        med = statistics.median(abs(err_pct(v[k], meas[k]["measured_ratio"])) for k in keys)
        print(f"  {n:<10s} nested/flat {nf} of 6, deep/flat {df} of 6, median |ratio error| {med:.1f}%"
              + (f"; {v['_itl']}" if "_itl" in v else ""))


if __name__ == "__main__":
    main()
