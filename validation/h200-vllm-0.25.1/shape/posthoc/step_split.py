"""Post hoc (shape runs 5-17): where the held-out ITL miss lies, the engine's step or beyond it.
For each run, backend, schema alone and load: the model's ITL, step and running batch (RUN/predicted.json, as scored)
against the engine's (the sweeps' `engine` block: its ITL, its mean step, its running mean; the repeats' mean).
Prints each backend x load's (runs 5-17, 5-13, 14-17) median error of the step, of ITL/step and of the running batch, and the runs' rows.
Run from the repository root: python validation/h200-vllm-0.25.1/shape/posthoc/step_split.py"""
import json
import statistics
from collections import defaultdict
from pathlib import Path

SHAPE = Path("validation/h200-vllm-0.25.1/shape")
SERVERS = {"xg": "xgrammar", "gd": "guidance"}


def measured(run: Path, srv: str, schema: str, load: int):
    f = run / srv / f"{schema}.jsonl"
    if not f.exists():
        return None
    rows = [json.loads(x) for x in f.read_text().splitlines() if x.strip()]
    eng = [r["engine"] for r in rows if r.get("concurrency") == load and r.get("arm", "on") == "on" and r.get("engine")]
    eng = [e for e in eng if e.get("step_ms") and e.get("itl_ms")]
    if not eng:
        return None
    return {k: statistics.fmean(e[k] for e in eng) for k in ("itl_ms", "step_ms", "running_mean")}


def main() -> None:
    agg = defaultdict(lambda: defaultdict(list))
    print("run backend schema load | itl err% | step err% | itl/step engine model | running engine model")
    for n in range(5, 18):
        run = SHAPE / f"run{n}"
        pf = run / "predicted.json"
        if not pf.exists():
            continue
        pts = json.loads(pf.read_text())["points"]
        for srv, backend in SERVERS.items():
            for schema in ("flat", "nested", "deep"):
                for load in (32, 128, 256):
                    p = pts.get(schema, {}).get(backend, {}).get(str(load))
                    m = measured(run, srv, schema, load)
                    if not p or not m:
                        continue
                    e_itl = 100 * (p["itl_ms"] / m["itl_ms"] - 1)
                    e_step = 100 * (p["step_ms"] / m["step_ms"] - 1)
                    r_eng, r_mod = m["itl_ms"] / m["step_ms"], p["itl_ms"] / p["step_ms"]
                    e_run = 100 * (p["running"] / m["running_mean"] - 1)
                    for key in ((backend, load, "runs 5-17"), (backend, load, "runs 5-13" if n <= 13 else "runs 14-17")):
                        a = agg[key]
                        a["itl"].append(e_itl); a["step"].append(e_step); a["ratio"].append(100 * (r_mod / r_eng - 1))
                        a["running"].append(e_run)
                    print(f"run{n} {backend} {schema} {load} | {e_itl:+.0f} | {e_step:+.0f} | {r_eng:.2f} {r_mod:.2f} | "
                          f"{m['running_mean']:.0f} {p['running']:.0f}")
    print("\nbackend load runs points | median err%: ITL, step, ITL/step, running | too fast (ITL) | step too fast")
    for (b, load, runs), a in sorted(agg.items()):
        md = {k: statistics.median(v) for k, v in a.items()}
        print(f"{b} {load} {runs} {len(a['itl'])} | {md['itl']:+.1f} {md['step']:+.1f} {md['ratio']:+.1f} {md['running']:+.1f} | "
              f"{sum(x < 0 for x in a['itl'])} | {sum(x < 0 for x in a['step'])}")


if __name__ == "__main__":
    main()
