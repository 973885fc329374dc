"""Who sends the simulation's requests (Workload): `concurrency` closed-loop clients, each sending its next
request when its last one is answered (a callback on that request's done event: a client does nothing
else, so it needs no process of its own), or Poisson arrivals at `rate_per_s`. Either stops at the
workload's request count, or earlier once the ITL mean is known to its `precision`."""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np
import simpy

if TYPE_CHECKING:
    from .config import Workload


class Clients:
    def __init__(self, env: simpy.Environment, wl: "Workload", rng: np.random.Generator,
                 admit: Callable[[int], None], arrival: np.ndarray, steps: list, prefill_apart: bool) -> None:
        self.env, self.wl, self.rng, self.admit, self.arrival = env, wl, rng, admit, arrival
        self.steps, self.prefill_apart = steps, prefill_apart  # the engine's step records (the precision stop)
        self.issued = 0
        self.t_last_issue = 0.0
        self.stopped = False  # Workload.precision met: no more requests
        self.done_events: dict[int, simpy.Event] = {}

    def start(self) -> None:
        """The closed-loop clients start at now, in order (after what was scheduled before them); else
        the arrival process."""
        if self.wl.concurrency is not None:
            start = self.env.event()
            start.callbacks.extend([self._client] * min(self.wl.concurrency, self.wl.requests))
            start.succeed()
        else:
            self.env.process(self._poisson())

    def answered(self, rid: int) -> None:
        """Request `rid` is done: its client (if any waits on it) sends its next."""
        ev = self.done_events.pop(rid, None)
        if ev is not None:
            ev.succeed()

    def _precise_enough(self) -> bool:
        """Workload.precision: the ITL mean of the steps since the ramp known to +- precision x itself
        (metrics.itl_ci95_ms over the steps' ITL gaps, metrics.itl_samples)."""
        from .metrics import RAMP_FRACTION, itl_ci95_ms, itl_samples, step_columns
        if not self.steps:
            return False
        col = step_columns(self.steps)  # the same gaps as the summary's (SGLang: prefill waits included)
        itl, w = itl_samples(col, col["t_start_ms"] >= RAMP_FRACTION * self.env.now, self.prefill_apart)
        if not itl.size:
            return False
        ci = itl_ci95_ms(itl, w)
        return ci is not None and ci <= self.wl.precision * float(np.average(itl, weights=w))

    def _next_request(self) -> int | None:
        if self.issued >= self.wl.requests or self.stopped:
            return None
        wl = self.wl
        if wl.precision is not None:
            c = wl.concurrency or 50
            if self.issued >= max(2 * c, 100) and self.issued % max(c, 50) == 0 and self._precise_enough():
                self.stopped = True
                return None
        rid = self.issued
        self.issued += 1
        self.t_last_issue = self.env.now
        self.arrival[rid] = self.env.now
        self.admit(rid)
        return rid

    def _client(self, _ev: simpy.Event) -> None:
        rid = self._next_request()
        if rid is not None:
            ev = self.done_events[rid] = self.env.event()
            ev.callbacks.append(self._client)

    def _poisson(self):
        rate_per_ms = self.wl.rate_per_s / 1e3
        while self._next_request() is not None:
            yield self.env.timeout(self.rng.exponential(1.0 / rate_per_ms))
