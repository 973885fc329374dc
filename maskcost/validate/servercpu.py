"""The CPU a server on this machine uses over a sweep point: its processes found by the port it listens
on (/proc/net/tcp, the socket's inode among a process's open files) and every process under them (vLLM's
API server and its engine core; SGLang's tokenizer manager, scheduler and detokenizer), their user +
system CPU time read from /proc/PID/stat before and after the point's window. A server elsewhere (or a
process this user cannot read) gives nothing: the point is recorded without it. Linux only."""
from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlparse

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1", "0.0.0.0")
LISTEN = "0A"  # the TCP state column of /proc/net/tcp


def _listening_inodes(port: int) -> set[str]:
    out = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if len(f) > 9 and f[3] == LISTEN and int(f[1].rsplit(":", 1)[1], 16) == port:
                out.add(f[9])
    return out


def _pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def _stat(pid: int) -> tuple[str, int, float] | None:
    """(command name, parent pid, user + system CPU seconds) of a process; None where it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    name, rest = raw[raw.index("(") + 1:raw.rindex(")")], raw[raw.rindex(")") + 2:].split()
    return name, int(rest[1]), (int(rest[11]) + int(rest[12])) / os.sysconf("SC_CLK_TCK")


def _socket_inodes(pid: int) -> set[str]:
    """The inodes of the sockets a process holds open (an fd closed while it is read is skipped)."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return set()
    out = set()
    for fd in fds:
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            out.add(link[8:-1])
    return out


def server_pids(base_url: str) -> list[int]:
    """The processes of the server at `base_url` when it runs on this machine: the one listening on its
    port and all below it; [] where it is not found here."""
    return server_tree(base_url)[0]


def server_tree(base_url: str) -> tuple[list[int], set[int]]:
    """server_pids, and of them the top ones listening on the port (vLLM's API server; not a child that
    holds the socket its parent opened, as a forked one does); ([], set()) where the server is not found here."""
    u = urlparse(base_url)
    if u.hostname not in LOCAL_HOSTS or not Path("/proc/net/tcp").exists():
        return [], set()
    inodes = _listening_inodes(u.port or (443 if u.scheme == "https" else 80))
    if not inodes:
        return [], set()
    roots = {pid for pid in _pids() if inodes & _socket_inodes(pid)}
    parent = {p: s[1] for p in _pids() if (s := _stat(p)) is not None}
    found, grew = set(roots), True
    while grew:
        kids = {p for p, pp in parent.items() if pp in found and p not in found}
        found |= kids
        grew = bool(kids)
    return sorted(found), {p for p in roots if parent.get(p) not in roots}


def _thread_seconds(pid: int) -> dict[int, float]:
    """tid -> user + system CPU seconds of each thread of a process (a thread gone while read is skipped)."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return {}
    out = {}
    for tid in tids:
        try:
            raw = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
        except OSError:
            continue
        rest = raw[raw.rindex(")") + 2:].split()
        out[int(tid)] = (int(rest[11]) + int(rest[12])) / os.sysconf("SC_CLK_TCK")
    return out


# pid -> (command name, CPU seconds so far, its threads' CPU seconds by tid)
CpuSeconds = dict[int, tuple[str, float, dict[int, float]]]


def cpu_seconds(pids: list[int]) -> CpuSeconds:
    """pid -> (command name, CPU seconds so far, its threads' CPU seconds by tid) of those still running."""
    return {p: (s[0], s[2], _thread_seconds(p)) for p in pids if (s := _stat(p)) is not None}


BUSY_THREAD_CPUS = 0.01  # a thread busier than this over a window is listed with its process
MAX_THREADS_LISTED = 64


def cpus_over(before: CpuSeconds, after: CpuSeconds, window_s: float,
              listening: set[int] = frozenset()) -> dict | None:
    """The CPUs each process kept busy over the window (CPU seconds / wall seconds), and their sum; with
    each process, the CPUs of its threads busier than BUSY_THREAD_CPUS, busiest first (a team of threads
    that spin, e.g. an OpenMP team after a parallel copy, shows there: docs/engines.md); the processes in
    `listening` (server_tree: the API server's) marked `listens` (calibrate/api_cpu.py reads its loop)."""
    if not before or not after or window_s <= 0:
        return None
    by = []
    for p in before:
        if p not in after:
            continue
        t0, t1 = before[p][2], after[p][2]
        threads = sorted((round((t1[t] - t0[t]) / window_s, 3) for t in t0 if t in t1), reverse=True)
        busy = [c for c in threads if c > BUSY_THREAD_CPUS]
        by.append({"pid": p, "name": after[p][0], "cpus": (after[p][1] - before[p][1]) / window_s,
                   "threads_busy": len(busy), "threads": busy[:MAX_THREADS_LISTED],
                   **({"listens": True} if p in listening else {})})
    return {"cpus": sum(x["cpus"] for x in by), "by_process": sorted(by, key=lambda x: -x["cpus"])}
