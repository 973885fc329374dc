"""Issue 39's one-GPU check: replicas sharing one H200 and 8 cores, and one engine under a CPU quota.
  python check.py predict [RUN] -> predicted.json (runs 1-2), predicted-RUN.json (a later run's registration),
                                   committed before the run: the registration's numbers
  python check.py score DIR     -> DIR/score.json, DIR/score.md, DIR/score.png from the sweeps run.sh wrote, against
                                   predicted-DIR.json where it exists, else predicted.json
The cells, the reference each is scored against and the rule: README.md here."""
from __future__ import annotations

import json
import statistics
import sys
from dataclasses import asdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROFILE = HERE.parent / "transfer/run1-16cores/host.json.gz"  # a calibrate --base-url profile of these schemas, made on another H200
SCHEMAS = ("ticket", "shipment", "event")
LOADS = (64, 192)
# cell -> (cores, replicas, quota, arms, the cell its ratio is taken against)
CELLS = {
    "alone": (8, 1, None, ("on", "off"), None),
    "together": (8, 2, None, ("on", "off"), "alone"),
    "cpuset4": (4, 1, None, ("on",), None),
    "quota4": (12, 1, 4.0, ("on",), "cpuset4"),
    "quota2": (12, 1, 2.0, ("on",), "cpuset4"),
}
NO_CHANGE_PCT, NO_CHANGE_MEASURED_PCT, BAR_PCT = 5.0, 10.0, 15.0
# run -> what its registration set beyond runs 1-2's: run 3, the engine's OpenMP team as run.sh starts it (server A
# on cores 0-7: 8 threads, which a later taskset -a does not resize; docs/engines.md "The bitmask's pinned copy")
RUN_CONFIG = {f"run{i}": {"omp_threads": 8} for i in range(3, 8)}
# run -> cells of its own: (cores, replicas, quota, arms, reference, config beyond RUN_CONFIG). Run 3's phase
# omp1: server A started again on cores 0-11 with OMP_NUM_THREADS=1 (a team of one: no spinners after the
# bitmask copy), in the cgroup, each quota against the same quota with the team of 8 (the quota phase's cells)
RUN_CELLS = {"run3": {"omp1quota4": (12, 1, 4.0, ("on",), "quota4", {"omp_threads": 1}),
                      "omp1quota2": (12, 1, 2.0, ("on",), "quota2", {"omp_threads": 1})}}
RUN_CELLS["run4"] = RUN_CELLS["run3"]  # run 4: run 3's cells and phases, predicted with the crowding team (finding 27)
RUN_CELLS["run5"] = RUN_CELLS["run3"]  # run 5: the same, predicted with the other replica's spinners in bursts (finding 29)
# run 6: run 5's, and phase team8 after omp1: A started again with the team of 8, the same quotas (cells of their own,
# not scored); each team-of-1 cell's reference is the mean of the team-of-8 cell before the restarts and after them
# (validation/h200-vllm-0.25.1/replicas/restart/: a restart alone moved a server as much as a point moves from the next)
RUN_CELLS["run6"] = {"omp1quota4": (12, 1, 4.0, ("on",), ("quota4", "team8quota4"), {"omp_threads": 1}),
                     "omp1quota2": (12, 1, 2.0, ("on",), ("quota2", "team8quota2"), {"omp_threads": 1}),
                     "team8quota4": (12, 1, 4.0, ("on",), None, {}), "team8quota2": (12, 1, 2.0, ("on",), None, {})}
# run 7: phase ompswitch for omp1/team8: one server, its team switched 8 -> 1 -> 8 by a signal between the sweeps
# (ompswitch/), no restart; each team-of-1 cell against the mean of the team-of-8 sweeps just before and after it
RUN_CELLS["run7"] = {"sw1quota4": (12, 1, 4.0, ("on",), "sw8quota4", {"omp_threads": 1}),
                     "sw1quota2": (12, 1, 2.0, ("on",), "sw8quota2", {"omp_threads": 1}),
                     "sw8quota4": (12, 1, 4.0, ("on",), None, {}), "sw8quota2": (12, 1, 2.0, ("on",), None, {})}
PRECISE_RUNS = ("run7",)  # predicted as predict does since finding 46: each point run to +-2% of its ITL mean


def cells(run: str | None) -> dict[str, tuple]:
    """The run's cells, each (cores, replicas, quota, arms, reference, config beyond RUN_CONFIG)."""
    return {**{k: (*v, {}) for k, v in CELLS.items()}, **RUN_CELLS.get(run or "", {})}


def predicted_file(run: str | None) -> Path:
    named = HERE / f"predicted-{run}.json"
    return named if run and (run in RUN_CONFIG or named.exists()) else HERE / "predicted.json"


def predict(run: str | None = None) -> None:
    from maskcost.model.config import EngineConfig, Workload
    from maskcost.model.predict import DEFAULT_PRECISION, grid, run_requests
    from maskcost.profile import load_profile
    prof = load_profile(PROFILE)
    ms = prof.measured_speed
    out = {"profile": str(PROFILE.relative_to(HERE.parent.parent.parent)), "speed": ms.words(), "cells": {}}
    for name, (cores, replicas, quota, arms, ref, more) in cells(run).items():
        cfg = EngineConfig(engine="vllm", engine_version="0.25.1", backend="xgrammar", max_num_seqs=256, cpu_count=16,
                           usable_cores=cores, cpu_speed=ms.cpu_speed, cpu_speed_pool=ms.pool_speed,
                           replicas=replicas, replica_gpu="shared", cpu_quota=quota,
                           **{**RUN_CONFIG.get(run or "", {}), **more})
        precise = run in PRECISE_RUNS
        wls = [Workload(concurrency=c, requests=run_requests(c, precise), schemas=SCHEMAS,
                        precision=DEFAULT_PRECISION if precise else None) for c in LOADS]
        pts = grid(prof, [cfg], wls, progress=False, jobs=1, band=False)
        out["cells"][name] = {"config": asdict(cfg), "reference": ref, "points": {
            str(p.concurrency): {"on": p.itl_ms_mean, "off": p.off.itl_ms_mean,
                                 "host_share": p.host_share, "off_host_share": p.off.host_share}
            for p in pts}}
    predicted_file(run).write_text(json.dumps(out, indent=1) + "\n")
    for name, c in out["cells"].items():
        print(name, {k: (round(v["on"], 2), round(v["off"], 2)) for k, v in c["points"].items()})


def measured(run: Path) -> dict[tuple[str, str, int], float]:
    """(cell, arm, load) -> the engine's ITL (ms): the mean of the replicas (together), of the runs before and
    after (alone); from run.sh's sweeps, named CELL[-REPLICA|-RUN].jsonl."""
    got: dict[tuple[str, str, int], list[float]] = {}
    for f in sorted(f for f in run.glob("*.jsonl") if ".raw." not in f.name):
        cell = f.stem.split("-")[0]
        for line in f.read_text().splitlines():
            r = json.loads(line)
            itl = (r.get("engine") or {}).get("itl_ms")
            if itl and not r.get("errors"):
                got.setdefault((cell, r["arm"], r["concurrency"]), []).append(itl)
    return {k: statistics.fmean(v) for k, v in got.items()}


def direction_right(pred_pct: float, meas_pct: float) -> bool:
    if abs(pred_pct) < NO_CHANGE_PCT:
        return abs(meas_pct) < NO_CHANGE_MEASURED_PCT
    return (pred_pct > 0) == (meas_pct > 0)


def score(run: Path) -> None:
    pred = json.loads(predicted_file(run.name).read_text())["cells"]
    meas = measured(run)
    rows, scored, unscored = [], [], []
    for name, c in pred.items():
        for load in LOADS:
            for arm in cells(run.name)[name][3]:
                p = c["points"][str(load)][arm]
                m = meas.get((name, arm, load))
                row = {"cell": name, "arm": arm, "load": load, "predicted_ms": p, "measured_ms": m,
                       "abs_error_pct": None if m is None else 100 * (p / m - 1)}
                ref = c["reference"]
                if ref is not None:  # a cell, or cells whose measured ITL is averaged (the first's prediction)
                    refs = list(ref) if isinstance(ref, (list, tuple)) else [ref]
                    got = [meas.get((r, arm, load)) for r in refs]
                    pr = p / pred[refs[0]]["points"][str(load)][arm]
                    mr = statistics.fmean(got) if all(got) else None
                    if not mr or m is None:
                        unscored.append(f"{name} {arm} {load}")
                        print(f"{name} {arm} {load}: not scored: nothing measured of "
                              f"{' and '.join(r for r, g in zip([name, *refs], [m, *got]) if not g)}")
                    if m is not None and mr:
                        row.update(reference="+".join(refs), predicted_change_pct=100 * (pr - 1), measured_change_pct=100 * (m / mr - 1),
                                   scored_predicted_ms=mr * pr, error_pct=100 * (mr * pr / m - 1))
                        row["direction_right"] = direction_right(row["predicted_change_pct"], row["measured_change_pct"])
                        scored.append(row)
                rows.append(row)
    med = statistics.median(abs(r["error_pct"]) for r in scored) if scored else None
    res = {"rule": "README.md", "points": rows, "scored": len(scored),
           "median_abs_error_pct": med, "bar_pct": BAR_PCT,
           "unscored": unscored,  # a registered change with a cell unmeasured: the bar is not met
           "bar_met": med is not None and med <= BAR_PCT and all(r["direction_right"] for r in scored) and not unscored,
           "directions_right": sum(r["direction_right"] for r in scored),
           "median_abs_error_nothing_read_pct": statistics.median(
               abs(r["abs_error_pct"]) for r in rows if r["abs_error_pct"] is not None) if meas else None}
    (run / "score.json").write_text(json.dumps(res, indent=1) + "\n")
    lines = ["| cell | arm | clients | measured ms | change measured | change predicted | scored prediction ms | error | direction |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        f = lambda v, fmt="{:.1f}": "-" if v is None else fmt.format(v)
        lines.append(f"| {r['cell']} | {r['arm']} | {r['load']} | {f(r['measured_ms'])} | {f(r.get('measured_change_pct'), '{:+.0f}%')} | "
                     f"{f(r.get('predicted_change_pct'), '{:+.0f}%')} | {f(r.get('scored_predicted_ms'))} | "
                     f"{f(r.get('error_pct'), '{:+.0f}%')} | {'' if 'direction_right' not in r else ('right' if r['direction_right'] else 'WRONG')} |")
    lines.append(f"\nmedian |error| {f(med)}% over {len(scored)} scored points (bar {BAR_PCT:.0f}%); directions right "
                 f"{res['directions_right']}/{len(scored)}; bar met: {res['bar_met']}")
    (run / "score.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    from maskcost.plotting import save, subplots
    fig, ax = subplots(1, 1, figsize=(6.5, 4))
    for r in scored:
        ax.scatter(r["measured_change_pct"], r["predicted_change_pct"], color="C0" if r["arm"] == "on" else "C1")
        ax.annotate(f"{r['cell']} {r['arm']} {r['load']}", (r["measured_change_pct"], r["predicted_change_pct"]), fontsize=7)
    lim = [min(-10, *(min(r["measured_change_pct"], r["predicted_change_pct"]) for r in scored)) if scored else -10,
           max(110, *(max(r["measured_change_pct"], r["predicted_change_pct"]) for r in scored)) if scored else 110]
    ax.plot(lim, lim, "k--", lw=0.8)
    ax.set_xlabel("ITL change measured (%) vs its reference cell")
    ax.set_ylabel("ITL change predicted (%)")
    ax.set_title("replicas on one H200 / CPU quota: predicted vs measured change", fontsize=9)
    save(fig, run / "score.png")


if __name__ == "__main__":
    {"predict": lambda: predict((sys.argv[2:] or [None])[0]), "score": lambda: score(Path(sys.argv[2]))}[sys.argv[1]]()
