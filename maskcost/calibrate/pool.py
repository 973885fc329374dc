"""How the fill scales on threads on this CPU, measured the way the engines run it:
vLLM's ThreadPoolExecutor over chunks of 16 rows (xgrammar and guidance alike), and SGLang's
llguidance batched fill on a Rust (rayon) pool. The model takes the measured inflation over
ideal list-scheduling, so GIL time, contention and core count are this host's, not assumed."""
from __future__ import annotations

import heapq
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Sequence

from .backends import Backend
from .host import usable_cpus
from ..profile import PoolPoint
from ..model.engines import Vllm


def list_schedule_us(job_us: Sequence[float], workers: int) -> float:
    """Makespan of jobs taken in order by the first free of `workers` identical workers (FIFO pool)."""
    free = [0.0] * max(1, workers)
    for j in job_us:
        t = heapq.heappop(free)
        heapq.heappush(free, t + j)
    return max(free)


def _timed(fn, repeats: int) -> float:
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        fn()
        out.append((time.perf_counter_ns() - t0) / 1e3)
    return statistics.median(out)


def _chunks(rows: int) -> list[list[int]]:
    """vLLM's fill tasks over `rows` bitmask rows: 16 rows each, in order."""
    k = Vllm.fill_chunk_rows
    return [list(range(i, min(i + k, rows))) for i in range(0, rows, k)]


def _distinct(matchers: list[Any], rows: Sequence[int]) -> None:
    """A timed step fills each row from its own matcher, as the engine does (one matcher per
    request): two pool threads on one native matcher is a data race (xgrammar crashes, llguidance
    raises 'Already borrowed'), and never what a server runs."""
    if len(matchers) < max(rows):
        raise ValueError(f"the pool measurement needs {max(rows)} distinct matchers, got {len(matchers)}")
    if len({id(m) for m in matchers[:max(rows)]}) < max(rows):
        raise ValueError("the pool measurement was given one matcher for two rows")


def _repeats(rows: int, repeats: int) -> int:
    """Timed runs of a step of `rows` rows: fewer for the big steps, whose every run is long (at least
    128 fills) and whose median is steady on fewer; the small steps, a few ms a run, keep `repeats`."""
    return repeats if rows <= 64 else min(repeats, 3)


def measure_vllm_pool(backend: Backend, matchers: list[Any], workers: Sequence[int], rows: Sequence[int],
                      repeats: int = 5) -> list[PoolPoint]:
    """Serial loop vs chunks of 16 on ThreadPoolExecutor(W) (vllm/v1/structured_output/__init__.py:240-262);
    row i of every step is `matchers[i]` (distinct objects)."""
    _distinct(matchers, rows)
    bitmask = backend.bitmask(max(rows))
    points = []
    for b in rows:
        ms = matchers[:b]
        reps = _repeats(b, repeats)
        chunks = _chunks(b)

        def fill_chunk(idx: list[int]) -> None:
            for r in idx:
                backend.fill(ms[r], bitmask, r)

        def serial_run() -> list[float]:  # the serial loop, each chunk's part of it timed
            out = []
            for c in chunks:
                t0 = time.perf_counter_ns()
                fill_chunk(c)
                out.append((time.perf_counter_ns() - t0) / 1e3)
            return out

        runs = [serial_run() for _ in range(reps)]
        serial = statistics.median(sum(r) for r in runs)
        chunk_us = [statistics.median(r[i] for r in runs) for i in range(len(chunks))]
        for w in workers:
            with ThreadPoolExecutor(max_workers=w) as pool:
                def run() -> None:
                    for f in [pool.submit(fill_chunk, c) for c in chunks]:
                        f.result()
                run()  # start the threads
                par = _timed(run, reps)
            # ideal: the same chunks on min(W, cores) perfect workers; the rest is GIL and contention
            points.append(PoolPoint(w, b, serial, par, list_schedule_us(chunk_us, min(w, usable_cpus()))))
    return points


# vllm#51331 (open at 0.33.0): each 16-row chunk filled by one BatchGrammarMatcher(max_threads=1) call
BATCH_FILL_ROWS = (128, 256)  # (the cheapest max(BATCH_FILL_ROWS) states of those given are used)


def measure_batch_fill_saving(backend: Backend, matchers: list[Any], rows: Sequence[int] = BATCH_FILL_ROWS,
                              repeats: int = 7) -> dict[str, float]:
    """What xgrammar's batch API saves a row against one call a row: the same rows, the same matchers in
    the same states (a fill does not move a matcher), in vLLM's 16-row chunks, each chunk either a loop of
    `fill_next_token_bitmask` calls (vLLM 0.25.1-0.33.0) or one `batch_fill_next_token_bitmask` of a
    single-threaded BatchGrammarMatcher (vllm#51331). Returns per-row µs of each, and their difference
    (`saving_us`, the median over the row counts), on this host. Give it more matchers than rows (4x):
    the cheapest are used."""
    xgr = backend.xgr
    batch = xgr.BatchGrammarMatcher(max_threads=1)
    bitmask = backend.bitmask(max(rows))
    # the call's overhead does not depend on the state, the fill's work does (1 us to 0.6 ms a row): measured
    # on the states whose fill is cheapest, where the overhead is not lost in the work's spread
    one = backend.bitmask(1)

    def fill_us(m) -> float:
        t = []
        for _ in range(2):
            t0 = time.perf_counter_ns()
            backend.fill(m, one, 0)
            t.append((time.perf_counter_ns() - t0) / 1e3)
        return min(t)
    matchers = [m for _, _, m in sorted((fill_us(m), i, m) for i, m in enumerate(matchers))][:max(rows)]
    _distinct(matchers, rows)
    per_row, batched = [], []
    for b in rows:
        ms = matchers[:b]
        chunks = _chunks(b)

        def rows_run() -> None:
            for c in chunks:
                for r in c:
                    backend.fill(ms[r], bitmask, r)

        def batch_run() -> None:
            for c in chunks:
                batch.batch_fill_next_token_bitmask([ms[r] for r in c], bitmask, c)
        rows_run(), batch_run()  # warm
        # interleaved, so that both see the host at the same speed
        t_rows, t_batch = [], []
        for _ in range(_repeats(b, repeats)):
            t_rows.append(_timed(rows_run, 1))
            t_batch.append(_timed(batch_run, 1))
        per_row.append(statistics.median(t_rows) / b)
        batched.append(statistics.median(t_batch) / b)
    saving = statistics.median(r - x for r, x in zip(per_row, batched))
    return {"per_row_us": statistics.median(per_row), "batch_us": statistics.median(batched), "saving_us": saving,
            "rows": list(rows)}


def measure_llguidance_batched(backend: Backend, matchers: list[Any], threads: Sequence[int],
                               rows: Sequence[int], repeats: int = 5) -> list[PoolPoint]:
    """llguidance.torch.fill_next_token_bitmask_par on an LLExecutor of T threads (SGLang's path)."""
    _distinct(matchers, rows)
    llg, lgt = backend.llg, backend.lgt
    bitmask = backend.bitmask(max(rows))
    points = []
    for b in rows:
        ms = matchers[:b]
        reps = _repeats(b, repeats)
        row_us = [_timed(lambda m=m, r=r: backend.fill(m, bitmask, r), reps) for r, m in enumerate(ms)]
        serial = sum(row_us)
        for t in threads:
            ex = llg.LLExecutor(num_threads=t)
            pairs = [(m, r) for r, m in enumerate(ms)]
            par = _timed(lambda: lgt.fill_next_token_bitmask_par(ex, pairs, bitmask), reps)
            points.append(PoolPoint(t, b, serial, par, list_schedule_us(row_us, min(t, usable_cpus()))))
    return points


def advanced_matchers(backend: Backend, compiled_tokens: list[tuple[Any, list[int]]], n: int) -> list[Any]:
    """n distinct matchers in the states the outputs pass through: row i takes output i mod k and is
    advanced through it by a depth that walks every position of that output in turn, so a step of
    many rows holds requests at different places of their outputs (the engine's rows are separate
    requests at their own positions). With fewer outputs than rows, two rows may share a state,
    never a matcher."""
    streams = [(c, t) for c, t in compiled_tokens if len(t) > 1]
    if not streams:
        raise ValueError("no output of two or more tokens to put the pool's matchers in realistic states")
    out: list[Any] = []
    for i in range(n):
        compiled, tokens = streams[i % len(streams)]
        # the golden-ratio sequence: successive rows of one output spread evenly over its positions
        depth = int(((i // len(streams)) * 0.6180339887) % 1.0 * (len(tokens) - 1))
        m = backend.matcher(compiled)
        for t in tokens[:depth]:
            backend.accept(m, t)
        out.append(m)
    return out
