"""Post hoc (finding 80): is a schema's cost relative to another's a machine's, or the schemas'?

1. The measured nested/flat and deep/flat ITL ratios of shape runs 13-20 against a ratio that reads nothing of the
   machine: the geometric mean of the same cell's measured ratio on every other shape run (5-20) that measured it
   (leave one machine out), each as the shape check scores a ratio (within 10%); beside it the model's, as each run's
   score.md (the model of its day) and as today's model scores it (check.py score on a copy: AS MADE).
2. The model with each run's traces replaced by the other runs' traces of the same schemas (runs 13-20 but this one),
   each source run's traces scaled per backend so that its flat's mean fill a token is this run's (POOLED): this run's
   speed, the other machines' relative costs. Scored as the shape check scores, on a copy of the run.

Run from the repository root with the repository's environment (about 5 minutes: 16 scorings):
  python validation/h200-vllm-0.25.1/shape/posthoc/pooled_ratio.py > validation/h200-vllm-0.25.1/shape/posthoc/pooled_ratio.txt
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
RUNS = range(13, 21)
RECORD = range(5, 21)


def measured(run: int) -> dict:
    """(backend, load, schema) -> the measured ratio over flat, from the run's committed score.json."""
    d = json.loads((SHAPE / f"run{run}" / "score.json").read_text())
    return {(r["backend"], r["load"], r["schema"]): r["measured_ratio"] for r in d["rows"] if r.get("measured_ratio")}


def ok(pred: float, meas: float) -> bool:
    return abs(pred / meas - 1) * 100 <= 10.0


def scored(run: int, profile) -> dict:
    with tempfile.TemporaryDirectory() as t:
        copy = Path(t) / f"run{run}"
        shutil.copytree(SHAPE / f"run{run}", copy, ignore=shutil.ignore_patterns(
            "*.raw.jsonl.gz", "*.log.gz", "score.*", "predicted.json"))
        save_profile(profile, Path(t) / "p.json.gz")
        subprocess.run([sys.executable, str(SHAPE / "check.py"), "score", str(copy), str(Path(t) / "p.json.gz")],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, env=os.environ)
        return json.loads((copy / "score.json").read_text())


def flat_mean(backend) -> float:
    fills = [f for t in backend.traces if t.schema_id == "flat" for f in t.fill_us]
    return sum(fills) / len(fills)


def pooled(run: int):
    """Run `run`'s profile with its traces replaced by the other runs' (scaled to this run's flat fill a token)."""
    prof = load_profile(SHAPE / f"run{run}" / "xg" / "host.json.gz")
    backends = {}
    for name, b in prof.backends.items():
        own, traces = flat_mean(b), []
        for o in RUNS:
            if o == run:
                continue
            ob = load_profile(SHAPE / f"run{o}" / "xg" / "host.json.gz").backends[name]
            k = own / flat_mean(ob)
            traces += [replace(t, fill_us=tuple(f * k for f in t.fill_us), accept_us=tuple(a * k for a in t.accept_us))
                       for t in ob.traces if t.schema_id in ("flat", "nested", "deep")]
        backends[name] = replace(b, traces=tuple(traces))
    return replace(prof, backends=backends)


def main() -> None:
    meas = {r: measured(r) for r in RECORD if (SHAPE / f"run{r}" / "score.json").is_file()}
    print("1. runs 13-20: ratios within 10% of measured (nested/flat of 6 a run, deep/flat of 6 on runs 16-20): the "
          "record's other machines' geometric mean (LOO), the model as registered (the run's score.json)")
    tot = {"LOO": [0, 0, 0, 0], "REGISTERED": [0, 0, 0, 0]}
    for r in RUNS:
        reg = {(x["backend"], x["load"], x["schema"]): x["predicted_ratio"]
               for x in json.loads((SHAPE / f"run{r}" / "score.json").read_text())["rows"] if x.get("measured_ratio")}
        line = []
        for name in tot:
            n = [0, 0, 0, 0]
            for key, m in meas[r].items():
                if name == "LOO":
                    others = [meas[o][key] for o in meas if o != r and key in meas[o]]
                    p = math.exp(statistics.fmean(math.log(x) for x in others))
                else:
                    p = reg[key]
                i = 0 if key[2] == "nested" else 2
                n[i] += ok(p, m)
                n[i + 1] += 1
            tot[name] = [a + b for a, b in zip(tot[name], n)]
            line.append(f"{name} nested/flat {n[0]} of {n[1]}, deep/flat {n[2]} of {n[3]}")
        print(f"  run{r:<3d} " + "; ".join(line))
    for name, n in tot.items():
        print(f"  {name:<10s} over runs 13-20: nested/flat {n[0]} of {n[1]}, deep/flat {n[2]} of {n[3]}")

    print("\n2. runs 13-20 scored as the shape check scores, today's model: AS MADE (the run's profile), POOLED (its "
          "traces the other runs', scaled to its flat); ratios within 10%, the median |ITL error|, inside the interval")
    tot2 = {"AS MADE": [], "POOLED": []}
    for r in RUNS:
        for name in tot2:
            prof = load_profile(SHAPE / f"run{r}" / "xg" / "host.json.gz") if name == "AS MADE" else pooled(r)
            d = scored(r, prof)
            rows = {(x["backend"], x["load"], x["schema"]): x for x in d["rows"] if x.get("measured_ratio")}
            nf = sum(ok(x["predicted_ratio"], x["measured_ratio"]) for k, x in rows.items() if k[2] == "nested")
            df = sum(ok(x["predicted_ratio"], x["measured_ratio"]) for k, x in rows.items() if k[2] == "deep")
            it = d["itl"]
            tot2[name].append((nf, df, it["median_abs_pct"], it["inside_interval"], it["points"]))
            errs = " ".join(f"{k[0][:2]}{k[1]}{k[2][0]} {100 * (x['predicted_ratio'] / x['measured_ratio'] - 1):+.0f}"
                            for k, x in sorted(rows.items()))
            print(f"  run{r:<3d} {name:<8s} nested/flat {nf}, deep/flat {df} | ITL {it['median_abs_pct']:5.1f}% | "
                  f"interval {it['inside_interval']}/{it['points']} | {errs}", flush=True)
    for name, vs in tot2.items():
        print(f"  {name:<8s} over runs 13-20: nested/flat {sum(v[0] for v in vs)}, deep/flat {sum(v[1] for v in vs)}; "
              f"median of the runs' median |ITL error| {statistics.median(v[2] for v in vs):.1f}%; inside the "
              f"interval {sum(v[3] for v in vs)} of {sum(v[4] for v in vs)}")


if __name__ == "__main__":
    main()
