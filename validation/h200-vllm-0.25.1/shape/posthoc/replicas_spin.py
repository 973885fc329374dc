"""Post hoc on the replicas check's run 3 (finding 25): its 8 registered changes predicted again with the spin a
spinner a step taken from that machine instead of the registered 9 ms (fit on the shape check's runs 1-2): 5.5 ms,
what calibrate measured on the same machine an hour before (the shape check's run 6 profile, host.omp_spin_ms),
and 4.1 ms, what the cgroup counted (team of 8 minus team of one under quota 4: 0.54 and 0.48 CPUs over 7 spinners
at 48.7 and 64.9 ms a step, the mean of the two). Scored by the registered rule (replicas/check.py).
  python validation/h200-vllm-0.25.1/shape/posthoc/replicas_spin.py   (repository root) -> stdout (replicas_spin.txt)"""
import contextlib
import io
import json
import shutil
import sys
import tempfile
from pathlib import Path

REP = Path(__file__).resolve().parents[2] / "replicas"
sys.path.insert(0, str(REP))
import check  # noqa: E402

for spin_ms in (9.0, 5.5, 4.1):
    with tempfile.TemporaryDirectory() as t:
        run = Path(t) / "run3"
        shutil.copytree(REP / "run3", run)
        check.RUN_CONFIG["run3"] = {"omp_threads": 8, "omp_spin_ms": spin_ms}
        check.predicted_file = lambda _run, f=Path(t) / "predicted-run3.json": f
        with contextlib.redirect_stdout(io.StringIO()):
            check.predict("run3")
            check.score(run)
        res = json.loads((run / "score.json").read_text())
    changes = " ".join(f"{r['cell']}@{r['load']} {r['predicted_change_pct']:+.0f}/{r['measured_change_pct']:+.0f}"
                       for r in res["points"] if "predicted_change_pct" in r)
    print(f"spin {spin_ms} ms: median |error| {res['median_abs_error_pct']:.1f}% over {res['scored']}, directions "
          f"{res['directions_right']} of {res['scored']}; change predicted/measured %: {changes}")
