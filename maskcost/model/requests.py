"""A run's requests (model/engine.py's Simulation holds one): what each request is, drawn up front from the
workload's seed, and what became of it as the run went (when it arrived, got its first token, ended; whether the
engine gave up on it). The draws are one array over all requests at a time, in a fixed order, so the same seed
gives the same requests whatever the engine does with them."""
from __future__ import annotations

import numpy as np

from .config import EngineConfig, Workload, length_distribution, reasoning_distribution
from .costs import Costs


def _engines(which) -> str:
    """The engines (model/engines.py) of which `which` holds, as their projects write them."""
    from .engines import ENGINES
    return " and ".join(e.label for e in ENGINES.values() if which(e))


def checked_schemas(costs: Costs, cfg: EngineConfig, wl: Workload) -> list[str]:
    """The workload's schema ids (all the profile's where it names none); ValueError naming the first the profile
    lacks, or an engine the profile's costs cannot model."""
    tr, bb = costs.traces, costs.blackbox
    engine = cfg.policy
    if wl.reasoning_tokens != "none" and not engine.reasons:
        raise ValueError(f"--reasoning-tokens: modelled for {_engines(lambda e: e.reasons)}, not {engine.label}")
    if engine.traced != (tr is not None):
        raise ValueError(f"--engine {cfg.engine} --backend {cfg.backend}: {_engines(lambda e: not e.traced)} is "
                         f"modelled from a black-box (gbnf) calibration, {_engines(lambda e: e.traced)} from library "
                         f"traces (xgrammar, guidance)")
    known = tr.schema_ids if tr is not None else list(bb.output_tokens)
    ids = list(wl.schemas) or known
    missing = [s for s in ids if s not in known]
    if missing:
        raise ValueError(f"--schema-id {missing[0]}: not in the profile for {cfg.backend} "
                         f"(it has {len(known)} schemas, e.g. {known[:3]})")
    return ids


def deal(rng: np.random.Generator, pick: list[int], decks: list[list]) -> list:
    """Each request's card from its schema's deck (`pick`: the schema's index), dealt without replacement: each
    deck shuffled, dealt in order and shuffled again once spent. Every card is as likely as by a draw with
    replacement, but a schema's requests (structured or not: an unstructured one takes its card's length under
    --unstructured-lengths trace) take its cards within one of each other, so a point's mean cost is its traces'
    own: where a schema's few outputs carry most of its fill, as xgrammar's do, a 200-request point drawn with
    replacement priced run 11's nested/flat 8% off its traces' (docs/validation.md finding 46). A deck of one card
    draws nothing."""
    order = [np.empty(0, int) for _ in decks]
    at = [0] * len(decks)
    out = []
    for i in pick:
        if at[i] == len(order[i]):
            order[i], at[i] = (rng.permutation(len(decks[i])) if len(decks[i]) > 1 else np.zeros(1, int)), 0
        out.append(decks[i][order[i][at[i]]])
        at[i] += 1
    return out


class Requests:
    """Every request of a run by its id (0 ... n-1): its draws, made in this order from `rng` (the workload's seed):
    structured or not, the schema, the trace (or black-box length), the unstructured lengths, the reasoning, the
    prompt; and its fate, filled in as the run goes (arrival, first_t, done_t in ms; aborted)."""

    def __init__(self, rng: np.random.Generator, costs: Costs, cfg: EngineConfig, wl: Workload) -> None:
        ids = checked_schemas(costs, cfg, wl)
        n, tr, bb = wl.requests, costs.traces, costs.blackbox
        self.arrival = np.full(n, np.nan)
        self.first_t = np.full(n, np.nan)
        self.done_t = np.full(n, np.nan)
        self.aborted = np.zeros(n, bool)
        self.structured = rng.random(n) < wl.structured_fraction
        pick = rng.integers(0, len(ids), n).tolist() if wl.schema_order == "random" else \
            [i % len(ids) for i in range(n)]
        self.schema = [ids[i] for i in pick]
        if tr is not None:  # a trace of the request's schema, dealt from its shuffled deck
            self.trace = np.array(deal(rng, pick, [tr.by_schema[s] for s in ids]), dtype=int)
            lens = tr.n[self.trace]
            self.trace_off, self.trace_n = tr.off[self.trace], lens  # each request's trace: where it starts, its length
        else:  # black box: a length of those measured for the schema, dealt the same way
            self.trace = self.trace_off = self.trace_n = None
            lens = np.array(deal(rng, pick, [bb.output_tokens[s] for s in ids]))
        self.out_len = np.full(n, wl.output_tokens) if wl.output_tokens else lens.copy()
        draw = length_distribution(wl.unstructured_lengths)
        if draw is not None and not wl.output_tokens:
            free = ~self.structured
            self.out_len[free] = draw(rng, int(free.sum()))
        # a reasoning model: every request reasons first (unconstrained), then answers; the grammar's row stays in
        # the batch while it reasons, with no fill and no advance (model/engines.py: reasoning)
        draw_reason = reasoning_distribution(wl.reasoning_tokens)
        self.reason_len = np.zeros(n, int) if draw_reason is None else draw_reason(rng, n)
        self.reasoning = draw_reason is not None
        self.out_len = self.out_len + self.reason_len
        # prompts: fixed, or drawn per request; the cached prefix never covers a prompt's last token
        draw_prompt = length_distribution(wl.prompt_lengths, none_kind="fixed")
        self.prompt = np.full(n, wl.prompt_tokens) if draw_prompt is None else draw_prompt(rng, n)
        self.prefill = self.prompt - np.minimum(wl.prompt_cached_tokens, self.prompt - 1)
