"""The host's speed read back from a measured point through the engine's own ITL, no probe needed:
the CPU speed at which the model's ITL equals the engine's there (row["itl_speed"]). On the H200 VM
it tracks the speed the probe reads from the fill inside the engine (inengine.fill_speed): 2.1%
apart (median) at 152 points of sessions I-R, and the median of a server's earlier points predicts
its next as well (7.0% median |ITL error| over 129 points, 6.9% from fill speeds:
validation/h200-vllm-0.25.1/r/itl-speed.md; pre-registered in session R, 14.6% over 16 points)."""
from __future__ import annotations

import json
import statistics
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from ..records import SweepSummary

from ..profile import Profile
from ..model.config import EngineConfig

# the speeds the solve may return, against the profile's host; outside them a point says no speed
SPEED_RANGE = (0.2, 5.0)
# stop when the model's ITL is within TOLERANCE of the measured one, or the bracket round the answer
# is narrower than TOLERANCE of it (the model's ITL moves a little unevenly with the speed, at about
# 1%: its runs are discrete-event); without a bracket, answer where the closest run is within ACCEPT
TOLERANCE = 0.003
ACCEPT = 0.01
MAX_RUNS = 10
# where a point's speed is read from (report and predict --speed-source): the row key that holds it,
# and what makes a report carry it
SPEED_SOURCES = {"itl": ("itl_speed", "an ITL speed (any `maskcost report` on schema-on sweep points; a report "
                                      "from before maskcost recorded them needs making again)"),
                 "fill": ("fill_speed", "an in-engine fill speed (make it with `maskcost report --probe DIR`)")}


def solve_speed(itl_at: Callable[[float], float], measured_ms: float, start: float) -> float | None:
    """The speed s at which itl_at(s) = measured_ms, found in x = 1/s (the CPU part of a step scales
    with 1/s, the GPU part not at all, so ITL is near linear in x): secant steps from `start` until
    two runs fall either side, then regula falsi inside that bracket (halving where a step would hug
    one end); where the first two runs are equally fast and faster than measured (the fill hidden
    behind the forward), from ever slower speeds. None where the answer is outside SPEED_RANGE or
    the model cannot be as fast as measured (the GPU's part alone is slower)."""
    lo, hi = 1.0 / SPEED_RANGE[1], 1.0 / SPEED_RANGE[0]
    runs = [(x, itl_at(1.0 / x) - measured_ms) for x in (1.0 / start, 1.25 / start)]

    def bracket() -> tuple[tuple[float, float], tuple[float, float]] | None:
        over = [r for r in runs if r[1] > 0]   # the model slower than measured: a faster speed is needed
        under = [r for r in runs if r[1] <= 0]
        if not over or not under:
            return None
        return min(over, key=lambda r: r[1]), max(under, key=lambda r: r[1])  # the closest on each side

    while len(runs) < MAX_RUNS:
        b = bracket()
        if b is None:
            (x0, f0), (x1, f1) = runs[-2], runs[-1]
            if abs(f1 - f0) >= 1e-9 * measured_ms:
                x = min(hi, max(lo, x1 - f1 * (x1 - x0) / (f1 - f0)))
            elif f1 < 0:  # faster than measured and flat here (the fill hidden behind the forward): slow down
                x = min(hi, 2 * max(x0, x1))
            else:
                return None  # the model is slower than measured at any speed here
            if any(abs(x - r[0]) < 1e-9 for r in runs):
                break  # pinned at the edge of SPEED_RANGE
        else:
            (xa, fa), (xb, fb) = b
            if abs(xa - xb) <= TOLERANCE * min(xa, xb) or min(abs(fa), abs(fb)) <= TOLERANCE * measured_ms:
                break
            x = xa - fa * (xb - xa) / (fb - fa)
            if min(abs(x - xa), abs(x - xb)) < 0.1 * abs(xb - xa):
                x = (xa + xb) / 2
        runs.append((x, itl_at(1.0 / x) - measured_ms))
    b = bracket()
    if b is not None:
        (xa, fa), (xb, fb) = b
        return 1.0 / (xa - fa * (xb - xa) / (fb - fa))
    x, f = min(runs, key=lambda r: abs(r[1]))
    return 1.0 / x if abs(f) <= ACCEPT * measured_ms else None


def solve_factor(itl_at: Callable[[float], float], measured_ms: float) -> float | None:
    """The factor k on a backend's fills at which itl_at(k) = measured_ms, from k = 1: solve_speed's
    search run in k = 1/s (a step's ITL is near linear in its fill's factor as in 1/speed); None where
    no k in 1/SPEED_RANGE gives it (the fill hidden behind the forward, or the rest of the step alone
    slower than measured)."""
    s = solve_speed(lambda speed: itl_at(1.0 / speed), measured_ms, 1.0)
    return None if s is None else 1.0 / s


def attach_itl_speeds(rows: list[dict[str, Any]], profile: Profile, cfg: EngineConfig,
                      measured: list[SweepSummary], requests_factor: int,
                      progress: bool = True) -> list[dict[str, Any]]:
    """Give each schema-on report row with sweep windows and a measured ITL its itl_speed (None where
    there is none): the model run again on that row's sweep points at the speeds the solve asks for
    (a progress bar on stderr unless `progress` is False)."""
    from tqdm import tqdm

    from .report import compare
    by_start = {s.engine.window_start_unix_s: s for s in measured if s.engine.window_start_unix_s is not None}
    for r in tqdm(rows, desc="host speed from ITL", unit="pt", disable=not progress):
        r["itl_speed"] = None
        meas = r["metrics"]["ITL ms"]["measured"]
        points = [by_start[w[0]] for w in r.get("windows") or () if w[0] in by_start]
        if r["arm"] != "on" or not meas or not points:
            continue

        def itl_at(speed: float) -> float:
            return compare(profile, replace(cfg, cpu_speed=speed, cpu_speed_pool=None), points,
                           requests_factor=requests_factor)[0]["metrics"]["ITL ms"]["predicted"]
        r["itl_speed"] = solve_speed(itl_at, meas, r["cpu_speed"])
    return rows


def earlier_median_speeds(rows: list[dict[str, Any]], first: float, source: str) -> dict[str, float]:
    """Each schema-on report row's speed by the tracking rule (fit --speed-from-earlier): the
    median of the speeds (row[SPEED_SOURCES[source][0]]) of the rows whose first window began before
    its own; `first` where none had one. Keyed by json.dumps(row["windows"]) (compare's speed_of). A
    row's own measurement never sets its speed: a backtest of predict --cpu-speed-from-report on
    these sweeps (pre-registered: session P, fill speeds, 5.9% over 30 points; session R, ITL speeds,
    14.6% over 16; over 129 points of sessions I-R, post hoc, 7% from either source)."""
    key = SPEED_SOURCES[source][0]
    out: dict[str, float] = {}
    seen: list[float] = []
    on = [r for r in rows if r["arm"] == "on" and r.get("windows")]
    for r in sorted(on, key=lambda r: min(w[0] for w in r["windows"])):
        out[json.dumps(r["windows"])] = statistics.median(seen) if seen else first
        if r[key]:
            seen.append(r[key])
    return out


def speed_from_reports(paths: list[str], profile: Profile, source: str) -> tuple[float, list[float]]:
    """The median of the points' speeds (row[SPEED_SOURCES[source][0]]) over finished `maskcost report`
    files that were read against `profile`: the speed to predict other loads on the server they
    measured at (the median of a server's earlier points gave its next within 5.9% median over 30
    points pre-registered in session P, from fill speeds, 14.6% over 16 in session R from ITL
    speeds; 7% over 129 points of sessions I-R post hoc from either source). Raises ValueError
    naming the file for a report that is unreadable, made with another profile, or without such
    speeds."""
    key, how = SPEED_SOURCES[source]
    speeds: list[float] = []
    for path in paths:
        try:
            doc = json.loads(Path(path).read_text())
        except OSError as e:
            raise ValueError(f"--cpu-speed-from-report {path}: cannot read ({e.strerror or e})") from None
        except ValueError:
            raise ValueError(f"--cpu-speed-from-report {path}: not JSON (a `maskcost report` report.json)") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("profile"), dict) or \
                not isinstance(doc.get("rows"), list):
            raise ValueError(f"--cpu-speed-from-report {path}: not a `maskcost report` report.json (it has no "
                             f"profile and rows)")
        made_with, rows = doc["profile"], doc["rows"]
        if (made_with.get("name"), made_with.get("created_utc")) != (profile.name, profile.created_utc):
            raise ValueError(f"--cpu-speed-from-report {path}: read against profile '{made_with.get('name')}' "
                             f"({made_with.get('created_utc')}), not '{profile.name}' ({profile.created_utc}); a "
                             f"speed is relative to the profile it was read against")
        found = [r[key] for r in rows if isinstance(r, dict) and r.get(key)]
        if not found:
            raise ValueError(f"--cpu-speed-from-report {path}: no point with {how}")
        speeds += found
    return statistics.median(speeds), speeds
