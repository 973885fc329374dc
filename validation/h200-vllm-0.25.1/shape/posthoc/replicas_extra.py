"""Post hoc (issue 39): the replicas check (../../replicas/) scored again with X ms of CPU a step added to a
replica's demand (the xgrammar engine's CPU beyond the model's parts, engine_cpu.py), for X = 0, 63, 135.
  python validation/h200-vllm-0.25.1/shape/posthoc/replicas_extra.py   (from the repository root)"""
import contextlib
import importlib
import io
import json
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

REP = Path(__file__).resolve().parents[2] / "replicas"
sys.path.insert(0, str(REP))
import maskcost.model.host_share as hs  # noqa: E402

plain = hs.demand
for X in (0.0, 63.0, 135.0):
    def demand(sim, X=X):
        d = plain(sim)
        if not sim.steps:
            return d
        col = hs.step_columns(sim.steps)
        t_end = float(col["t_start_ms"][-1] + col["period_ms"][-1])
        return replace(d, api_server=d.api_server + X * len(sim.steps) / t_end)
    hs.demand = demand
    import check
    importlib.reload(check)
    with tempfile.TemporaryDirectory() as t:
        check.HERE = Path(t)
        with contextlib.redirect_stdout(io.StringIO()):
            check.predict()
            for run in ("run1", "run2"):
                shutil.copytree(REP / run, Path(t) / run)
                check.score(Path(t) / run)
        for run in ("run1", "run2"):
            d = json.loads((Path(t) / run / "score.json").read_text())
            print(f"X {X:.0f} ms a step, {run}: median |error| {d['median_abs_error_pct']:.1f}%, directions "
                  f"{d['directions_right']} of {d['scored']}")
