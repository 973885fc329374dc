"""Post hoc on the shape check's runs 4-6 (docs/validation.md finding 27), a test the crowding was not built on:
their 6-core points moved both servers, started on 16 cores, to cores 0-5 with `taskset -a` (run.sh), so the
xgrammar engine's OpenMP team stayed 16 threads on 6 cores. The registered rule predicted them with `--cores 6`
(a team of 6: no crowding); here the same points with `--omp-threads 16` too. llguidance has no spinners
(its bitmask is pinned): unchanged. ITL error = predicted / measured - 1, the mean of each point's repeats.
  python validation/h200-vllm-0.25.1/shape/posthoc/cores6_crowd.py   (repository root) -> stdout (cores6_crowd.txt)"""
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))
import check  # noqa: E402

for run in ("run4", "run5", "run6"):
    prof = str(HERE / run / "xg" / "host.json.gz")
    meas = check.measured(HERE / run, "6")
    for s in check.SCHEMAS[:2]:
        args = ["--schema-id", s]
        if run in check.SWEEP_REQUEST_RUNS:
            args += ["--prompt-tokens", str(check.SWEEP_PROMPTS[s][0]), "--prompt-cached-tokens", str(check.SWEEP_PROMPTS[s][1])]
        for team in (6, 16):
            pred = check.model(prof, args, check.CORES6_LOADS, ["--cores", "6", "--omp-threads", str(team)])["xgrammar"]
            for c in check.CORES6_LOADS:
                m = statistics.fmean(x["itl_ms"] for x in meas[("xgrammar", s, c)])
                print(f"{run} xgrammar {s:6} c{c} 6 cores, team {team:2}: predicted {pred[c]['itl_ms']:6.1f} ms, "
                      f"measured {m:6.1f} ({100 * (pred[c]['itl_ms'] / m - 1):+.0f}%)", flush=True)
