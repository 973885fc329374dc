"""The engine's scheduler over its max_num_seqs slots, as the simulation has it.

vLLM v1's (vllm/v1/core/sched/scheduler.py, chunked prefill always on): the running requests first (a
decode row takes 1 + spec tokens of the step's token budget, an unfinished prompt the rest of it, in
admission order), then the waiting ones while a slot and budget remain; a prompt takes min(what is left of
it, the budget left) tokens. SGLang's prefill batch runs alone (Engine.prefill_apart: the decode rows wait
for the next step).

Running requests live in slot arrays so that a step's rows are gathered with numpy: a step of 256 rows
costs a few vector operations, not 256 Python calls; what changes only as slots change (which slots decode,
their summed context) is kept, not summed again, and a step without prompt chunks has the last such step's
rows (`steady`) until a prompt's last chunk runs or a slot is freed (`rows_version`).
"""
from __future__ import annotations

from collections import deque
from typing import Callable

import numpy as np
import simpy


class Scheduler:
    def __init__(self, env: simpy.Environment, max_num_seqs: int, token_budget: int, spec_tokens: int,
                 prefill_apart: bool, req_prefill: np.ndarray, req_prompt: np.ndarray, structured: np.ndarray,
                 on_idle: Callable[[], None]) -> None:
        self.env, self.token_budget, self.spec_tokens, self.prefill_apart = env, token_budget, spec_tokens, prefill_apart
        self.req_prefill, self.req_prompt, self.structured = req_prefill, req_prompt, structured
        self.all_structured = bool(structured.all())
        self.on_idle = on_idle  # nothing to run: what the engine does first (returns the outputs it holds)
        m = max_num_seqs
        self.waiting: deque[int] = deque()
        self.wakeup = env.event()
        self.active = np.zeros(m, bool)
        self.n_active = 0  # self.active.sum()
        self.rows_version = 0
        self.steady: tuple = (-1, None)  # (rows_version, the step) of the last step without prompt chunks
        self.rid = np.zeros(m, int)
        self.pos = np.zeros(m, int)  # tokens emitted
        self.prefill = np.zeros(m, int)  # prompt tokens still to compute
        self.decoding = np.zeros(m, bool)  # active & (prefill == 0), kept as slots change
        # the context of the rows that have emitted and still run, sum of prompt + position (an int, kept
        # as they change): what a step's decode rows attend over (engine_loop)
        self.ctx_dec = 0
        self._ar = np.arange(m)  # (a step's row indices: is_new)
        self._masks: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}  # next_step, read-only
        self.prefilling: deque[int] = deque()  # slots with prompt left, in admission order
        self.prompt = np.zeros(m, int)
        self.free_slots = list(range(m))[::-1]

    def schedulable(self, rid: int) -> None:
        """Request `rid` (its grammar ready) joins the waiting queue; the engine wakes if it sleeps."""
        self.waiting.append(rid)
        if not self.wakeup.triggered:
            self.wakeup.succeed()

    def _schedule(self) -> tuple[np.ndarray, list[tuple[int, int]]]:
        """The decode slots and the (slot, tokens) prefill chunks of the next step (the module's rule)."""
        budget = self.token_budget
        dec = self.decoding.nonzero()[0]
        budget -= dec.size * (1 + self.spec_tokens)
        chunks = []
        for s in self.prefilling:
            if budget <= 0:
                break
            c = min(int(self.prefill[s]), budget)
            chunks.append((s, c))
            budget -= c
        while self.waiting and self.free_slots and budget > 0:
            rid = self.waiting.popleft()
            s = self.free_slots.pop()
            self.active[s], self.rid[s], self.pos[s] = True, rid, 0
            self.n_active += 1
            self.prefill[s], self.prompt[s] = self.req_prefill[rid], self.req_prompt[rid]
            self.prefilling.append(s)
            c = min(int(self.prefill[s]), budget)
            chunks.append((s, c))
            budget -= c
        return dec, chunks

    def next_step(self):
        """The next step, sleeping while nothing is runnable: the slots that emit a token (decode
        rows, then prompts whose last chunk is in this step), their requests, which of them emit
        their first token, which are structured; the prompt tokens computed; the rows in a
        non-final prefill chunk (no token, no bitmask row: docs/engines.md, structured_output_request_ids); the
        decode slots (the first of the slots that emit); the prompt tokens of the rows that emit their first."""
        while True:
            if self.steady[0] == self.rows_version and not self.prefilling and not (self.waiting and self.free_slots):
                return self.steady[1]  # no prompt to schedule: the last such step's rows
            dec, chunks = self._schedule()
            if chunks and self.prefill_apart:
                dec = dec[:0]  # SGLang: the prefill batch runs alone; the decode rows wait for the next step
            if dec.size or chunks:
                return self._step(dec, chunks)
            self.on_idle()
            self.wakeup = self.env.event()
            yield self.wakeup

    def _step(self, dec: np.ndarray, chunks: list[tuple[int, int]]) -> tuple:
        final, joined, prompt_tokens = [], 0, 0
        for s, c in chunks:
            prompt_tokens += c
            self.prefill[s] -= c
            if self.prefill[s] == 0:
                final.append(s)
        for s in final:
            self.prefilling.remove(s)
            self.decoding[s] = True
            joined += int(self.prompt[s])
        if final:
            self.rows_version += 1
        act = np.concatenate([dec, np.array(final, int)]) if final else dec
        rids = self.rid[act]
        shape = (act.size, dec.size)  # is_new and (all structured) struct depend on it alone
        masks = self._masks.get(shape)
        if masks is None:
            masks = self._masks[shape] = (self._ar[:act.size] >= dec.size, np.ones(act.size, bool))
        step = (act, rids, masks[0], masks[1] if self.all_structured else self.structured[rids],
                prompt_tokens, len(chunks) - len(final), dec, joined)
        if not chunks:
            self.steady = (self.rows_version, step)  # dec.size > 0 here
        return step

    def positions(self, slots: np.ndarray) -> np.ndarray:
        """The tokens each of `slots` has emitted (a copy)."""
        return self.pos[slots]

    def requests(self, slots: np.ndarray) -> np.ndarray:
        """The request in each of `slots` (a copy)."""
        return self.rid[slots]

    def steady_step(self) -> tuple | None:
        """The last step without prompt chunks (next_step's), None before one."""
        return self.steady[1]

    def decode_context(self) -> float:
        """The context every row that has emitted and runs attends over, summed (ctx_dec)."""
        return float(self.ctx_dec)

    def ran_steady(self, act: np.ndarray, steps: int) -> None:
        """`steps` steady steps of the rows `act` computed ahead (Simulation._quiet_run: every row decodes, none
        ends): each row `steps` tokens on, the context with them."""
        self.pos[act] += steps
        self.ctx_dec += steps * int(act.size)

    def context_tokens(self, dec_slots: np.ndarray) -> float:
        """Context the step's decode rows attend over, prompt + tokens generated so far summed: every
        row that has emitted and runs (ctx_dec), where the step's decode rows are not held back."""
        return float(self.ctx_dec) if dec_slots.size else 0.0

    def advance(self, act: np.ndarray, rids: np.ndarray, toks: np.ndarray | None, n_dec: int, joined: int | None,
                out_len: np.ndarray) -> np.ndarray:
        """The step's rows one token on (`toks`: each row's accepted drafts + 1, with speculative decoding),
        a prompt's first token joining the context (`joined`: its prompt tokens, None: summed here); the
        slots of the requests that reached their output length freed (the engine frees the slot now; the
        client hears of it when the API server streams it). Returns those requests."""
        pos = self.pos[act] + (toks if toks is not None else 1)
        self.pos[act] = pos
        if joined is None:
            joined = int(self.prompt[act[n_dec:]].sum()) if n_dec < act.size else 0
        self.ctx_dec += (int(toks.sum()) if toks is not None else act.size) + joined
        ended = act[pos >= out_len[rids]]
        done = self.rid[ended]  # (a copy: fancy indexing)
        if ended.size:
            self.rows_version += 1
        for s in ended.tolist():
            self.active[s] = self.decoding[s] = False
            self.n_active -= 1
            self.ctx_dec -= int(self.prompt[s]) + int(self.pos[s])
            self.free_slots.append(s)
        return done
