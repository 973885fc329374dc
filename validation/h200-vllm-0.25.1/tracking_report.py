"""The tracking rule, scored from committed prediction grids (for a session that pre-registers it;
m/tracking.py backtested it with the model run afresh): the sweeps' schema-on points on one server,
in the order they ran, each point and pass alone; each read from the grid at the speed the engine's
fill ran at on the point before it (--rule previous, session N's; maskcost.validate.inengine.fill_speed
on the probe's records in that point's window, against the grid's breakdown at the grid speed nearest
the bench) or at the median of the fill speeds of all the server's points before it (--rule median,
session P's: what predict --cpu-speed-from-report does with reports on every point run so far) or at
the first point's, kept (--rule opening: a speed calibrated on the unscored opening alone), or at
the median of the ITL speeds of the server's earlier points (--rule median-itl, session R's:
maskcost.validate.hostspeed, no probe; the model run with the embedded default, or --profile, which
must be the profile the grid was made with, at the grid's engine config), and
at the idle bench's speed (the rule it is measured against). A speed outside the grid is read at its
edge (and counted). The server's first point is scored at the bench speed only.
usage: python validation/h200-vllm-0.25.1/tracking_report.py [--rule previous|median|opening|median-itl] [--profile PATH] NAME GRID.json BENCH_SPEED PROBE_DIR SWEEP.jsonl...
prints one Markdown row (name, points, both medians, per point) and a JSON line with the errors."""
import argparse
import json
import statistics
import sys

from maskcost.calibrate.profile import load_default_profile, load_profile
from maskcost.model.config import EngineConfig
from maskcost.validate.hostspeed import attach_itl_speeds
from maskcost.validate.inengine import fill_speed, read_probe, window_stats
from maskcost.validate.report import at_speed, compare
from maskcost.validate.sweep import itl_ms, read_summaries
from scoring import grid as read_grid


def read_at(by_speed: dict[float, dict], speed: float) -> tuple[dict, bool]:
    """The grid's prediction at `speed`; at the nearer edge (True) where the grid does not reach it."""
    lo, hi = min(by_speed), max(by_speed)
    if lo <= speed <= hi:
        return at_speed(by_speed, speed), False
    return by_speed[lo if speed < lo else hi], True


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rule", choices=("previous", "median", "opening", "median-itl"), default="previous")
    ap.add_argument("--profile", help="with --rule median-itl: the profile the grid was made with (default: the embedded one)")
    ap.add_argument("name")
    ap.add_argument("grid_path")
    ap.add_argument("bench", type=float)
    ap.add_argument("probe_dir")
    ap.add_argument("sweeps", nargs="+")
    a = ap.parse_args()
    name, grid_path, bench, probe_dir, sweeps = a.name, a.grid_path, a.bench, a.probe_dir, a.sweeps
    grid, doc = read_grid(grid_path)
    if a.rule == "median-itl":
        profile = load_profile(a.profile) if a.profile else load_default_profile()
        if (doc["profile"]["name"], doc["profile"]["created_utc"]) != (profile.name, profile.created_utc):
            sys.exit(f"{grid_path}: made with profile {doc['profile']['name']}, not {a.profile or 'the embedded default'}")
        cfg = EngineConfig(**doc["points"][0]["config"]["engine"])
    probe = read_probe(probe_dir)
    runs = sorted((s for f in sweeps for s in read_summaries(f) if s["arm"] == "on"),
                  key=lambda s: s["engine"]["window_start_unix_s"])
    seen: list[float] = []  # the points' speeds so far (ITL with --rule median-itl, else fill), in time order
    cells, err_bench, err_tracked, edges = [], [], [], 0
    for s in runs:
        by_speed = grid.get(s["concurrency"])
        if by_speed is None:
            sys.exit(f"{grid_path}: no prediction at concurrency {s['concurrency']} (sweep point {s['point']})")
        measured = itl_ms(s)
        near = min(by_speed, key=lambda sp: abs(sp - bench))
        e0 = s["engine"]["window_start_unix_s"]
        row = {"arm": "on", "cpu_speed": near, "predicted_breakdown": by_speed[near]["breakdown"],
               "inengine": window_stats(probe, [(e0, e0 + s["engine"]["window_s"])])}
        at_bench, _ = read_at(by_speed, bench)
        err_bench.append(100.0 * (at_bench["itl_ms_mean"] - measured) / measured)
        cell = f"{s['concurrency']}: {err_bench[-1]:+.0f}"
        if seen:
            prev = seen[-1] if a.rule == "previous" else seen[0] if a.rule == "opening" else statistics.median(seen)
            tracked, edge = read_at(by_speed, prev)
            edges += edge
            err_tracked.append(100.0 * (tracked["itl_ms_mean"] - measured) / measured)
            cell += f" / {err_tracked[-1]:+.0f} (at {prev:.2f}{', edge' if edge else ''})"
        cells.append(cell)
        if a.rule == "median-itl":  # the point's ITL speed, the model run on it now
            own = attach_itl_speeds(compare(profile, cfg, [s]), profile, cfg, [s], 4, progress=False)[0]["itl_speed"]
        else:
            own = fill_speed(row)
        if own:
            seen.append(own)
    med = lambda es: f"{statistics.median(abs(e) for e in es):.1f}%" if es else "-"  # noqa: E731
    print(f"| {name} | {bench:.3f} | {len(err_tracked)} | {med(err_tracked)} | {med(err_bench[1:])} | "
          f"{med(err_bench)} | {edges} | {'; '.join(cells)} |")
    print(json.dumps({"name": name, "tracked": err_tracked, "bench_same_points": err_bench[1:], "bench": err_bench}),
          file=sys.stderr)


if __name__ == "__main__":
    main()
