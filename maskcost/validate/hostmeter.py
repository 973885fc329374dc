"""A meter that runs beside a live server (pin it to a core of its own) and says, every interval,
how fast this host's CPU is for grammar work right then, and what the server's threads did:

- `bench_us`: calibrate.host's single-thread replay, the figure a profile's host carries, so that
  profile.host.bench_us / bench_us is the host's speed at that moment (`fit --speed-from-meter`
  predicts each point at the speed measured during its own windows);
- `batch_row_us`: a whole-batch serial fill per row (calibrate.host.bench_batch_row_us: 64
  matchers interleaved, as vLLM's engine thread fills them), beside the probe's in-engine fill;
- each CPU's busy and steal share of the interval (/proc/stat; steal: the hypervisor ran
  something else on that virtual CPU);
- each thread of the server's processes that ran: its CPU share and the CPU it last ran on
  (/proc/PID/task/TID/stat).

One JSON line per interval, appended and flushed as it goes (a killed meter loses nothing).
`maskcost report --hostmeter FILE` joins the lines to the sweep points by time. Linux only.

What it measures is the speed of its own virtual CPU. On the H200 VM (sessions K and L,
validation/h200-vllm-0.25.1/k, l) that moved between 51 and 93 ms within seconds with no steal
time, while the engine's fill per row did not follow it: per-point meter speeds made predictions
no better (K) or worse (L) than one bench before the server. It stays a diagnostic: where the
server's threads ran, how busy the host was, and the engine's fill beside a clean replay."""
from __future__ import annotations

import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

CLK_TCK = os.sysconf("SC_CLK_TCK")
SCHEMA_VERSION = 1


def cpu_ticks() -> dict[str, list[int]]:
    """Per CPU (cpu0, cpu1, ...): /proc/stat's user nice system idle iowait irq softirq steal."""
    out = {}
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("cpu") and line[3].isdigit():
                name, *vals = line.split()
                out[name] = [int(v) for v in vals[:8]]
    return out


def cpu_shares(prev: dict[str, list[int]], cur: dict[str, list[int]]) -> dict[str, list[float]]:
    """Busy and steal % of each CPU between two cpu_ticks() readings (busy: not idle, not iowait,
    not steal)."""
    busy, steal = [], []
    for name in sorted(cur, key=lambda c: int(c[3:])):
        d = [c - p for c, p in zip(cur[name], prev.get(name, cur[name]))]
        tot = max(sum(d), 1)
        steal.append(100.0 * d[7] / tot)
        busy.append(100.0 * (tot - d[3] - d[4] - d[7]) / tot)
    return {"busy_pct": busy, "steal_pct": steal}


def _stat_fields(path: str) -> tuple[str, list[str]] | None:
    """(comm, the fields after it) of a /proc stat file; None if the task is gone."""
    try:
        with open(path) as f:
            s = f.read()
    except OSError:
        return None
    head, _, rest = s.rpartition(")")
    return head.partition("(")[2], rest.split()


def server_pids(match: str) -> list[int]:
    """Processes whose command line or name holds `match` (case-insensitive), this one excepted."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{d}/comm") as f:
                cmd += " " + f.read()
        except OSError:
            continue
        if match.lower() in cmd.lower():
            out.append(int(d))
    return out


def thread_ticks(pids: list[int]) -> dict[tuple[int, int], tuple[str, int, int]]:
    """(pid, tid) -> (thread name, user + system ticks, the CPU it last ran on)."""
    out = {}
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            got = _stat_fields(f"/proc/{pid}/task/{tid}/stat")
            if got is None:
                continue
            comm, f = got  # f[0] is field 3 (state): utime 14, stime 15, processor 39
            out[(pid, int(tid))] = (comm, int(f[11]) + int(f[12]), int(f[36]))
    return out


def run_meter(out: Path, vocab, match: str = "vllm", interval_s: float = 1.0, duration_s: float | None = None,
              rows: int = 64) -> None:
    """Append one record per interval to `out` until `duration_s` has passed (or the process is
    killed). The first interval only warms up (backend, compiled grammars, matchers)."""
    from ..calibrate.backends import XGrammarBackend
    from ..calibrate.host import bench_batch_row_us, bench_us
    if not os.path.exists("/proc/stat"):
        raise ValueError("hostmeter: /proc/stat not found (the meter reads Linux's /proc)")
    be = XGrammarBackend(vocab)
    state: dict[str, Any] = {}
    bench_us(vocab, rounds=1, be=be)
    bench_batch_row_us(vocab, rows=rows, steps=1, be=be, state=state)
    t_end = None if duration_s is None else time.time() + duration_s
    prev_cpu, prev_thr, prev_t = cpu_ticks(), thread_ticks(server_pids(match)), time.time()
    with open(out, "a") as f:
        f.write(json.dumps({"schema_version": SCHEMA_VERSION, "meter": {
            "interval_s": interval_s, "match": match, "rows": rows, "vocab": vocab.name, "pid": os.getpid(),
            "affinity": sorted(os.sched_getaffinity(0))}}) + "\n")
        while t_end is None or time.time() < t_end:
            b = bench_us(vocab, rounds=3, be=be)
            br = bench_batch_row_us(vocab, rows=rows, steps=4, be=be, state=state)
            time.sleep(max(0.0, interval_s - (time.time() - prev_t)))
            now, cpu, thr = time.time(), cpu_ticks(), thread_ticks(server_pids(match))
            dt = max(now - prev_t, 1e-3)
            threads = []
            for key, (comm, ticks, proc) in thr.items():
                d = ticks - prev_thr[key][1] if key in prev_thr else 0
                if d > 0:
                    threads.append({"pid": key[0], "tid": key[1], "name": comm,
                                    "cpu_pct": round(100.0 * d / CLK_TCK / dt, 1), "cpu": proc})
            rec = {"t_unix_s": now, "interval_s": dt, "bench_us": b, "batch_row_us": br,
                   **cpu_shares(prev_cpu, cpu), "threads": threads}
            f.write(json.dumps(rec) + "\n")
            f.flush()
            prev_cpu, prev_thr, prev_t = cpu, thr, now


def read_meter(path: str) -> list[dict[str, Any]]:
    """The interval records of a meter file (.jsonl or .jsonl.gz); a bad line is a one-line error
    (sweep.read_raw_records reads the lines)."""
    from ..records import read_raw_records
    try:
        recs = [r for r in read_raw_records(path, "--hostmeter") if "t_unix_s" in r]
    except OSError as e:
        raise ValueError(f"--hostmeter {path}: {e.strerror}") from None
    if not recs:
        raise ValueError(f"--hostmeter {path}: no interval records (was `maskcost hostmeter` running?)")
    return recs


def window_meter(recs: list[dict[str, Any]], windows: list[tuple[float, float]]) -> dict[str, Any] | None:
    """The meter over a point's windows: median bench_us and batch_row_us, mean busy and steal % over
    all CPUs, and the busiest server thread of each name (mean CPU %, the CPUs it ran on). A record
    counts when its interval ended inside a window. None: no record there."""
    inside = [r for r in recs if any(t0 < r["t_unix_s"] <= t1 for t0, t1 in windows)]
    if not inside:
        return None
    threads: dict[str, list[dict[str, Any]]] = {}
    for r in inside:
        for t in r["threads"]:
            threads.setdefault(t["name"], []).append(t)
    top = {name: {"cpu_pct": sum(t["cpu_pct"] for t in ts) / len(inside), "cpus": sorted({t["cpu"] for t in ts})}
           for name, ts in threads.items()}
    return {"records": len(inside), "bench_us": statistics.median(r["bench_us"] for r in inside),
            "batch_row_us": statistics.median(r["batch_row_us"] for r in inside),
            "busy_pct": statistics.mean(statistics.mean(r["busy_pct"]) for r in inside),
            "steal_pct": statistics.mean(statistics.mean(r["steal_pct"]) for r in inside),
            "steal_pct_max_cpu": max(max(r["steal_pct"]) for r in inside),
            "threads": dict(sorted(top.items(), key=lambda kv: -kv[1]["cpu_pct"])[:12])}


def attach(rows: list[dict[str, Any]], recs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Give each report row with sweep windows its meter summary (row["meter"])."""
    for r in rows:
        if r.get("windows"):
            r["meter"] = window_meter(recs, r["windows"])
    return rows


def speed_of(recs: list[dict[str, Any]], profile_bench_us: float, what: str):
    """A function of a point's windows: the host's speed then relative to a profile's host
    (profile_bench_us / the meter's median bench_us); a clear error where the meter has no record."""
    def speed(windows: list[tuple[float, float]]) -> float:
        m = window_meter(recs, windows)
        if m is None:
            raise ValueError(f"{what}: no meter record inside the point's windows "
                             f"{[(round(a), round(b)) for a, b in windows]}")
        return profile_bench_us / m["bench_us"]
    return speed


def report_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The report's meter section: per point, the host's speed beside the engine's own fill."""
    lines = ["## The host during each point (maskcost hostmeter)", "",
             "bench: the single-thread replay a profile's host carries (median µs over the point); speed: "
             "the profile host's bench over it (the speed the point was predicted at with --speed-from-meter). "
             "Batch row: µs per row of the meter's 64-row serial fill; in-engine row: the probe's serial "
             "`grammar_bitmask` per row. Busy and steal: mean % over all CPUs (steal: the hypervisor ran "
             "something else). Top threads: the server's threads by name (threads that share a name summed), "
             "CPU % and the first CPUs they ran on.", "",
             "| arm | conc | speed used | bench µs | batch row µs | in-engine row µs | ratio | busy % | steal % "
             "| steal max CPU % | top threads (CPU %, CPUs) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        m = r.get("meter")
        if not m:
            continue
        ie = r.get("inengine") or {}
        st, pool = ie.get("grammar_bitmask serial"), ie.get("grammar_bitmask pool")
        serial_steps = st and st["n_mean"] and (pool is None or pool["calls"] < st["calls"])
        row_us = 1e3 * st["mean_ms"] / st["n_mean"] if serial_steps else None  # pool points: see the pool
        top = ", ".join(f"{k} {v['cpu_pct']:.0f} ({','.join(map(str, v['cpus'][:4]))})"
                        for k, v in list(m["threads"].items())[:4])
        ratio = f"{row_us / m['batch_row_us']:.2f}" if row_us else ""
        lines.append(f"| {r['arm']} | {r['concurrency']} | {r['cpu_speed']:.3f} | {m['bench_us']:.0f} | "
                     f"{m['batch_row_us']:.0f} | {f'{row_us:.0f}' if row_us else ''} | {ratio} | {m['busy_pct']:.0f} | "
                     f"{m['steal_pct']:.1f} | {m['steal_pct_max_cpu']:.1f} | {top} |")
    return lines + [""]
