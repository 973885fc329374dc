"""The API server as the simulation has it (vLLM's; ForwardCurve.frontend_*: calibrate fits them): one
asyncio loop, first come first served, for admissions and streamed outputs. A single server with known
job times, so a job ends at max(now, when the one before it ends) + its time. Its times are host work and
scale with the CPU speed like the rest (Costs.cpu_scale; validation/h200-vllm-0.25.1/y: a slow host's
loop saturates sooner), from the speed of the host they were read on (ForwardCurve.frontend_read_speed)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

# A loop busier than this in the model is near capacity: where the engine's step is host-bound too, the two split a
# closed loop's requests between them, and the model's ITL there moved by up to 23% for a tenth more or less in the
# loop's costs on the profiles of the record's servers (llguidance at 256 clients, where the server's process ran
# 0.97-1.08 CPU, its loop thread 0.83-0.91; the model's loop 0.99 and 1.00 on run 12's profile: docs/validation.md
# finding 50). predict says so.
LOOP_NEAR_FULL = 0.8

if TYPE_CHECKING:
    from .costs import Costs


class ApiServer:
    def __init__(self, costs: "Costs", event: Callable[[str, str, float, float], None] | None,
                 structured_fraction: float = 0.0) -> None:
        fw = costs.profile.forward
        # a streamed token: where the profile read a structured stream's apart, the two weighted by the workload's
        # share of structured requests (exact for a workload of one kind, as every validation point is)
        token_us = fw.frontend_token_us
        # read apart: a structured request then costs frontend_structured_ms whole
        self.apart = bool(fw.frontend_structured_token_us)
        if self.apart:
            token_us += structured_fraction * (fw.frontend_structured_token_us - token_us)
        self.token_us, self.request_ms, self.structured_ms = \
            token_us, fw.frontend_request_ms, fw.frontend_structured_ms  # at fw.frontend_read_speed
        # so priced as read on the host they were read on, scaled by the speed from there (ForwardCurve.frontend_scale;
        # docs/validation.md finding 77: those read from a server's process are that host's time at the speed read)
        self.scale = fw.frontend_scale(costs.cpu_scale)
        self.event = event  # the trace's span writer, where one is recorded
        self.free_at = 0.0  # when the job queued last ends
        self.busy_ms = 0.0  # its host CPU time (model/host_share.py reads it)
        self.spans: list[tuple[float, float]] = []  # each job's (start, end), in the order queued (busy_share)

    @staticmethod
    def modelled(costs: "Costs", api_server_queue: bool) -> bool:
        """Whether the profile has the API server's costs and the engine's were fitted with it."""
        fw = costs.profile.forward
        return bool(fw.frontend_token_us or fw.frontend_request_ms or fw.frontend_structured_ms) and api_server_queue

    def job(self, name: str, dur: float, now: float) -> float:
        """Queue a job of `dur` ms at `now`; the delay from then until it ends."""
        start = self.free_at if self.free_at > now else now
        self.free_at = start + dur
        self.busy_ms += dur
        self.spans.append((start, self.free_at))
        if self.event is not None:
            self.event(name, "API server", start, dur)
        return self.free_at - now

    def busy_share(self, lo: float, hi: float) -> float | None:
        """The share of [lo, hi] its jobs ran (one at a time: they never overlap); None for an empty window."""
        if not hi > lo:
            return None
        if not self.spans:
            return 0.0
        s = np.array(self.spans)
        return float(np.clip(np.minimum(s[:, 1], hi) - np.maximum(s[:, 0], lo), 0.0, None).sum() / (hi - lo))

    def admit(self, structured: bool, now: float) -> float:
        """A request's admission (parse, template, tokenize; a schema: validate); the delay until it is done."""
        ms = (self.structured_ms if self.apart else self.request_ms + self.structured_ms) if structured \
            else self.request_ms
        return self.job("admit request", ms * self.scale, now)

    def stream(self, tokens: int, now: float) -> float:
        """Streaming a step's `tokens`; the delay until it is done."""
        return self.job("stream step outputs", tokens * self.token_us * self.scale / 1e3, now)
