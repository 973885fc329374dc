"""Post hoc (issue 39): the replicas check (../../replicas/) scored again with more CPU in a replica's demand:
  extra X ms a step (the xgrammar engine's CPU beyond the model's parts, engine_cpu.py), X = 0, 63, 135
  -> replicas_extra.txt;
  the xgrammar engine's OpenMP team (../run3/threads-xg.txt: usable cores - 1 threads of the EngineCore, each
  spinning S ms of CPU a step; a cpuset of 4 has 3, a quota on 12 cores 11, all spending the quota),
  S = 0, 3, 5.5 -> replicas_omp.txt.
  python validation/h200-vllm-0.25.1/shape/posthoc/replicas_extra.py [extra|omp]   (from the repository root)"""
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


def rescore(label: str, cpu_ms_a_step) -> None:
    """The check's predictions and scores with cpu_ms_a_step(sim) ms of CPU a step added to the demand."""
    def demand(sim):
        d = plain(sim)
        if not sim.steps:
            return d
        col = hs.step_columns(sim.steps)
        t_end = float(col["t_start_ms"][-1] + col["period_ms"][-1])
        return replace(d, api_server=d.api_server + cpu_ms_a_step(sim) * len(sim.steps) / t_end)
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
            print(f"{label}, {run}: median |error| {d['median_abs_error_pct']:.1f}%, directions "
                  f"{d['directions_right']} of {d['scored']}", flush=True)


if __name__ == "__main__":
    if (sys.argv[1:] or ["extra"])[0] == "extra":
        for X in (0.0, 63.0, 135.0):
            rescore(f"X {X:.0f} ms a step", lambda sim, X=X: X)
    else:
        for S in (0.0, 3.0, 5.5):
            rescore(f"S {S:.1f} ms a spinner a step",
                    lambda sim, S=S: (sim.cfg.usable_cores - 1) * S if sim.cfg.backend == "xgrammar" else 0.0)
