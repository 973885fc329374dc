"""Post hoc on shape runs 5-10 (docs/validation.md finding 42): run 10's one miss, llguidance's nested at 256
clients (+27% ITL, 235 running in the model against 194), traced to the engine thread's cost a step past the
highest batch the probe timed (llguidance's probe points stop at 144 rows; beyond them the model adds the points'
least-squares slope, 0.062 ms a row: 17.8 ms at 235 rows, where the run's engine thread spent about 13 ms a step
in all at 194). The lever tried: that cost held flat past the probe's last point (model.costs.Costs
engine_cpu_slope = 0), (A) each run scored as registered (check.py score on a copy, the run's own profile) and
(B) on the API-server refit of runs 6-9 (api_cpu.py, calibrate's chain run again with the lever in place).
  python validation/h200-vllm-0.25.1/shape/posthoc/engine_cpu_flat.py   (repository root) -> stdout
      (engine_cpu_flat.txt); the lever reaches the predict subprocesses through a sitecustomize on PYTHONPATH"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SHAPE = Path(__file__).resolve().parent.parent
PATCH = '''import os
if os.environ.get("FLAT_ENGINE_CPU"):
    from maskcost.model import costs as _c
    _init = _c.Costs.__init__
    def __init__(self, *a, **k):
        _init(self, *a, **k)
        self.engine_cpu_slope = 0.0
    _c.Costs.__init__ = __init__
'''


def summary(s: dict) -> str:
    ratios = ", ".join(f"{r['backend'][:2]}{r['load']} {r['error_pct']:+.0f}%" for r in s["rows"]
                       if r.get("error_pct") is not None)
    return f"nested/flat within 10% {s['nested_within_bar']} of 6 ({ratios}); median |ITL error| " \
           f"{s['itl_all']['median_abs_pct']:.1f}% over {s['itl_all']['points']}"


def main() -> None:
    with tempfile.TemporaryDirectory() as t:
        (Path(t) / "sitecustomize.py").write_text(PATCH)
        env = {**os.environ, "FLAT_ENGINE_CPU": "1", "PYTHONPATH": t}
        print("(A) as registered, the engine thread's cost held flat past the probe's last batch")
        for run in ("run5", "run6", "run7", "run8", "run9", "run10"):
            out = Path(t) / run
            shutil.copytree(SHAPE / run, out)
            subprocess.run([sys.executable, str(SHAPE / "check.py"), "score", str(out)], env=env, check=True,
                           capture_output=True)
            print(f"{run}: registered {summary(json.loads((SHAPE / run / 'score.json').read_text()))}")
            print(f"{' ' * len(run)}  held flat  {summary(json.loads((out / 'score.json').read_text()))}")
        print("(B) the API-server refit (api_cpu.py; its 'as registered' lines are (A)'s), the cost held flat:")
        sys.stdout.flush()
        subprocess.run([sys.executable, str(SHAPE / "posthoc" / "api_cpu.py")], env=env, check=True)


if __name__ == "__main__":
    main()
