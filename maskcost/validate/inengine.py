"""What the probe (validate/probe.py) timed inside the server, point by point, beside the model's
breakdown of the same step; and the engine-fill factors a profile takes from it (the fill as the
live engine runs it over the fill the model builds from library timings)."""
from __future__ import annotations

import glob
import gzip
import os
import statistics
from dataclasses import replace
from typing import Any

import numpy as np

from ..calibrate.pool import list_schedule_us
from ..profile import EngineCpuPoint, EngineFill, EngineFillPoint, PoolExcessPoint, Profile
from ..model.engines import Vllm
from .probe import ENV_DIR

# a point's fill kind counts only with this many probed calls in its windows
MIN_CALLS = 20
NAMES = Vllm.probe_names  # the probed methods by role (the engine's class holds them beside its probe targets)
# the engine thread's work per step besides the fill (docs/engines.md Q1: step_with_batch_queue)
STEP_CPU_CALLS = tuple(NAMES[k] for k in ("schedule", "execute", "sample", "update"))


# the engine core's busy loop (vllm/v1/engine/core.py run_busy_loop): each turn drains the input
# queue, calls the step function and puts its outputs on the output queue; what it spends outside
# the step function is engine-thread CPU work too (it waits only inside the step, for the GPU)
STEP_FN = NAMES["step_fn"]


def loop_ms(st: dict[str, dict[str, float]]) -> float | None:
    """Per step: the busy loop's time outside the step function (the windows' span per step call
    less the call's mean). None: the step function not probed MIN_CALLS times."""
    s = st.get(STEP_FN)
    if s is None or s["calls"] < MIN_CALLS or not s["busy_fraction"] > 0:
        return None
    return max(0.0, s["mean_ms"] * (1.0 / s["busy_fraction"] - 1.0))


def step_cpu_ms(st: dict[str, dict[str, float]], with_loop: bool = False) -> float | None:
    """Per step: the sum of the mean of each of STEP_CPU_CALLS (each runs once per step); with_loop:
    plus the busy loop's time outside the step function (loop_ms). None: a call (or, with_loop, the
    step function) not probed MIN_CALLS times."""
    if not all(k in st and st[k]["calls"] >= MIN_CALLS for k in STEP_CPU_CALLS):
        return None
    calls = sum(st[k]["mean_ms"] for k in STEP_CPU_CALLS)
    if not with_loop:
        return calls
    loop = loop_ms(st)
    return None if loop is None else calls + loop


def read_probe(folder: str) -> dict[str, np.ndarray]:
    """Every probe record under `folder` (probe-PID.tsv, or .tsv.gz) as columns: name, thread,
    pid, start_s (Unix), dur_ms, n, and pool_fill (pool_fills: found once here, read per window).
    A line that does not parse is a one-line error naming the file and the line."""
    files = sorted(glob.glob(os.path.join(folder, "probe-*.tsv")) + glob.glob(os.path.join(folder, "probe-*.tsv.gz")))
    if not files:
        raise ValueError(f"--probe {folder}: no probe-*.tsv files (was the server started with {ENV_DIR} set?)")
    names, threads, pids, start, dur, n = [], [], [], [], [], []
    for path in files:
        pid = int(os.path.basename(path).split("-")[1].split(".")[0])
        with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
            for k, line in enumerate(f, 1):
                if line.startswith("#") or not line.strip():
                    continue
                try:
                    a, b, c, d, e = line.rstrip("\n").split("\t")
                    start.append(int(c) / 1e9)
                    dur.append(int(d) / 1e6)
                    n.append(int(e))
                except ValueError:
                    raise ValueError(f"--probe {path}:{k}: not a probe record (name, thread, start ns, "
                                     f"duration ns, n)") from None
                names.append(a)
                threads.append(b)
                pids.append(pid)
    cols = {"name": np.array(names), "thread": np.array(threads), "pid": np.array(pids),
            "start_s": np.array(start), "dur_ms": np.array(dur), "n": np.array(n)}
    cols["pool_fill"] = pool_fills(cols)
    return cols


def _in_windows(probe: dict[str, np.ndarray], windows: list[tuple[float, float]]) -> np.ndarray:
    """The records that started inside any of the (start, end) windows (Unix s)."""
    win = np.zeros(probe["name"].size, bool)
    for t0, t1 in windows:
        win |= (probe["start_s"] >= t0) & (probe["start_s"] < t1)
    return win


def _pool_tasks(probe: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The fill pool's tasks (the probe records _fill_bitmasks only for a batch of more than one
    row: a pool task), start (s) and duration (ms), sorted by start."""
    task = probe["name"] == NAMES["pool_task"]
    order = np.argsort(probe["start_s"][task])
    return probe["start_s"][task][order], probe["dur_ms"][task][order]


def _tasks_inside(t_start: np.ndarray, s: np.ndarray, d_ms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For calls starting at s (s) lasting d_ms: the index range [lo, hi) of the tasks that started inside each."""
    return np.searchsorted(t_start, s), np.searchsorted(t_start, s + d_ms / 1e3)


def pool_fills(probe: dict[str, np.ndarray]) -> np.ndarray:
    """The whole-step fills (grammar_bitmask) that used vLLM's pool: a pool task started inside the
    call. Not the row count: with spec decoding configured, or max_num_seqs <= 128, more than
    Vllm.parallel_fill_threshold rows fill serially (model/engines.py Vllm.uses_pool)."""
    fill = probe["name"] == NAMES["fill"]
    t_start, _ = _pool_tasks(probe)
    lo, hi = _tasks_inside(t_start, probe["start_s"], probe["dur_ms"])
    return fill & (hi > lo) & (probe["n"] > Vllm.parallel_fill_threshold)


def window_stats(probe: dict[str, np.ndarray], windows: list[tuple[float, float]]) -> dict[str, dict[str, float]]:
    """Per probed method, the calls that started inside any of the (start, end) windows: count,
    mean and p50 duration (ms), mean n, and the busy fraction of the windows' time. The whole-step
    fill splits into its serial calls and its pool calls (the probe's pool_fill column)."""
    win = _in_windows(probe, windows)
    span = max(sum(t1 - t0 for t0, t1 in windows), 1e-9)
    groups = {str(x): probe["name"] == x for x in np.unique(probe["name"][win])}
    fill = probe["name"] == NAMES["fill"]
    groups["grammar_bitmask serial"] = fill & (probe["n"] > 0) & ~probe["pool_fill"]
    groups["grammar_bitmask pool"] = probe["pool_fill"]
    out = {}
    for name, sel in groups.items():
        m = sel & win
        if m.any():
            d = probe["dur_ms"][m]
            out[name] = {"calls": int(m.sum()), "mean_ms": float(d.mean()), "p50_ms": float(np.median(d)),
                         "n_mean": float(probe["n"][m].mean()), "busy_fraction": float(d.sum() / 1e3 / span)}
    return out


def pool_excess(probe: dict[str, np.ndarray], windows: list[tuple[float, float]],
                workers: int) -> tuple[float, float, float] | None:
    """(mean tasks, mean ms, ms per row) over the pool fills that started in the windows: each
    fill's wall (grammar_bitmask) beyond the list schedule of its own tasks (the _fill_bitmasks
    calls that started inside it, their measured durations) on `workers` threads; and the tasks'
    time per row filled. None: under MIN_CALLS fills."""
    fills = _in_windows(probe, windows) & probe["pool_fill"]
    if fills.sum() < MIN_CALLS:
        return None
    t_start, t_dur = _pool_tasks(probe)
    los, his = _tasks_inside(t_start, probe["start_s"][fills], probe["dur_ms"][fills])
    chunks = his - los
    excess = [d - list_schedule_us(t_dur[lo:hi], workers) for d, lo, hi in zip(probe["dur_ms"][fills], los, his)]
    task_ms = sum(float(t_dur[lo:hi].sum()) for lo, hi in zip(los, his))
    return float(np.mean(chunks)), float(np.mean(excess)), task_ms / int(probe["n"][fills].sum())


def _mean_or_none(st: dict[str, dict[str, float]], key: str) -> float | None:
    return st[key]["mean_ms"] if key in st and st[key]["calls"] >= MIN_CALLS else None


def attach(rows: list[dict[str, Any]], probe: dict[str, np.ndarray]) -> list[dict[str, Any]]:
    """Give each report row with sweep windows its probe statistics (row["inengine"]) and the speed
    at which the model's fill meets the engine's there (row["fill_speed"], None where there is none)."""
    for r in rows:
        if r.get("windows"):
            r["inengine"] = window_stats(probe, r["windows"])
            r["fill_speed"] = fill_speed(r)
    return rows


def fill_kind(breakdown: dict[str, Any]) -> str:
    """Which fill the model's steps at a point mostly make: "pool" or "serial"."""
    return "pool" if breakdown["pool_step_fraction"] > 0.5 else "serial"


def fill_speed(row: dict[str, Any]) -> float | None:
    """The CPU speed at which the model's fill per step equals the fill the probe timed inside the
    engine at a schema-on report row: the row's speed x model / measured, the pool fills where the
    model's steps mostly use the pool, else the serial ones (fit --speed-from-probe; session M:
    read there, the committed predictions were within 2% median, 16% at the bench speed). None where
    the row has no such fill in its windows."""
    st, b = row.get("inengine"), row["predicted_breakdown"]
    if row["arm"] != "on" or not st or b is None:
        return None
    kind = fill_kind(b)
    meas = _mean_or_none(st, f"grammar_bitmask {kind}")
    model = b[f"{kind}_fill_step_ms"]
    return row["cpu_speed"] * model / meas if meas and model else None


def fit_engine_fill(profile: Profile, backend: str, rows: list[dict[str, Any]], method: str,
                    probe: dict[str, np.ndarray], pool_workers: int, with_loop: bool = False,
                    serial_by_rows: bool = False) -> Profile:
    """The profile with `backend`'s engine_fill set from report rows that carry probe statistics
    and the model's breakdown made without engine-fill factors (at the row's `cpu_speed`, this
    host's speed relative to the profile's then): per fill kind (serial, pool), the median over the
    points that had at least MIN_CALLS such fills of in-engine / model; and the engine thread's
    other work per step by running batch, and the pool's in-engine excess by task count
    (pool_excess, on `pool_workers` threads), both times the row's cpu_speed (the profile host's
    time). with_loop: the engine thread's work includes the busy loop's time outside the step
    function (step_cpu_ms). serial_by_rows: the serial factor follows the rows
    (serial_rows_exponent)."""
    pts, cpu, exc, task = [], [], [], []
    for r in rows:
        st, b = r.get("inengine"), r["predicted_breakdown"]
        if r["arm"] != "on" or not st or b is None:
            continue
        cpu_speed = r["cpu_speed"]
        serial, pool = _mean_or_none(st, "grammar_bitmask serial"), _mean_or_none(st, "grammar_bitmask pool")
        pe = pool_excess(probe, r["windows"], pool_workers)
        if pe is not None:
            exc.append(PoolExcessPoint(pe[0], max(0.0, pe[1]) * cpu_speed))
            if b["fill_ms"] and r["predicted_structured_rows"]:  # the model's fill work per row
                task.append(pe[2] / (b["fill_ms"] / r["predicted_structured_rows"]))
        c = step_cpu_ms(st, with_loop)
        if c is not None and r["metrics"]["running"]["measured"]:
            cpu.append(EngineCpuPoint(r["metrics"]["running"]["measured"], c * cpu_speed))
        pts.append(EngineFillPoint(r["concurrency"], r["metrics"]["running"]["measured"] or 0.0,
                                   serial, b["serial_fill_step_ms"] if serial is not None else None,
                                   pool, b["pool_fill_step_ms"] if pool is not None else None))
    if not pts:
        raise ValueError("--fit-engine-fill: no schema-on point has probe records in its window (sweep "
                         "with this maskcost against a server started with the probe: maskcost probe-site)")

    def factor(pairs: list[tuple[float | None, float | None]]) -> float:
        ratios = [m / p for m, p in pairs if m is not None and p]
        return statistics.median(ratios) if ratios else 1.0
    ef = EngineFill(method, factor([(p.serial_ms, p.serial_model_ms) for p in pts]),
                    factor([(p.pool_ms, p.pool_model_ms) for p in pts]), tuple(pts),
                    tuple(sorted(cpu, key=lambda c: c.batch)), tuple(sorted(exc, key=lambda c: c.chunks)),
                    statistics.median(task) if task else 1.0)
    if serial_by_rows:  # the least-squares line: its level at the reference rows, its slope
        level, slope = serial_rows_line(ef)
        ef = replace(ef, serial_factor=level, serial_rows_exponent=slope)
    b = profile.backends[backend]
    return replace(profile, backends={**profile.backends, backend: replace(b, engine_fill=ef)})


def serial_rows_line(ef: EngineFill) -> tuple[float, float]:
    """The least-squares line of log(in-engine / model serial fill) on log(running) over the points
    with serial fills: its level at the geometric mean of their running (the factor there) and its
    slope (how the factor moves with the step's rows). A one-line error with fewer than three such
    points at two or more batch sizes."""
    pairs = [(p.running, p.serial_ms / p.serial_model_ms) for p in ef.serial_points()]
    if len(pairs) < 3 or len({round(r) for r, _ in pairs}) < 2:
        raise ValueError(f"--fit-serial-by-rows: {len(pairs)} points with serial fills; the slope wants three "
                         f"or more at two or more batch sizes (sweep more concurrencies of 128 and below)")
    x, y = np.log([r for r, _ in pairs]), np.log([f for _, f in pairs])
    return float(np.exp(y.mean())), float(np.polyfit(x, y, 1)[0])


def describe(ef: EngineFill) -> str:
    """One line for people: the fill factors the model uses, the engine thread's work per step."""
    pool = (f"pool tasks x{ef.pool_task_factor:.3f} + excess "
            f"{', '.join(f'{c.ms:.1f} ms at {c.chunks:.1f} tasks' for c in ef.pool_excess_points)}"
            if ef.pool_excess_points else f"pool x{ef.pool_factor:.3f}")
    rows = f" x (rows / ref)^{ef.serial_rows_exponent:.3f}" if ef.serial_rows_exponent else ""
    return (f"engine fill x{ef.serial_factor:.3f}{rows} serial, {pool} ({len(ef.points)} points); engine CPU per step "
            f"{', '.join(f'{c.ms:.1f} ms at {c.batch:.0f}' for c in ef.cpu_points) or 'not timed'}")


def without_engine_fill(profile: Profile, backend: str) -> Profile:
    b = profile.backends[backend]
    return replace(profile, backends={**profile.backends, backend: replace(b, engine_fill=None)})


def cpu_pair(st: dict[str, dict[str, float]], b: dict[str, Any]) -> str:
    c = step_cpu_ms(st)
    if c is None:
        return ""
    m = b.get("advance_ms", 0.0) + b.get("cpu_overhead_ms", 0.0) if b else None
    return f"{c:.2f} / {m:.2f}" if m is not None else f"{c:.2f}"


def _ms(st: dict[str, dict[str, float]], key: str) -> str:
    return f"{st[key]['mean_ms']:.2f}" if key in st else ""


def report_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The report's in-engine section: per point, what the probe timed (mean ms per call) beside
    the model's breakdown, and where TTFT goes (client, API server, engine queue + prefill)."""
    lines = ["## Inside the engine (probe: validate/probe.py)", "",
             "Mean ms per call over the point's windows, probe / model. Fill: the whole step's "
             "`grammar_bitmask`, on steps that fill serially and on steps that use the pool (model: "
             "`serial_fill_step_ms`, `pool_fill_step_ms`). Engine CPU: the engine thread's other work per "
             "step, schedule + launch + sample + update (model: advance + engine CPU overhead). Update: `update_from_output` (model: advance). "
             "Launch: `execute_model` (the forward's CPU side). API busy: share of the window the API "
             "server spent in `process_outputs`. TTFT: the client's p50; the server's mean from its "
             "arrival; the engine's queue + prefill mean. Fill speed: the CPU speed at which the model's fill "
             "equals the engine's (fill_speed; against the profile's host).", "",
             "| arm | conc | running | fill serial | fill pool | fill speed | engine CPU | update / model advance | "
             "schedule | launch | sample | API busy % | chat create | TTFT client p50 | server | queue + prefill |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    speeds = []
    for r in rows:
        st = r.get("inengine")
        if not st:
            continue
        b = r["predicted_breakdown"] or {}
        sv = r.get("server_ms", {})

        def pair(key: str, model_key: str) -> str:
            m = b.get(model_key)
            return f"{_ms(st, key)} / {m:.2f}" if key in st and m is not None else _ms(st, key)
        api = st.get(NAMES["api_outputs"])
        qp = sv["queue"] + sv["prefill"] if "queue" in sv and "prefill" in sv else None
        fs = r["fill_speed"]
        speeds += [fs] if fs else []
        cells = [r["arm"], str(r["concurrency"]), f"{r['metrics']['running']['measured'] or 0:.0f}",
                 pair("grammar_bitmask serial", "serial_fill_step_ms"), pair("grammar_bitmask pool", "pool_fill_step_ms"),
                 f"{fs:.3f}" if fs else "", cpu_pair(st, b), pair(NAMES["update"], "advance_ms"), _ms(st, NAMES["schedule"]),
                 _ms(st, NAMES["execute"]), _ms(st, NAMES["sample"]),
                 f"{100 * api['busy_fraction']:.0f}" if api else "",
                 _ms(st, NAMES["api_admit"]),
                 f"{r['metrics']['TTFT p50 ms']['measured'] or 0:.0f}",
                 f"{sv['ttft']:.0f}" if "ttft" in sv else "", f"{qp:.0f}" if qp is not None else ""]
        lines.append("| " + " | ".join(cells) + " |")
    if speeds:
        lines += ["", f"The engine filled as fast as the model at CPU speed {min(speeds):.3f}-{max(speeds):.3f} "
                      f"(median {statistics.median(speeds):.3f}) over these points: `predict --cpu-speed` at that "
                      f"speed for other loads on this server, or `predict --cpu-speed-from-report` with this "
                      f"report.json and --speed-source fill (the median of the points' speeds; on the H200 VM a server's earlier points "
                      f"predicted its next within 5.9% median over 30 points, pre-registered, 47.4% at the idle "
                      f"bench's speed (validation/h200-vllm-0.25.1/p/); 6.9% over 129 points of sessions I-R, "
                      f"9.0% from a server's first two points alone: report on every point run so far)."]
    return lines + [""]
