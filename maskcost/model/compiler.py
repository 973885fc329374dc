"""The engine's grammar compiler as the simulation has it: a pool of compile workers (a simpy.Resource as
wide as the engine makes it: model/engines.py compile_workers), the compiled-grammar cache (LRU by bytes
where the engine bounds it), the compiles in flight (a second request for a grammar being compiled waits
for that compile), and the requests waiting for their grammar (the engine's per-step work on them:
engines.py compile_wait_ms, through the Simulation's grammars_awaited, compile_ends and polled)."""
from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Callable

import simpy

if TYPE_CHECKING:
    from .config import EngineConfig
    from .costs import Costs
    from .engines import Engine


class GrammarCompiler:
    def __init__(self, env: simpy.Environment, costs: "Costs", cfg: "EngineConfig", engine: "Engine",
                 event: Callable[[str, str, float, float], None]) -> None:
        self.env, self.costs, self.cfg, self.engine, self.event = env, costs, cfg, engine, event
        self.pool = simpy.Resource(env, capacity=engine.compile_workers(cfg.cpu_count))
        self.caches = engine.caches_grammar(cfg.backend)
        self.cache: OrderedDict[str, int] = OrderedDict()
        self.cache_bytes = 0
        self.inflight: dict[str, simpy.Event] = {}
        self.pending: dict[int, int] = {}  # request -> the engine's polls while it waits for its grammar
        self.compile_end: dict[str, float] = {}  # key -> when its compile ends
        self.compiled_bases: set[str] = set()  # schemas compiled at least once (any variant)
        self.busy_ms = 0.0  # the pool's host CPU time (model/host_share.py reads it)

    def cached(self, key: str) -> bool:
        """Whether the grammar is in the cache (and now its most recent entry)."""
        if self.caches and key in self.cache:
            self.cache.move_to_end(key)
            return True
        return False

    def _store(self, key: str, nbytes: int) -> None:
        if not self.caches:
            return
        self.cache[key] = nbytes
        self.cache_bytes += nbytes
        limit = self.engine.cache_limit_bytes(self.cfg)
        if limit is not None:  # LRU by bytes
            while self.cache_bytes > limit and len(self.cache) > 1:
                _, b = self.cache.popitem(last=False)
                self.cache_bytes -= b

    def wait_for(self, rid: int, key: str, sid: str) -> simpy.Event:
        """Request `rid` waits for grammar `key` (schema `sid`), not in the cache: the compile in flight for
        it, or a new one; the event succeeds when it is done."""
        self.pending[rid] = 0
        ev = self.inflight.get(key)
        if ev is None:
            ev = self.inflight[key] = self.env.event()
            self.env.process(self._compile(key, sid, ev))
        return ev

    def _compile(self, key: str, sid: str, done: simpy.Event):
        cc = self.costs.compile[sid]
        # xgrammar's compiler keeps a rule-level cache: a near-identical variant of a schema it has
        # compiled before (unique-schema traffic) costs the measured variant time, not a cold compile
        variant = (self.cfg.backend == "xgrammar" and key != sid and sid in self.compiled_bases
                   and cc.variant_ms is not None)
        with self.pool.request() as slot:
            yield slot
            busy = self.pool.count
            base_ms = cc.variant_ms if variant else cc.cold_ms
            dur = base_ms * self.costs.cpu_scale * max(1.0, busy / self.cfg.usable_cores)
            self.compile_end[key] = self.env.now + dur
            self.busy_ms += dur
            self.event("compile", "compile pool", self.env.now, dur)
            yield self.env.timeout(dur)
        self._store(key, cc.memory_bytes)
        self.compiled_bases.add(sid)
        self.inflight.pop(key, None)
        self.compile_end.pop(key, None)
        done.succeed()
