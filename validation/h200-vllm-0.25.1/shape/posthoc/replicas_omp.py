"""Post hoc (issue 39): the replicas check (../../replicas/) scored again with the xgrammar engine's OpenMP team
in a replica's demand (../run3/threads-xg.txt: cpu_count - 1 threads of the EngineCore, each spinning S ms of
CPU a step; the team is sized from the cores the process may run on, so a cpuset of 4 has 3 spinners and a
quota on 12 cores has 11, all spending the quota), for S = 0, 3, 5.5 ms.
  python validation/h200-vllm-0.25.1/shape/posthoc/replicas_omp.py   (from the repository root)"""
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
for S in (0.0, 3.0, 5.5):
    def demand(sim, S=S):
        d = plain(sim)
        if not sim.steps or sim.cfg.backend != "xgrammar":
            return d
        col = hs.step_columns(sim.steps)
        t_end = float(col["t_start_ms"][-1] + col["period_ms"][-1])
        team = sim.cfg.usable_cores - 1
        return replace(d, api_server=d.api_server + team * S * len(sim.steps) / t_end)
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
            print(f"S {S:.1f} ms a spinner a step, {run}: median |error| {d['median_abs_error_pct']:.1f}%, directions "
                  f"{d['directions_right']} of {d['scored']}", flush=True)
