"""What `calibrate --base-url` measures against a live server (LivePlan), its time estimate and the
trims that fit it into a budget. No heavy import: the CLI builds its defaults from it."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable


@dataclass(frozen=True)
class LivePlan:
    """What the live calibration measures; LivePlan() is the full plan, fit_to_budget trims it."""
    forward_concurrency: tuple[int, ...] = (1, 8, 32, 64, 128, 192, 256)
    rounds: int = 3  # requests per point: max(min_requests, rounds x concurrency)
    min_requests: int = 16
    off_tokens: int = 128  # schema-off output length (ignore_eos)
    prefill_pads: tuple[int, ...] = (500, 1500, 3000)  # unique prompts of about this many tokens, concurrency 1
    context_pad: int = 2000  # a shared (prefix-cached) prompt of this many tokens, at the forward sweep's
    context: bool = True  # lowest, middle and highest loads above 1
    frontend: bool = True  # fit the API server's per-token and per-request costs on the forward sweep
    speed_concurrency: tuple[int, ...] = (48, 96, 144, 224)  # schema-on: the server's own speed, in this order
    max_tokens: int = 512  # schema-on max_tokens
    # schema-on, first: the server's own outputs, one point a schema, traced in place of outputs sampled under
    # the mask (their token streams are what the engine's matchers walk, their lengths the requests' lengths).
    # Each output replayed trace_repeats times (each position's median): one output's cost a token varies 43-56%
    # from the next where a replay's timing varies about 1%, so the replay time goes to more outputs, once each
    # (docs/validation.md finding 31: 96 once cost what 32 thrice did, and know the mean sqrt(3) better)
    outputs_per_schema: int = 96
    outputs_concurrency: int = 96
    trace_repeats: int = 1
    # client processes a point of `clients` streams runs: 1 + clients // client_streams_per_proc, at most
    # client_procs_max. One Python client process kept 56-81% busy at 32 streams and 91-97% from 64 on the H200
    # hosts (schema-off, 5-14k tokens/s; 34% at 8), and the engine then ran fewer requests than offered (41-50 of
    # 64, 78-96 of 128): the client, not the engine, capped the load the API-server fit and the speed points
    # read. The client's CPU in all is the tokens it streams, whatever the processes; more of them only keep
    # each one's queue short
    client_streams_per_proc: int = 16
    client_procs_max: int = 8

    def client_procs_at(self, clients: int) -> int:
        return min(self.client_procs_max, 1 + clients // self.client_streams_per_proc)

    @property
    def context_concurrency(self) -> tuple[int, ...]:
        if not self.context:
            return ()
        cs = sorted(c for c in self.forward_concurrency if c > 1) or sorted(self.forward_concurrency)
        return tuple(sorted({cs[0], cs[len(cs) // 2], cs[-1]}))

    def estimate_s(self, schemas: int, backends: int, servers: int = 1) -> dict[str, float]:
        """Seconds each phase takes on an H200 with a 16-core host (a guide for the budget, not a promise):
        a decode step of about 6 ms + 0.06 ms a row, 80 tokens a structured output; `servers` whose outputs
        and speed points are collected (--base-url and each --backend-url)."""
        def sweep_s(concs, tokens, arm_on=False):
            out = 0.0
            for c in concs:
                n = max(self.min_requests, self.rounds * c)
                out += 2.0 + n * tokens / c * (6.0 + 0.06 * c) / 1e3 * (1.6 if arm_on else 1.0)
            return out
        n = max(self.min_requests, round(1.25 * self.outputs_per_schema))  # server_outputs' first point a schema
        c = min(self.outputs_concurrency, n)
        return {"outputs": servers * schemas * (2.0 + n * 80 / c * (6.0 + 0.06 * c) / 1e3 * 1.6),
                "host": 10.0 + schemas * backends * (2.0 + 0.033 * self.outputs_per_schema * self.trace_repeats)
                + backends * 15.0,
                "forward": sweep_s(self.forward_concurrency, self.off_tokens),
                "prefill": len(self.prefill_pads) * (2.0 + self.min_requests * 0.1),
                "context": sweep_s(self.context_concurrency, self.off_tokens) if self.context_concurrency else 0.0,
                "frontend": 25.0 if self.frontend else 0.0,
                "speed": servers * sweep_s(self.speed_concurrency, 80, arm_on=True) + 12.0 * len(self.speed_concurrency)
                * (1 + 2 * (servers - 1))}  # each point's speed read; each other server's fill factor too


def fit_to_budget(plan: LivePlan, budget_s: float | None, schemas: int, backends: int, servers: int = 1) -> LivePlan:
    """The plan, trimmed until its estimate fits `budget_s`: first the context slope, then the prefill
    points, the API-server fit, two forward points, a round of every sweep, and the outputs a schema cut to a
    third (to no fewer than 32, and never more than asked: each schema's mean cost a token then known about
    sqrt(3) less well); the
    host phase, the forward curve's ends and the speed sweep always stay."""
    if budget_s is None:
        return plan
    trims: list[Callable[[LivePlan], LivePlan]] = [
        lambda p: replace(p, context=False),
        lambda p: replace(p, prefill_pads=()),
        lambda p: replace(p, frontend=False),
        lambda p: replace(p, forward_concurrency=tuple(c for c in p.forward_concurrency if c not in (32, 192))),
        lambda p: replace(p, rounds=2),
        lambda p: replace(p, outputs_per_schema=min(p.outputs_per_schema, max(32, p.outputs_per_schema // 3)),
                          outputs_concurrency=min(p.outputs_concurrency, max(32, p.outputs_concurrency // 3))),
    ]
    for trim in trims:
        if sum(plan.estimate_s(schemas, backends, servers).values()) <= budget_s:
            break
        plan = trim(plan)
    return plan
