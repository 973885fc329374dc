"""One engine step's times as arithmetic, and the record a step leaves.

Both of the simulation's engine loops (model/engine.py: engine_loop, step by step; _quiet_run, a run of steady
steps in one go) take a step's times from one function, step_clock (pure but for the trace spans the engine
policy's fill writes), so the two cannot drift apart. The step (docs/engines.md; each engine's mechanisms:
model/engines.py): the engine thread's serial CPU work (advance the matchers, the engine's own per-step work,
a compile it waits for) starts the step; the GPU forward runs beside it (after it, in a sync step with a
grammar row); the fill follows the serial work (on the engine thread or the pool: the engine policy says how
long); the mask is copied and applied when both the fill and the forward are done; a sync step without a
grammar row runs its serial work after that. Everything here is in ms of simulated time.

Invariants (tests/test_model.py checks them on step_clock and that the two loops give the same steps;
tests/test_golden.py the whole grid):
- the serial CPU part is never negative and is at least the compile wait;
- a step ends no earlier than its forward, its fill, and the apply after both;
- the spinners' contention (spin_loss_ms) only delays the engine thread's work, never shortens it.
"""
from __future__ import annotations

from collections import namedtuple
from typing import Callable, NamedTuple


class StepTimes(NamedTuple):
    """What one engine step did and how long each part took (ms): an engine loop's word to _end_step."""
    t_start_ms: float
    period_ms: float
    batch: int  # rows that emit a token this step
    structured_rows: int
    prefill_tokens: int
    forward_ms: float
    fill_ms: float
    pool_wait_ms: float
    apply_ms: float
    advance_ms: float
    compile_wait_ms: float
    cpu_overhead_ms: float
    pool_used: bool
    thread_fill_ms: float  # the fill the engine thread did itself: the serial fill, 0 on a pool step


# One recorded step (Simulation.steps): the loop's StepTimes, then what _end_step counts of it (the slots
# running, the decode rows, their tokens, the step beyond its forward); metrics reads them as columns
StepRecord = namedtuple("StepRecord", StepTimes._fields + ("running", "decode_rows", "tokens", "exposed_ms"))
STEP_FIELDS = StepRecord._fields


class CpuTerms(NamedTuple):
    """The engine thread's per-step work that depends on the rows' counts alone (Costs.grammar_step_cpu_terms,
    Costs.cpu_overhead_ms): with a grammar row, max(advance + add, floor) - advance beyond the advance;
    without one, the schema-off overhead."""
    cpu_add_ms: float
    cpu_floor_ms: float
    overhead_off_ms: float


def serial_cpu(adv_ms: float, terms: CpuTerms, grammar_cpu: bool, async_on: bool,
               compile_wait_ms: float = 0.0) -> tuple[float, float]:
    """(the engine's own CPU work beyond the advance, the serial CPU part that starts the step). With a
    grammar row or async scheduling, the advance and that work run first; a sync step without a grammar
    row runs them after the apply (step_end)."""
    if grammar_cpu:
        overhead_ms = max(adv_ms + terms.cpu_add_ms, terms.cpu_floor_ms) - adv_ms
    else:
        overhead_ms = terms.overhead_off_ms
    return overhead_ms, (adv_ms + overhead_ms if async_on or grammar_cpu else 0.0) + compile_wait_ms


def gpu_end(t0: float, cpu_serial_ms: float, forward_ms: float, grammar_cpu: bool, async_on: bool) -> float:
    """When the forward ends: after the serial CPU part in a sync step with a grammar row, else beside it."""
    return t0 + cpu_serial_ms + forward_ms if grammar_cpu and not async_on else t0 + forward_ms


def step_end(fill_end: float, gpu_end_ms: float, apply_ms: float, adv_ms: float, overhead_ms: float,
             grammar_cpu: bool, async_on: bool) -> tuple[float, float]:
    """(when the mask's copy and apply start, when the step ends): the apply after both the fill and the
    forward; a sync step without a grammar row then samples and advances (its serial work)."""
    t_apply = max(fill_end, gpu_end_ms)
    t_end = t_apply + apply_ms
    if not async_on and not grammar_cpu:
        t_end += adv_ms + overhead_ms
    return t_apply, t_end


def spin_loss_ms(work_ms: float, share: float, window_ms: float) -> float:
    """How much later the engine thread ends `work_ms` of CPU work begun as a step's copy spinners start,
    while it holds `share` of a core for `window_ms` (Engine.spin_share): all of it slowed where it ends inside
    the window, else the window's lost part."""
    if work_ms <= share * window_ms:
        return work_ms * (1.0 / share - 1.0)
    return window_ms * (1.0 - share)


_new = tuple.__new__  # (a NamedTuple made without its Python __new__: twice as fast, once a step)


class FillTimes(NamedTuple):
    """A step's bitmask fill as the engine policy ran it (Engine.fill), ms: its duration, the engine thread's wait
    for a pool, and the fill the engine thread did itself (the serial fill; 0 on a pool step)."""
    dur_ms: float
    pool_wait_ms: float
    thread_fill_ms: float


NO_FILL = FillTimes(0.0, 0.0, 0.0)


def fill_times(dur_ms: float, pool_wait_ms: float, thread_fill_ms: float) -> FillTimes:
    """FillTimes, made the fast way (once a step with a structured row)."""
    return _new(FillTimes, (dur_ms, pool_wait_ms, thread_fill_ms))


def no_fill(start_ms: float) -> FillTimes:
    """The fill of a step without a structured row."""
    return NO_FILL


class StepClock(NamedTuple):
    """A step's clock (step_clock): what its parts took (durations, ms) and when they start or end (ms of
    simulated time)."""
    overhead_ms: float  # duration: the engine's own CPU work beyond the advance
    cpu_serial_ms: float  # duration: the serial CPU part that starts the step at t0
    gpu_end_ms: float  # time: the forward's end
    fill: FillTimes
    crowded_ms: float  # duration: how much later the copy's spinners make the engine thread's work end
    fill_end_ms: float  # time: the fill's end, the spinners' delay included (when held outputs leave)
    apply_at_ms: float  # time: the mask's copy and apply start
    end_ms: float  # time: the step's end


def step_clock(t0: float, forward_ms: float, adv_ms: float, apply_ms: float, terms: CpuTerms, grammar_cpu: bool,
               async_on: bool, fill_at: Callable[[float], FillTimes], spin: tuple[float, float] | None = None,
               compile_wait_ms: float = 0.0) -> StepClock:
    """A step's times from t0 once its rows' costs are known: the engine thread's serial CPU (serial_cpu) and the
    forward beside it or after it (gpu_end), the fill from the serial part's end (`fill_at(start)`: the engine
    policy's fill of the step's rows; its times depend on the rows alone), later by what the copy's spinners
    cost the engine thread's work where they crowd it (`spin`: Engine.spin_share's (share, window); None where
    the step's copy has no spinners), then the apply and the step's end (step_end)."""
    overhead_ms, cpu_serial = serial_cpu(adv_ms, terms, grammar_cpu, async_on, compile_wait_ms)
    gpu_end_ms = gpu_end(t0, cpu_serial, forward_ms, grammar_cpu, async_on)
    fill = fill_at(t0 + cpu_serial)
    crowded = 0.0 if spin is None else spin_loss_ms(cpu_serial + fill.thread_fill_ms, *spin)
    fill_end_ms = t0 + cpu_serial + fill.dur_ms + crowded
    apply_at, end = step_end(fill_end_ms, gpu_end_ms, apply_ms, adv_ms, overhead_ms, grammar_cpu, async_on)
    return _new(StepClock, (overhead_ms, cpu_serial, gpu_end_ms, fill, crowded, fill_end_ms, apply_at, end))
