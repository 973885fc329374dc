"""The engine step as simpy processes: the engine loop and its fill, beside the run's requests
(model/requests.py), the scheduler and its slots (model/scheduler.py), the clients (model/clients.py), the
grammar compiler (model/compiler.py) and the API server (model/api_server.py); a step's times are
model/step.py's arithmetic.

Each engine step (vLLM v1 0.25.1 / SGLang 0.5.23; facts and citations: docs/engines.md; what differs
between the engines, one class each: model/engines.py):
  schedule -> launch the forward (GPU lane, non-blocking) -> on the CPU: advance the matchers by
  the previous step's tokens, fill the bitmask (engine thread, or the fill pool) -> join ->
  copy + apply the mask -> sample.
With async scheduling (vLLM) / the overlap scheduler (SGLang) and any grammar in the batch, the
CPU branch (advance + fill + the engine's own per-step CPU work that async scheduling normally
hides) races the GPU forward, and sampling of the whole batch waits for it. Without it (sync
step), the fill overlaps the forward but the advance and the engine's CPU work are serial.

A run of steps with the same rows that no other event falls into (a long answer at low concurrency)
is arithmetic, not events: engine_loop computes it in one go (_quiet_run) and waits once, for an
event at the run's end itself (At).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from heapq import heappush
from typing import Callable

import numpy as np
import simpy

from .api_server import ApiServer
from .clients import Clients
from .scheduler import Scheduler
from .compiler import GrammarCompiler
from .config import EngineConfig, Workload
from .costs import Costs
from .engines import COPY_PARALLEL_ELEMENTS
from .requests import Requests
from .step import CpuTerms, FillTimes, StepClock, StepRecord, StepTimes, no_fill, step_clock


class At(simpy.Event):
    """An event due at the simulated time `at`, triggered now: for a process that computed the times
    ahead of the clock (engine_loop: a step's parts are times, not events). simpy's Timeout takes a
    delay and adds it to now, which from another now may land a rounding away from `at`; this puts
    the event in the queue at `at` itself, with the priority and ordering a Timeout has. It writes
    simpy's Environment queue (`_queue`, `_eid`) as Timeout does: pyproject pins simpy to 4.1.x, the
    versions this is tested with."""

    def __init__(self, env: simpy.Environment, at: float) -> None:
        if at < env.now:
            raise ValueError(f"an event at {at} is before now ({env.now})")
        self.env, self.callbacks, self._value, self._ok = env, [], None, True
        heappush(env._queue, (at, simpy.events.NORMAL, next(env._eid), self))


@dataclass
class TraceEvent:
    name: str
    lane: str
    start_ms: float
    dur_ms: float


class _Rows:
    """A step's rows and what they decide until they change (Simulation._rows)."""
    __slots__ = ("act", "B", "n_dec", "s_slots", "ones", "S", "off", "n", "rlen", "cpu_terms", "use_pool",
                 "apply_plain_ms", "grammar_cpu")

    def __init__(self, act, B: int, n_dec: int) -> None:
        self.act, self.B, self.n_dec = act, B, n_dec
        self.off = self.n = self.rlen = None


class Simulation:
    def __init__(self, costs: Costs, cfg: EngineConfig, wl: Workload, record_trace: bool = False,
                 max_trace_steps: int = 400, crowd_cpus: float = 0.0) -> None:
        self.costs, self.cfg, self.wl = costs, cfg, wl
        self.env = simpy.Environment()
        self.rng = np.random.default_rng(wl.seed)
        self.req = Requests(self.rng, costs, cfg, wl)  # every request's draws and fate (model/requests.py)
        self.reasoning = self.req.reasoning
        self.engine = cfg.policy  # what differs between the engines (model/engines.py)
        self.scheduler = Scheduler(self.env, cfg.max_num_seqs, cfg.max_num_batched_tokens, cfg.spec_tokens,
                               self.engine.prefill_apart, self.req.prefill, self.req.prompt, self.req.structured,
                               self._release_held)
        if cfg.tp_forward_ratio != 1.0:
            costs = costs.with_forward_factor(cfg.tp_forward_ratio)
        self.costs = self.engine.adapt_costs(costs.for_async(cfg.effective_async), cfg)
        # a step of this many structured rows copies its bitmask on the OpenMP team (Engine.copy_spinners: CPU,
        # model/host_share.py), whose spinners may crowd the engine thread (Engine.spin_share), with the CPUs
        # of other engines on the same cores (crowd_cpus: model/host_share.py, Share.crowd_cpus)
        self.copy_rows = -(-COPY_PARALLEL_ELEMENTS // max(1, self.costs.profile.bitmask_row_bytes // 4))
        self.spin = self.engine.spin_share(cfg, crowd_cpus)
        self.steps: list = []  # StepRecord
        self.record_trace = record_trace
        self.max_trace_steps = max_trace_steps
        self.events: list[TraceEvent] = []
        self._compiler()
        self._frontend()
        self.itl_w: list[tuple[float, float, np.ndarray]] = []  # (step start ms, period ms, tokens per row) for spec decoding
        self.env.process(getattr(self, self.engine.loop)())
        # the clients start at 0, after the engine loop (model/clients.py)
        self.clients = Clients(self.env, wl, self.rng, self._admit, self.req.arrival, self.steps,
                               self.engine.prefill_apart)
        self.clients.start()

    def _compiler(self) -> None:
        """The grammar compiler: its pool (the engine's workers), cache and the requests awaiting it
        (model/compiler.py)."""
        self.compiler = GrammarCompiler(self.env, self.costs, self.cfg, self.engine, self.event)
        self.pending = self.compiler.pending  # request -> the engine's polls while it waits for its grammar

    def _frontend(self) -> None:
        """The API server (model/api_server.py; None: not modelled), and the outputs the engine holds back."""
        self.api = ApiServer(self.costs, self.event if self.record_trace else None, self.wl.structured_fraction) \
            if ApiServer.modelled(self.costs, self.cfg.api_server_queue) else None
        # vLLM with async scheduling and a grammar in the batch: step N's outputs leave the engine
        # only when step_with_batch_queue returns, after the deferred fill and sample of step N+1
        # (vllm/v1/engine/core.py:519-633, then _process_engine_step puts them on the output queue)
        self.held: tuple[np.ndarray, np.ndarray, int] | None = None

    # ------------------------------------------------------------ grammar compile
    def grammars_awaited(self) -> list[int]:
        """(SimulationView) The requests waiting for their grammar, oldest first."""
        return list(self.pending)

    def compile_ends(self, rid: int, default: float) -> float:
        """(SimulationView) When request `rid`'s grammar compile ends; `default` where none runs."""
        return self.compiler.compile_end.get(self.grammar_key(rid), default)

    def polled(self, rid: int) -> int:
        """(SimulationView) The engine polled waiting request `rid` once more: its polls so far."""
        self.pending[rid] += 1
        return self.pending[rid]

    def grammar_key(self, rid: int) -> str:
        """The key of a request's grammar in the compile cache (its schema; its own with unique schemas)."""
        sid = self.req.schema[rid]
        return f"{sid}#unique{rid}" if self.wl.unique_schemas else sid

    # A request's way in, as callbacks on the events it waits for (a request has no thread of its own):
    # the API server's admission job (parse, template, tokenize; a schema: validate), then its grammar
    # (compiled in the compile pool, or found in the cache), then the scheduler's waiting queue.
    def _admit(self, rid: int) -> None:
        if self.api is None:
            self._reach_engine(rid)
            return
        self.env.timeout(self.api.admit(bool(self.req.structured[rid]), self.env.now)).callbacks.append(
            lambda _ev: self._reach_engine(rid))

    def _reach_engine(self, rid: int) -> None:
        if self.req.structured[rid] and self.cfg.compiles_before_scheduling:
            key = self.grammar_key(rid)
            if not self.compiler.cached(key):
                self.compiler.wait_for(rid, key, self.req.schema[rid]).callbacks.append(
                    lambda _ev: self._grammar_ready(rid))
                return
        self.scheduler.schedulable(rid)

    def _grammar_ready(self, rid: int) -> None:
        self.pending.pop(rid, None)
        if not self.req.aborted[rid]:
            self.scheduler.schedulable(rid)

    # ------------------------------------------------------------ engine loop
    def event(self, name: str, lane: str, start: float, dur: float) -> None:
        """A span of the Chrome/Perfetto trace, on its lane, where the run records one (--trace)."""
        if self.record_trace and len(self.steps) < self.max_trace_steps and dur > 0:
            self.events.append(TraceEvent(name, lane, start, dur))

    # A step: the GPU's forward and the CPU branch run together (a sync step with the probe's curve: its
    # schedule, launch, sample and update in series with the forward; the fill overlaps it). Nothing else
    # acts on a step while it runs, so its parts are times, not events: the engine waits once for the CPU
    # work up to the end of the fill (when the previous step's held outputs leave), and once for the rest
    # (the forward's end, the mask, a sync step's serial work).
    def engine_loop(self):
        """The engine's steps, one after another: each takes the rows the scheduler admits (Scheduler.next_step), runs the GPU's
        forward beside the CPU's work (the advance, the fill, the engine's own), waits for both and the
        mask, and ends the step (_end_step); a run of steady steps is computed in one go (_quiet_run)."""
        env, cfg, costs, engine = self.env, self.cfg, self.costs, self.engine
        k, async_on, rec = cfg.spec_tokens, cfg.effective_async, self.record_trace
        rows: _Rows | None = None
        by_counts: dict[tuple[int, int], tuple] = {}
        while True:
            act, rids, is_new, struct, prefill_tokens, partial, dec_slots, joined = yield from self.scheduler.next_step()
            t0 = env.now
            if rows is None or act is not rows.act:  # new rows (else the last step's: Scheduler.next_step)
                rows = self._rows(act, rids, struct, dec_slots, by_counts)
                context = self.scheduler.context_tokens(dec_slots)
            elif k:  # (a step of the same rows: no row joined)
                context = self.scheduler.decode_context()
            else:  # the same rows as the last step, each one token further on
                context += rows.n_dec
            B, S, n_dec = rows.B, rows.S, rows.n_dec
            # a run of such steps that nothing else acts on: computed in one go (_quiet_run), one event
            steady = self.scheduler.steady_step()
            if not k and steady is not None and act is steady[0] and not rows.use_pool and self._quiet():
                ran, t_end = self._quiet_run(t0, act, rids, context, (rows.s_slots, rows.off, rows.n) if S else None,
                                             rows.grammar_cpu, rows.cpu_terms, rows.apply_plain_ms)
                if ran:
                    context += (ran - 1) * n_dec  # the last step's: the loop's next adds one more
                    yield At(env, t_end)  # to the last step's end, where the event-by-event steps land
                    continue
            toks, drafted = self._draft_tokens(rows, is_new)
            forward_ms = self._forward_ms(rows, drafted, partial, prefill_tokens, context)
            row_ms, fill_ms, adv_ms = self._grammar_rows(rows, drafted, struct) if S else (np.zeros(0), 0.0, 0.0)
            compile_wait_ms = engine.compile_wait_ms(self, t0)
            apply_ms = costs.apply_ms(engine.apply_rows(B, S, int(row_ms.size), k) if S else 0) if k \
                else rows.apply_plain_ms
            # --- the step (the comment above engine_loop)
            c = step_clock(t0, forward_ms, adv_ms, apply_ms, rows.cpu_terms, rows.grammar_cpu, async_on,
                           self._fill_at(row_ms, fill_ms, rows.use_pool) if S else no_fill, self._spin(S),
                           compile_wait_ms)
            if rec:
                self._trace_step(t0, forward_ms, c)
            now = yield from self._outputs_leave(t0, c.fill_end_ms)
            # (a sync step without a grammar row: sampling, then update_from_output advances the matchers,
            # plus the engine CPU work that the schema-off async ITL hides, after the apply)
            if rec:
                self.event("mask copy + apply", "GPU", c.apply_at_ms, apply_ms)
                if not async_on and not rows.grammar_cpu:
                    self.event("advance + engine CPU", "engine thread", c.apply_at_ms + apply_ms,
                               adv_ms + c.overhead_ms)
            yield from self._until(now, c.end_ms)
            period = env.now - t0
            if k and n_dec:
                self.itl_w.append((t0, period, toks[~is_new]))
            self._end_step(act, rids, is_new, toks,
                           StepTimes(t0, period, B, S, prefill_tokens, forward_ms, fill_ms, c.fill.pool_wait_ms,
                                     apply_ms, adv_ms, compile_wait_ms, c.overhead_ms, rows.use_pool,
                                     c.fill.thread_fill_ms),
                           hold=bool(S) and async_on and engine.holds_outputs(), n_dec=n_dec, joined=joined)

    def _forward_ms(self, rows: "_Rows", drafted, partial: int, prefill_tokens: int, context: float) -> float:
        """The GPU's forward of a step: its rows (a partial prompt chunk's row, and each draft, count) and
        prefill tokens over the decode rows' context, plus the engine's extra prefill time (GPU time: shared
        as the forward is, model/host_share.py)."""
        costs, k = self.costs, self.cfg.spec_tokens
        ms = costs.forward_ms(rows.B + partial + (k * int(np.count_nonzero(drafted)) if k else 0), prefill_tokens,
                              rows.n_dec, context)
        if prefill_tokens:
            ms += self.engine.prefill_extra_ms(costs, prefill_tokens) * costs.gpu_factor
        return ms

    def _until(self, now: float, t_end: float):
        """The step's end: a timeout from the step's clock `now` to `t_end`, where it lands; or to `now`
        where the step ended before it (the clock ran ahead of env.now)."""
        if t_end > now:
            yield At(self.env, now + (t_end - now))
        elif now > self.env.now:
            yield At(self.env, now)

    def _rows(self, act, rids, struct, dec_slots, by_counts: dict[tuple[int, int], tuple]) -> "_Rows":
        """What a step's rows decide until they change: their counts, the structured rows' places in
        their traces, and the terms that depend on the counts alone (cached in `by_counts` by (B, S))."""
        cfg, costs, engine = self.cfg, self.costs, self.engine
        r = _Rows(act=act, B=int(act.size), n_dec=int(dec_slots.size))  # the decode rows: act's first n_dec
        r.s_slots, srid = (act, rids) if self.scheduler.all_structured else (act[struct], None)
        r.ones = np.ones(r.B, int) if cfg.spec_tokens else None  # (without drafts _end_step advances each row by 1)
        r.S = int(r.s_slots.size)
        if r.S:
            srid = self.scheduler.requests(r.s_slots) if srid is None else srid
            r.off, r.n = self.req.trace_off[srid], self.req.trace_n[srid]
            r.rlen = self.req.reason_len[srid] if self.reasoning else None
        terms = by_counts.get((r.B, r.S))
        if terms is None:
            terms = by_counts[r.B, r.S] = (*costs.grammar_step_cpu_terms(r.B), costs.cpu_overhead_ms(r.B),
                                           engine.uses_pool(cfg, r.S, cfg.spec_tokens),
                                           costs.apply_ms(engine.apply_rows(r.B, r.S, r.S, 0) if r.S else 0))
        r.cpu_terms, r.use_pool, r.apply_plain_ms = CpuTerms(*terms[:3]), terms[3], terms[4]
        # the engine thread's other work: with a grammar row and async scheduling it is not hidden; where
        # the probe timed it (the profile's engine-CPU curve), a sync step runs the same calls (core.py:479
        # step(): schedule, launch, fill while the GPU runs, sample, update), so it is the same curve
        r.grammar_cpu = bool(r.S) and (cfg.effective_async or costs.engine_cpu is not None)
        return r

    def _draft_tokens(self, rows: "_Rows", is_new):
        """The tokens each row advances this step and which rows got drafts: 1 each without speculative
        decoding; with it, 1 + the accepted drafts (each accepted with p, in order) on the rows that got
        drafts this step (a fraction spec_draft_rate of the decode rows)."""
        cfg, k = self.cfg, self.cfg.spec_tokens
        if not k:
            return rows.ones, None
        drafted = ~is_new & (self.rng.random(rows.B) < cfg.spec_draft_rate)
        acc = np.minimum(self.rng.geometric(1.0 - cfg.spec_acceptance, rows.B) - 1, k) \
            if cfg.spec_acceptance < 1 else np.full(rows.B, k)
        return np.where(drafted, 1 + acc, 1), drafted

    def _grammar_rows(self, rows: "_Rows", drafted, struct) -> tuple[np.ndarray, float, float]:
        """The structured rows' bitmask rows this step (one per request, 1 + k for a request with drafts):
        each row's fill cost, their sum, and the advance (the matchers over this step's tokens, with drafts
        over each draft and back, plus the engine's own fitted work per structured row), in ms."""
        costs, tr, k = self.costs, self.costs.traces, self.cfg.spec_tokens
        off, n = rows.off, rows.n
        pos = self.scheduler.positions(rows.s_slots)
        pos = pos - rows.rlen if self.reasoning else pos  # < 0: reasoning

        def at(values, p):  # a row's cost at answer position p; none while it reasons
            if not self.reasoning:
                return values[off + p % n]
            return np.where(p >= 0, values[off + np.maximum(p, 0) % n], 0.0)
        if k:
            d = drafted[struct]
            per = np.stack([at(costs.fill_row_ms, pos + j) for j in range(k + 1)], 1)
            keep = np.ones(per.shape, bool)
            keep[:, 1:] = d[:, None]
            row_ms, acc_us = per[keep], at(tr.accept_us, pos)
            adv_us = float((acc_us * (1 + 2 * k * d)).sum())
        else:
            if self.reasoning:
                row_ms, acc_us = at(costs.fill_row_ms, pos), at(tr.accept_us, pos)
            else:  # the rows' trace positions, once for both costs (a row ends with its trace, unless
                # --output-tokens holds it longer: then it wraps)
                here = off + pos % n if self.wl.output_tokens is not None else off + pos
                row_ms, acc_us = costs.fill_row_ms[here], tr.accept_us[here]
            adv_us = float(acc_us.sum())
        adv_ms = adv_us * costs.cpu_scale / 1e3 + rows.S * costs.engine_row_ms * costs.cpu_scale
        return row_ms, float(row_ms.sum()), adv_ms

    def _fill_at(self, row_ms: np.ndarray, fill_ms: float, use_pool: bool) -> Callable[[float], FillTimes]:
        """The engine policy's fill of a step's structured rows (Engine.fill), as step_clock calls it: begun at its
        argument."""
        return functools.partial(self.engine.fill, self, row_ms, fill_ms, use_pool)

    def _spin(self, structured_rows: int) -> tuple[float, float] | None:
        """Where the step's copy runs on the OpenMP team (a step of as many structured rows as self.copy_rows),
        its spinners' hold on the engine thread (Engine.spin_share: step.spin_loss_ms); else None."""
        return None if self.spin is None or structured_rows < self.copy_rows else self.spin

    def _trace_step(self, t0: float, forward_ms: float, c: StepClock) -> None:
        """The step's engine-thread CPU, its forward and the spinners' delay, on the trace's lanes, written after the
        spans of the fill that the engine policy writes as it runs (a lane's number is its first span's place)."""
        self.event("advance + engine CPU", "engine thread", t0, c.cpu_serial_ms)
        self.event("forward", "GPU", c.gpu_end_ms - forward_ms, forward_ms)
        self.event("crowded by the copy's spinners", "engine thread", t0 + c.cpu_serial_ms + c.fill.dur_ms,
                   c.crowded_ms)

    def _outputs_leave(self, t0: float, fill_end: float):
        """The previous step's held outputs (async scheduling) leave once this step's fill is done; returns
        the step's clock: env.now, or ahead of it where nothing else is due meanwhile."""
        now = t0
        if self.held is not None:
            if fill_end > t0:
                now = t0 + (fill_end - t0)  # where a timeout to fill_end lands
                # with the API server between, what the release does is to queue a job at `now` and an
                # event after it: with no other event due up to then, neither needs the clock to be there
                # (the same times, and the same order of events: none comes between)
                if self.api is None or self.env.peek() <= now:
                    yield self.env.timeout(fill_end - t0)
            self._release_held(now)
        return now

    def _quiet(self) -> bool:
        """Whether the steps to come may be computed ahead (_quiet_run): no grammar awaited (the engine's
        compile wait would act), no trace recorded, no reasoning rows, and the outputs the engine holds
        (if any) give no client a token it acts on."""
        h = self.held
        return not self.pending and not self.record_trace and not self.reasoning and \
            (h is None or not (h[0].size or h[1].size))

    def _quiet_run(self, t0: float, act: np.ndarray, rids: np.ndarray, context: float, srows: tuple | None,
                   grammar_cpu: bool, terms: CpuTerms, apply_ms: float) -> tuple[int, float]:
        """The steady steps from t0 (the same rows, no drafts, no fill pool, _quiet) before the first in
        which a row ends and before the next event of the simulation (env.peek()): nothing else acts on
        the engine then, so each step is engine_loop's step as arithmetic, to the same times (each the
        sum engine_loop's timeouts make), records and API-server jobs (none of them an event: a steady
        step has no first token and no finished request). Returns (steps run, when the last ends);
        (0, t0) where it would not pay (fewer than 3 steps before a row ends or the next event is due).
        `srows`: (the structured slots, their trace offsets and lengths); `terms`, `apply_ms`: engine_loop's
        per-rows CPU terms and apply (model/step.py computes every step's times, here as there)."""
        cfg, engine = self.cfg, self.engine
        B = n_dec = int(act.size)  # a steady step: every row decodes
        S = 0 if srows is None else int(srows[0].size)
        horizon = self.env.peek()
        J = self._quiet_steps(t0, act, rids, B, S, horizon)
        if not J:
            return 0, t0
        fwd, row_ms, fills, advs = self._quiet_costs(J, B, context, srows)
        async_on = cfg.effective_async
        hold = bool(S) and async_on and engine.holds_outputs()
        none = rids[:0]
        held = self.held
        append, api = self.steps.append, self.api
        n_active = self.scheduler.n_active
        spin, fill_at = self._spin(S), self._fill_at
        ran, t = 0, t0
        for i in range(J):
            fill_ms = adv_ms = 0.0
            if S:
                fill_ms, adv_ms = fills[i], advs[i]
            forward_ms = fwd[i]
            c = step_clock(t, forward_ms, adv_ms, apply_ms, terms, grammar_cpu, async_on,
                           fill_at(row_ms[i], fill_ms, False) if S else no_fill, spin)
            fill_end, t_end = c.fill_end_ms, c.end_ms
            released = t + (fill_end - t) if held is not None and fill_end > t else t
            now = released + (t_end - released) if t_end > released else released
            if now >= horizon:  # an event first: engine_loop runs this step
                break
            if held is not None and api is not None:
                api.stream(held[2], released)
            period = now - t
            append(StepRecord(t, period, B, S, 0, forward_ms, fill_ms, c.fill.pool_wait_ms, apply_ms, adv_ms, 0.0,
                              c.overhead_ms, False, c.fill.thread_fill_ms, n_active, n_dec, n_dec, period - forward_ms))
            if hold:
                held = (none, none, B)
            else:
                held = None
                if api is not None:
                    api.stream(B, now)
            ran, t = ran + 1, now
        if not ran:
            return 0, t0
        self.scheduler.ran_steady(act, ran)  # (B: act's rows, every one decoding)
        self.held = held
        return ran, t

    def _quiet_steps(self, t0: float, act: np.ndarray, rids: np.ndarray, B: int, S: int, horizon: float) -> int:
        """How many steady steps _quiet_run may compute from t0: up to the one before a row ends and before
        the next event could be due (a step lasts at least its forward, at least half the curve's:
        Costs.forward_ms), at most 8192 structured rows' worth; 0 where fewer than 3 fit (it would not pay)."""
        shortest = 0.5 * self.costs.forward_ms(B)
        fit = (horizon - t0) / shortest if shortest > 0 else math.inf
        steps_left = int((self.req.out_len[rids] - self.scheduler.positions(act)).min()) - 1  # the next one ends a row
        if fit < 3 or steps_left < 3:
            return 0
        return int(min(steps_left, max(8, 8192 // max(S, 1)), fit + 1))

    def _quiet_costs(self, J: int, B: int, context: float, srows: tuple | None) -> tuple:
        """The next J steady steps' forwards (Costs.forward_ms elementwise, each at its step's context) and,
        with structured rows, each step's rows' fill costs, their sums and the advance (engine_loop's
        _grammar_rows as arrays)."""
        costs, n_dec = self.costs, B
        j = np.arange(J)
        fwd = np.full(J, costs.forward(B))
        if costs.context_ms_per_token and n_dec:
            ctx = context + j * float(n_dec)
            fwd = np.maximum(0.5 * fwd, fwd + costs.context_ms_per_token * (ctx - n_dec * costs.context_ref))
        g = costs.gpu_factor * costs.forward_factor
        fwd = (fwd * g if g != 1.0 else fwd).tolist()
        if srows is None:
            return fwd, None, None, None
        s_slots, off, n = srows
        S, scale = int(s_slots.size), costs.cpu_scale
        here = off[None, :] + (self.scheduler.positions(s_slots)[None, :] + j[:, None]) % n[None, :]
        row_ms = costs.fill_row_ms[here]
        advs = (costs.traces.accept_us[here].sum(axis=1) * scale / 1e3 + S * costs.engine_row_ms * scale).tolist()
        return fwd, row_ms, row_ms.sum(axis=1).tolist(), advs

    def llamacpp_loop(self):
        """llama.cpp's server loop (model/engines.py, LlamaCpp): decode every active slot in one batch, then
        sample the slots one by one on the same thread; a new structured slot first builds its grammar."""
        env, costs = self.env, self.costs
        row_ms = costs.blackbox.row_us * costs.cpu_scale / 1e3
        step_ms = costs.blackbox.step_us * costs.cpu_scale / 1e3
        launch_ms = costs.blackbox.launch_ms * costs.cpu_scale
        while True:
            act, rids, is_new, struct, prefill_tokens, partial, _, _ = yield from self.scheduler.next_step()
            t0 = env.now
            S, B = int(struct.sum()), int(act.size)
            launch = launch_ms * int((struct & is_new).sum())
            forward_ms = costs.forward_ms(B + partial, prefill_tokens, int((~is_new).sum()),
                                          self.scheduler.context_tokens(act[~is_new]))
            fill_ms = step_ms + S * row_ms if S else 0.0
            self.event("grammar build", "server thread", t0, launch)
            self.event("decode", "server thread", t0 + launch, forward_ms)
            self.event("sample slots (grammar)", "server thread", t0 + launch + forward_ms, fill_ms)
            yield env.timeout(launch + forward_ms + fill_ms)
            self._end_step(act, rids, is_new, np.ones(B, int),
                           StepTimes(t0, env.now - t0, B, S, prefill_tokens, forward_ms, fill_ms, pool_wait_ms=0.0,
                                     apply_ms=0.0, advance_ms=0.0, compile_wait_ms=launch, cpu_overhead_ms=0.0,
                                     pool_used=False, thread_fill_ms=fill_ms))

    def _end_step(self, act: np.ndarray, rids: np.ndarray, is_new: np.ndarray, toks: np.ndarray | None, st: StepTimes,
                  hold: bool = False, n_dec: int | None = None, joined: int | None = None) -> None:
        """Record the step, advance its requests and free the slots of finished ones (Scheduler.advance).
        hold: the outputs wait for the next step's fill (self.held); n_dec: act's decode rows (its
        first n_dec; the rest emit their first token) and joined: the prompt tokens of the rest, where
        the caller knows them (Scheduler.next_step)."""
        spec = self.cfg.spec_tokens
        n_dec = act.size - int(np.count_nonzero(is_new)) if n_dec is None else n_dec
        self.steps.append(StepRecord(*st, self.scheduler.n_active, n_dec, int(toks[~is_new].sum()) if spec else n_dec,
                                     st.period_ms - st.forward_ms))
        done = self.scheduler.advance(act, rids, toks if spec else None, n_dec, joined, self.req.out_len)
        firsts = rids[is_new]  # (a copy: boolean indexing)
        self._release_held()
        n_tok = int(toks.sum()) if spec else act.size
        if hold:
            self.held = (firsts, done, n_tok)
        else:
            self._emit(firsts, done, n_tok)

    def _release_held(self, now: float | None = None) -> None:
        if self.held is not None:
            held, self.held = self.held, None
            self._emit(*held, now=now)

    def _emit(self, firsts: np.ndarray, done: np.ndarray, tokens: int, now: float | None = None) -> None:
        """A step's outputs leave the engine: to the clients, through the API server's queue. `now`: the
        time they leave where the engine is ahead of the clock (engine_loop; with the API server only)."""
        if self.api is None:
            self._deliver(firsts, done)
        else:  # the API server streams the step's tokens after what it has queued; clients hear then
            now = self.env.now if now is None else now
            delay = self.api.stream(tokens, now)
            if firsts.size or done.size:  # else no client hears anything it acts on: no event
                At(self.env, now + delay).callbacks.append(lambda _ev: self._deliver(firsts, done))

    def _deliver(self, firsts: np.ndarray, done: np.ndarray) -> None:
        self.req.first_t[firsts] = self.env.now
        for rid in done.tolist():
            self._finish(rid)

    def _finish(self, rid: int) -> None:
        self.req.done_t[rid] = self.env.now
        self.clients.answered(rid)

    def abort(self, rid: int) -> None:
        """SGLang: 'Grammar preprocessing timed out' after its poll limit (engines.Sglang.compile_wait_ms)."""
        self.req.aborted[rid] = True
        self.pending.pop(rid, None)
        self._finish(rid)

    def run(self) -> "Simulation":
        self.env.run()
        return self
