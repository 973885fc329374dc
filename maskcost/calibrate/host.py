"""Where a calibration ran: CPU model, the cores this process may use, what the engine would see as
cpu_count, package versions, and a fixed single-thread benchmark used to scale fill and compile
times from this CPU to another (the same xgrammar replay every time)."""
from __future__ import annotations

import multiprocessing
import os
import platform
import statistics
import time
from importlib import metadata

from ..profile import HostInfo

PACKAGES = ("maskcost", "xgrammar", "llguidance", "apache-tvm-ffi", "quicktok-v1", "simpy", "numpy",
            "torch", "vllm", "sglang")


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def package_versions() -> dict[str, str]:
    out = {}
    for p in PACKAGES:
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            pass
    return out


def bench_us(vocab, rounds: int = 30, be=None) -> float:
    """Median µs of one fresh-matcher replay of the 'bounded' tier's instance through xgrammar:
    fill + accept for every token, single thread. The ratio of two hosts' bench_us scales traces.
    `be`: an XGrammarBackend on `vocab` to reuse (its compile cache keeps the grammar)."""
    from .backends import XGrammarBackend
    from .fill import output_text
    from .schemas import TIERS
    from .cache import bench_grammar
    be = be or XGrammarBackend(vocab)
    entry = TIERS["bounded"]
    compiled = bench_grammar(be, entry.schema)
    tokens = vocab.encode(output_text(entry.examples[0])) + [vocab.eos_id]
    bm = be.bitmask(1)
    times = []
    for _ in range(rounds):
        m = be.matcher(compiled)
        t0 = time.perf_counter_ns()
        for t in tokens:
            be.fill(m, bm, 0)
            be.accept(m, t)
        times.append((time.perf_counter_ns() - t0) / 1e3)
    return statistics.median(times)


def bench_batch_row_us(vocab, rows: int = 64, steps: int = 8, be=None, state: dict | None = None) -> float:
    """Median µs per row of a whole-batch serial fill, the way vLLM's engine thread fills it:
    `rows` matchers of the 'flat' and 'bounded' tiers (alternating), each at its own place in its
    instance, one bitmask of `rows` rows filled row by row, then one token accepted per row; a row
    that reaches its end starts again. `state` (a dict) keeps the matchers between calls, so a
    meter that calls this every second walks on through the instances."""
    from .backends import XGrammarBackend
    from .fill import output_text
    from .schemas import TIERS
    state = {} if state is None else state
    if not state:
        be = be or XGrammarBackend(vocab)
        tiers = []
        for name in ("flat", "bounded"):
            compiled, _ = be.compile(TIERS[name].schema, cache=True)
            tiers.append((compiled, vocab.encode(output_text(TIERS[name].examples[0])) + [vocab.eos_id]))
        state.update(be=be, tiers=tiers, bm=be.bitmask(rows), rows=[])
        for i in range(rows):
            compiled, tokens = tiers[i % 2]
            m, pos = be.matcher(compiled), i * len(tokens) // rows  # spread the rows over the instance
            for t in tokens[:pos]:
                be.accept(m, t)
            state["rows"].append([m, pos, i % 2])
    be, tiers, bm = state["be"], state["tiers"], state["bm"]
    times = []
    for _ in range(steps):
        t0 = time.perf_counter_ns()
        for i, r in enumerate(state["rows"]):
            be.fill(r[0], bm, i)
        times.append((time.perf_counter_ns() - t0) / 1e3 / len(state["rows"]))
        for r in state["rows"]:
            compiled, tokens = tiers[r[2]]
            be.accept(r[0], tokens[r[1]])
            r[1] += 1
            if r[1] == len(tokens):
                r[0], r[1] = be.matcher(compiled), 0
    return statistics.median(times)


def speed_vs(profile_bench_us: float, vocab) -> float:
    """This host's single-thread speed relative to a profile's host (> 1: faster): the ratio of the
    fixed benchmark. Times measured here, multiplied by it, are times on the profile's host."""
    return profile_bench_us / bench_us(vocab)


def host_info(vocab) -> HostInfo:
    return HostInfo(cpu_model=cpu_model(), nproc=usable_cpus(), os_cpu_count=multiprocessing.cpu_count(),
                    bench_us=bench_us(vocab), platform=f"{platform.system()} {platform.release()} "
                                                      f"Python {platform.python_version()}")
