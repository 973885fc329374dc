"""Where a calibration ran: CPU model, the cores this process may use, what the engine would see as
cpu_count, package versions, and a fixed single-thread benchmark used to scale fill and compile
times from this CPU to another (the same xgrammar replay every time); where this host keeps what it
measured (cache_dir, keyed by host_key; calibrate/cache.py keeps a user's schema's costs there), and the
benchmark's compiled grammar there (bench_grammar)."""
from __future__ import annotations

import hashlib
import json
import math
import multiprocessing
import os
import platform
import statistics
import time
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..profile import HostInfo

if TYPE_CHECKING:
    from .backends import XGrammarBackend

PACKAGES = ("maskcost", "xgrammar", "llguidance", "apache-tvm-ffi", "quicktok-v1", "simpy", "numpy",
            "torch", "vllm", "sglang")
CACHE_VERSION = 2  # of what cache_dir holds (bench_grammar's files here, calibrate/cache.py's)


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


def cache_dir() -> Path:
    return Path(os.environ.get("MASKCOST_CACHE_DIR") or Path.home() / ".cache" / "maskcost")


def host_key() -> dict[str, Any]:
    """What a timing on this host depends on besides its inputs."""
    pk = package_versions()
    return {"cpu_model": cpu_model(), "nproc": usable_cpus(), "python": platform.python_version(),
            "packages": {k: pk.get(k) for k in ("xgrammar", "llguidance", "apache-tvm-ffi", "quicktok-v1")}}


_BENCH_GRAMMARS: dict[tuple[int, str], Any] = {}


def bench_grammar(be: XGrammarBackend, schema: dict[str, Any]):
    """The benchmark's compiled grammar on `be` (host.bench_us): compiled once per host and kept here
    serialised (xgrammar's own CompiledGrammar.serialize_json, zlib), since its compile (seconds) is
    paid again by every process that runs the benchmark; the compile time is not what it measures.
    A file that is absent, cut short or of another xgrammar version is compiled again."""
    import zlib
    text = json.dumps(schema, sort_keys=True)
    memo = (id(be), text)
    if memo in _BENCH_GRAMMARS:
        return _BENCH_GRAMMARS[memo][1]
    key = json.dumps({"cache": CACHE_VERSION, "packages": host_key()["packages"], "tokenizer": be.vocab.name,
                      "vocab_size": be.vocab.size, "schema": text}, sort_keys=True)
    path = cache_dir() / "bench" / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.xgr.z"
    try:
        compiled = be.xgr.CompiledGrammar.deserialize_json(zlib.decompress(path.read_bytes()).decode(),
                                                            be.vocab.xgrammar_info)
    except Exception:  # noqa: BLE001 - absent, corrupt or another version's file: compile it again
        compiled = be.compile(schema, cache=True)[0]
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            tmp.write_bytes(zlib.compress(compiled.serialize_json().encode(), 1))
            tmp.replace(path)
        except OSError:
            pass
    _BENCH_GRAMMARS[memo] = (be, compiled)  # be kept alive with its id
    return compiled


def bench_us(vocab, rounds: int = 30, be=None) -> float:
    """Median µs of one fresh-matcher replay of the 'bounded' tier's instance through xgrammar:
    fill + accept for every token, single thread. The ratio of two hosts' bench_us scales traces.
    `be`: an XGrammarBackend on `vocab` to reuse (its compile cache keeps the grammar)."""
    from .backends import XGrammarBackend
    from .fill import output_text
    from .schemas import TIERS
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


class SpreadBench:
    """bench_us as a calibration's traces replay: one round (one fresh-matcher replay of the benchmark's instance)
    at most every `every_s` seconds, called before each replay (calibrate_backends' before_replay), topped up to
    `least` rounds at the end (after the pools; a run resumed or short has fewer spread), its median; with `moment`,
    beside it for the record only, one bench taken the old way (30 rounds back to back: `moment_us`), so that a
    profile's notes show where one moment and the replays' stretch disagree (docs/validation.md finding 68).
    cache.cached_trace measures a user's schema with it (every_s 0, least 0: a round before every replay, their
    median; `be`: its tracing backend where that is xgrammar's). The embedded profiles' bench_us and speed_vs's
    reading are one moment's."""

    def __init__(self, vocab, every_s: float = 1.0, least: int = 30, moment: bool = False, be=None) -> None:
        self.vocab, self.every_s, self.least, self.moment = vocab, every_s, least, moment
        self.rounds: list[float] = []
        self.spread: int | None = None  # the rounds taken before the top-up (bench_us)
        self.moment_us: float | None = None
        self._last_s = -math.inf
        self._be = be

    def _backend(self):
        from .backends import XGrammarBackend
        self._be = self._be or XGrammarBackend(self.vocab)
        return self._be

    def _round(self) -> None:
        self.rounds.append(bench_us(self.vocab, rounds=1, be=self._backend()))
        self._last_s = time.monotonic()

    def __call__(self) -> None:
        if time.monotonic() - self._last_s >= self.every_s:
            self._round()

    def bench_us(self) -> float:
        if self.spread is None:
            self.spread = len(self.rounds)
            while len(self.rounds) < self.least:
                self._round()
            self.moment_us = bench_us(self.vocab, be=self._backend()) if self.moment else None
        return statistics.median(self.rounds)

    def words(self) -> str:
        spread = statistics.median(self.rounds[:self.spread]) if self.spread else None
        return (f"the host's bench_us the median of {len(self.rounds)} one-round benches, {self.spread or 0} of them "
                f"taken as its traces replayed (one a {self.every_s:g} s at most"
                f"{f'; their median {spread:.0f} us' if spread else ''}), the rest after{self._moment_words()}"
                f" (calibrate.host.SpreadBench)")

    def _moment_words(self) -> str:
        if self.moment_us is None:
            return ""
        return f"; one bench of 30 rounds back to back, for the record: {self.moment_us:.0f} us"


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


def omp_spin_ms(copies: int = 25, gap_ms: float = 30.0) -> float | None:
    """How long an idle thread of torch's OpenMP team spins on this host after a parallel region before it
    sleeps (ms; a vLLM engine's team does so after each step's bitmask copy with xgrammar: docs/engines.md,
    "The bitmask's pinned copy"): the CPU the process's other threads burn after each of `copies` copies of
    a 32-row Llama-3 bitmask (128,256 int32, over torch's parallel grain), each followed by a sleep longer
    than the spin, over the team's other threads. None without torch, or with a team of one thread."""
    try:
        import torch
    except ImportError:
        return None
    threads = torch.get_num_threads()
    if threads < 2:
        return None
    src = torch.full((32, 4008), -1, dtype=torch.int32)
    dst = torch.empty_like(src)
    dst.copy_(src)  # the team started
    time.sleep(gap_ms / 1e3)
    p0, t0 = time.process_time(), time.thread_time()
    for _ in range(copies):
        dst.copy_(src)
        time.sleep(gap_ms / 1e3)
    others_s = (time.process_time() - p0) - (time.thread_time() - t0)
    return round(max(0.0, others_s) * 1e3 / copies / (threads - 1), 3)


def host_info(vocab, bench: SpreadBench | None = None) -> HostInfo:
    """This host; its bench_us `bench`'s (taken as the traces replayed), else one moment's (bench_us)."""
    bench_here_us = bench.bench_us() if bench is not None else bench_us(vocab)
    return HostInfo(cpu_model=cpu_model(), nproc=usable_cpus(), os_cpu_count=multiprocessing.cpu_count(),
                    bench_us=bench_here_us, platform=f"{platform.system()} {platform.release()} "
                                                     f"Python {platform.python_version()}",
                    omp_spin_ms=omp_spin_ms())
