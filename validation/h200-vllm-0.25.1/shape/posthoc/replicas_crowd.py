"""Post hoc on the replicas check's runs 1-3 (docs/validation.md finding 27): every cell predicted again with the
model as main has it now, where a team wider than its cores crowds the engine thread after each copy
(Engine.spin_share: server A started on cores 0-7, a team of 8, then moved to a 4-core cpuset), each run's
cells and the team of 8 its server had; scored by the registered rule (replicas/check.py). Before (the same team,
no crowding): runs 1-2 10.7% and 12.0%, directions 6 and 7 of 8 (omp_spin.txt); run 3 7.5%, 6 of 8 (registered).
  python validation/h200-vllm-0.25.1/shape/posthoc/replicas_crowd.py   (repository root) -> stdout (replicas_crowd.txt)"""
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

def rescore(run: str, config: dict | None = None) -> str:
    """One run's cells predicted again with the model as main has it (`config`: the run's RUN_CONFIG for this
    prediction, None: the registered one) and scored by the registered rule: a line of figures."""
    with tempfile.TemporaryDirectory() as t:
        d = Path(t) / run
        shutil.copytree(REP / run, d)
        if config is not None:
            check.RUN_CONFIG[run] = config
        check.predicted_file = lambda _run, f=Path(t) / "predicted.json": f
        with contextlib.redirect_stdout(io.StringIO()):
            check.predict(run)
            check.score(d)
        res = json.loads((d / "score.json").read_text())
    changes = " ".join(f"{r['cell']}@{r['load']} {r['predicted_change_pct']:+.0f}/{r['measured_change_pct']:+.0f}"
                       f"{'' if r['direction_right'] else ' WRONG'}" for r in res["points"] if "predicted_change_pct" in r)
    return (f"{run}: median |error| {res['median_abs_error_pct']:.1f}% over {res['scored']}, directions "
            f"{res['directions_right']} of {res['scored']}; change predicted/measured %: {changes}")


if __name__ == "__main__":
    for run in ("run1", "run2", "run3"):
        print(rescore(run, {"omp_threads": 8}))
