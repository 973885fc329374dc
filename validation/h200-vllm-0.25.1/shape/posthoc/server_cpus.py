"""Issue 39: the engine's CPU demand in the model (predict's cpu_demand: engine thread, API server, pools, and with
xgrammar the OpenMP threads that spin after each step's bitmask copy, 9 ms each, fit on runs 1-2) against the
server CPUs each shape-check point measured (engine.server_cpu, /proc), on runs 3-5: machines the spin was not fit
on. Each run's own calibrate profile, `maskcost report` as a user runs it.
  python validation/h200-vllm-0.25.1/shape/posthoc/server_cpus.py   (repository root) -> server_cpus.txt"""
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
errs: dict[str, list[float]] = {}
for run in ("run3", "run4", "run5"):
    for srv in ("xg", "gd"):
        prof = HERE / run / "xg" / "host.json.gz"  # the run's calibrate --base-url profile (both backends)
        for schema in ("flat", "nested", "deep"):
            sweep = HERE / run / srv / f"{schema}.jsonl"
            if not sweep.exists() or not prof.exists():
                continue
            with tempfile.TemporaryDirectory() as t:
                args = [sys.executable, "-m", "maskcost.cli", "report", "--sweep", str(sweep), "--profile", str(prof),
                        "--backend", "xgrammar" if srv == "xg" else "guidance", "--out", t]
                if subprocess.run(args, capture_output=True, text=True).returncode:
                    print(f"{run} {srv} {schema}: report failed")
                    continue
                rows = json.loads((Path(t) / "report.json").read_text())["rows"]
            for r in rows:
                m = r["metrics"]["server CPUs"]
                if m["measured"] is None or m["predicted"] is None or r["arm"] != "on":
                    continue
                e = 100 * (m["predicted"] / m["measured"] - 1)
                errs.setdefault(srv, []).append(e)
                print(f"{run} {srv} {schema:6} {r['concurrency']:3}: measured {m['measured']:.2f} CPUs, model {m['predicted']:.2f} "
                      f"({e:+.0f}%)")
for srv, e in errs.items():
    print(f"{srv}: median |error| {statistics.median(abs(x) for x in e):.1f}% over {len(e)} points, median {statistics.median(e):+.1f}%")
