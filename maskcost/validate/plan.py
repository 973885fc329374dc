"""What `calibrate --base-url` measures against a live server (LivePlan), its time estimate and the
trims that fit it into a budget. No heavy import: the CLI builds its defaults from it."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

# estimate_s's terms, fitted to the phases of the 13 calibrations in validation/ (their raw records' send and end
# times: validation/h200-vllm-0.25.1/shape/posthoc/calibrate_time.txt, its script at 1fcd12b; docs/validation.md
# finding 35): from one point's last answer to the next point's first request (0.83 s median); a point's time against
# its decode steps schema off (0.89x), with the cached long prompt (1.25x) and schema on at 80 tokens an output (3.69x:
# the fill, the queue; the outputs were a median 41 tokens; with shape runs 8-9 in the record 3.36x over both backends'
# points, kept: llguidance's now counted apart, SPEED_POINTS_BY_BACKEND); a prefill point (1.2 s for 16 requests); the
# host phase (36-51 s for three schemas, 96 replays each, two backends); what follows the last point (about 10 s: the
# API-server fit, the speed read, the profile); the share of schema-on requests whose output is valid JSON of its
# schema (about 0.9: 455-469 of 512 a schema on the shape check's runs 4-7). Not in the record, a guess: the setup
# before the first point (the apply, the compile check and each backend's tokenizer, which the host phase loaded
# before); the share of the outputs past outputs_per_schema that the tracer replays where it may (0.25: on shape runs
# 8-16's spreads xgrammar's deep would take all of its ~510, nested about 90 more, flat and llguidance's few).
POINT_S = 0.83
ESTIMATE_FACTORS = {"schema_off": 0.89, "schema_on": 3.69, "context": 1.25, "prefill_request_s": 0.075,
                    "speed_read_s": 1.0, "frontend_s": 3.0, "setup_s": 5.0, "host_s": 10.0, "schema_s": 2.0,
                    "replay_s": 0.033, "backend_s": 3.0, "valid_share": 0.9,
                    "extra_traced_share": 0.25}
# a server's schema-on points against an xgrammar server's, by its backend: llguidance's outputs are shorter and its
# fills cheaper (the shape check's runs 5-9, the same speed points on both: 13-20 s against 34-49 s, 0.38-0.43)
SPEED_POINTS_BY_BACKEND = {"guidance": 0.40}


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
    frontend: bool = True  # where the API server's loop CPU gives none, fit its costs on the forward sweep's TTFT
    speed_concurrency: tuple[int, ...] = (48, 96, 144, 224)  # schema-on: the server's own speed, in this order
    max_tokens: int = 512  # schema-on max_tokens
    # the server's own outputs a schema, traced in place of outputs sampled under the mask (their token streams
    # are what the engine's matchers walk, their lengths the requests' lengths): those the speed points wrote,
    # spread over them, and for a schema short of them a point of its own at outputs_concurrency clients.
    # Each output replayed trace_repeats times (each position's median): one output's cost a token varies 43-56%
    # from the next where a replay's timing varies about 1%, so the replay time goes to more outputs, once each
    # (docs/validation.md finding 31: 96 once cost what 32 thrice did, and know the mean sqrt(3) better)
    outputs_per_schema: int = 96
    outputs_concurrency: int = 96
    trace_repeats: int = 1
    # past outputs_per_schema, more of the speed points' outputs (up to outputs_max a schema: traced_max) where a
    # schema's traced mean cost a token would be known worse than +-trace_rse (fill.EnoughTraces): xgrammar's deep
    # schema, its cost in the items of an array empty in half its outputs, was known to +-12-14% from 96 and its
    # mean x0.72-1.21 of all its outputs' on shape runs 8-16, flat's and nested's to +-5-8% (docs/validation.md
    # finding 67)
    outputs_max: int = 512
    trace_rse: float = 0.05
    # client processes a point of `clients` streams runs: 1 + clients // client_streams_per_proc, at most
    # client_procs_max. One Python client process kept 56-81% busy at 32 streams and 91-97% from 64 on the H200
    # hosts (schema-off, 5-14k tokens/s; 34% at 8), and the engine then ran fewer requests than offered (41-50 of
    # 64, 78-96 of 128): the client, not the engine, capped the load the API-server fit and the speed points
    # read. The client's CPU in all is the tokens it streams, whatever the processes; more of them only keep
    # each one's queue short
    client_streams_per_proc: int = 16
    client_procs_max: int = 8

    def __post_init__(self) -> None:
        for name in ("forward_concurrency", "speed_concurrency", "prefill_pads"):
            bad = [v for v in getattr(self, name) if v < 1]
            if bad:
                raise ValueError(f"--{name.replace('_', '-').replace('forward-', '')} {bad[0]}: must be >= 1")
        for name in ("rounds", "min_requests", "off_tokens", "max_tokens", "outputs_per_schema", "outputs_concurrency",
                     "trace_repeats", "client_streams_per_proc", "client_procs_max"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} {getattr(self, name)}: must be >= 1")
        if not 0 < self.trace_rse < 1:
            raise ValueError(f"trace_rse {self.trace_rse}: must be in (0, 1)")

    def client_procs_at(self, clients: int) -> int:
        return min(self.client_procs_max, 1 + clients // self.client_streams_per_proc)

    @property
    def context_concurrency(self) -> tuple[int, ...]:
        if not self.context:
            return ()
        cs = sorted(c for c in self.forward_concurrency if c > 1) or sorted(self.forward_concurrency)
        return tuple(sorted({cs[0], cs[len(cs) // 2], cs[-1]}))

    def estimate_s(self, schemas: int, backends: int, servers: tuple[str, ...] = ("xgrammar",)) -> dict[str, float]:
        """Seconds each phase takes on an H200 with a 16-core host (a guide for the budget, not a promise): a
        point is POINT_S plus its requests' decode steps (about 6 ms + 0.06 ms a row; 128 tokens schema off,
        80 a structured output), times the factors of ESTIMATE_FACTORS; `servers`: the backend of each server
        whose speed points are run (--base-url's and each --backend-url's), its points' steps times
        SPEED_POINTS_BY_BACKEND's factor."""
        k = ESTIMATE_FACTORS

        def sweep_s(concs, tokens, factor, requests=None):
            return sum(POINT_S + (requests or max(self.min_requests, self.rounds * c)) * tokens / c
                       * (6.0 + 0.06 * c) / 1e3 * factor for c in concs)
        n = self.outputs_short(schemas)  # a point of its own for each schema the speed points leave short
        on = [k["schema_on"] * SPEED_POINTS_BY_BACKEND.get(b, 1.0) for b in servers]
        return {"setup": k["setup_s"] + backends * k["backend_s"],  # the apply, the compile check, the tokenizers
                "forward": sweep_s(self.forward_concurrency, self.off_tokens, k["schema_off"]),
                "prefill": len(self.prefill_pads) * (POINT_S + self.min_requests * k["prefill_request_s"]),
                "context": sweep_s(self.context_concurrency, self.off_tokens, k["context"]),
                "speed": sum(sweep_s(self.speed_concurrency, 80, f) for f in on) + k["speed_read_s"] * len(
                    self.speed_concurrency) * (1 + 2 * (len(servers) - 1)),  # each point read; each other's fit too
                "outputs": schemas * sum(sweep_s((min(self.outputs_concurrency, n),), 80, f, n) for f in on)
                if n else 0.0,
                "host": k["host_s"] + schemas * backends * (k["schema_s"] + k["replay_s"] * self.trace_repeats * (
                    self.outputs_per_schema + k["extra_traced_share"] * self.outputs_past(schemas))),
                "frontend": k["frontend_s"] if self.frontend else 0.0}

    @property
    def traced_max(self) -> int:
        """The most outputs of a schema traced: outputs_max, never fewer than outputs_per_schema."""
        return max(self.outputs_max, self.outputs_per_schema)

    def _speed_requests(self, schemas: int) -> float:
        """The speed points' requests of one schema (their schemas drawn at random)."""
        return sum(max(self.min_requests, self.rounds * c) for c in self.speed_concurrency) / max(1, schemas)

    def outputs_past(self, schemas: int) -> float:
        """The speed points' valid outputs of a schema past outputs_per_schema, up to outputs_max: what the tracer
        may replay more where the mean is poorly known."""
        have = ESTIMATE_FACTORS["valid_share"] * self._speed_requests(schemas)
        return max(0.0, min(self.traced_max, have) - self.outputs_per_schema)

    @property
    def outputs_enough(self) -> int:
        """The speed points' outputs of a schema that spare it a point of its own: three quarters of
        outputs_per_schema (the traced mean then known about 15% less well, where its point would cost a
        few seconds of the server a schema)."""
        return max(1, 3 * self.outputs_per_schema // 4)

    def outputs_short(self, schemas: int) -> int:
        """The requests of a schema's own outputs point where the speed points' valid outputs fall short of
        outputs_enough (their schemas drawn at random: two standard deviations below the mean), else 0."""
        per = self._speed_requests(schemas)
        have = ESTIMATE_FACTORS["valid_share"] * per - 2 * per ** 0.5
        short = self.outputs_per_schema - have
        return max(self.min_requests, round(1.25 * short)) if have < self.outputs_enough else 0


def _outputs_cut_to_a_third(p: LivePlan) -> LivePlan:
    """fit_to_budget's last trim: the outputs a schema (traced, and the most traced) and those of its own point
    cut to a third, to no fewer than 32, never more than asked."""
    n = min(p.outputs_per_schema, max(32, p.outputs_per_schema // 3))
    return replace(p, outputs_max=n, outputs_per_schema=n,
                   outputs_concurrency=min(p.outputs_concurrency, max(32, p.outputs_concurrency // 3)))


def fit_to_budget(plan: LivePlan, budget_s: float | None, schemas: int, backends: int,
                  servers: tuple[str, ...] = ("xgrammar",)) -> LivePlan:
    """The plan, trimmed until its estimate fits `budget_s`: first the context slope, then the prefill
    points, the API-server fit, two forward points, a round of every sweep, the outputs traced past
    outputs_per_schema, and the outputs a schema cut to a third (to no fewer than 32, and never more than
    asked: each schema's mean cost a token then known about sqrt(3) less well), each only where it lowers the
    estimate; the host phase, the forward curve's ends and the speed sweep always stay."""
    if budget_s is None:
        return plan
    trims: list[Callable[[LivePlan], LivePlan]] = [
        lambda p: replace(p, context=False),
        lambda p: replace(p, prefill_pads=()),
        lambda p: replace(p, frontend=False),
        lambda p: replace(p, forward_concurrency=tuple(c for c in p.forward_concurrency if c not in (32, 192))),
        lambda p: replace(p, rounds=2),
        lambda p: replace(p, outputs_max=p.outputs_per_schema),
        _outputs_cut_to_a_third,
    ]
    def total(p: LivePlan) -> float:
        return sum(p.estimate_s(schemas, backends, servers).values())
    now = total(plan)
    for trim in trims:
        if now <= budget_s:
            break
        cut = trim(plan)
        if (then := total(cut)) < now:  # (a round fewer can cost more: outputs points of their own)
            plan, now = cut, then
    return plan
