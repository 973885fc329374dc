"""Where a vLLM server's CPU goes, thread by thread (run 3's diagnostic, README.md here).
  python threads.py PID SECONDS   (PID: the API server; its process tree is read, EngineCore included)
Prints each thread's CPU over SECONDS (utime + stime from /proc/PID/task/TID/stat), its name and process,
busiest first, then per process and in all: which threads burn the CPU a step beyond the model's parts
(docs/validation.md finding 15)."""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")


def tree(root: int) -> list[int]:
    """root and every descendant process."""
    parent = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                parent[int(d.name)] = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += [c for c, pp in parent.items() if pp == p]
    return out


def threads(pids: list[int]) -> dict[tuple[int, int], tuple[str, str, float]]:
    """(pid, tid) -> (process title, thread name, CPU seconds so far)."""
    got = {}
    for pid in pids:
        try:
            title = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")[:40]
            for t in Path(f"/proc/{pid}/task").iterdir():
                comm = (t / "comm").read_text().strip()
                f = (t / "stat").read_text().rsplit(")", 1)[1].split()
                got[(pid, int(t.name))] = (title, comm, (int(f[11]) + int(f[12])) / TICK)
        except OSError:
            continue
    return got


def main(root: int, seconds: float) -> None:
    pids = tree(root)
    a, t0 = threads(pids), time.monotonic()
    time.sleep(seconds)
    b, dt = threads(pids), time.monotonic() - t0
    rows = sorted(((b[k][2] - a[k][2]) / dt, k, b[k][0], b[k][1]) for k in b if k in a)[::-1]
    print(f"# {len(pids)} processes, {len(rows)} threads, {dt:.1f} s; CPUs busy by thread (busiest first)")
    for cpus, (pid, tid), title, comm in rows:
        if cpus >= 0.005:
            print(f"{cpus:6.3f}  pid {pid} tid {tid} {comm!r} ({title})")
    by = {}
    for cpus, (pid, _), title, _ in rows:
        by[(pid, title)] = by.get((pid, title), 0.0) + cpus
    for (pid, title), cpus in sorted(by.items(), key=lambda x: -x[1]):
        n = sum(1 for r in rows if r[1][0] == pid and r[0] >= 0.005)
        print(f"# process {pid} ({title}): {cpus:.3f} CPUs over {n} busy threads")
    print(f"# in all: {sum(r[0] for r in rows):.3f} CPUs")


if __name__ == "__main__":
    main(int(sys.argv[1]), float(sys.argv[2]))
