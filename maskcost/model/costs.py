"""The profile turned into the cost functions the simulation calls: forward time by batch, mask
apply by rows, per-row fill/accept traces (flattened for vectorised lookup), compile costs, and
the pool inflation measured on the calibration host."""
from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
from scipy.interpolate import PchipInterpolator

from ..profile import BackendCosts, ForwardPoint, Profile


# a point whose x lies within this share above the mean x of the knot before it measures that x, and joins it (a
# knot is its points' means): a server held at its cap reads its batch twice, at 127.4 and 128.6 running requests, ITL
# 10.0 and 11.8 ms (shape run 13's schema-off sweep, its API process full at 192 and 256 clients), and the slope
# between the two, 1.4 ms a request carried beyond them, priced a 247-request step's forward at about 180 ms
# (docs/validation.md finding 56)
SAME_X = 0.02


class Curve:
    """Monotone (PCHIP) in the measured range, linear beyond it from the last two knots; a point within SAME_X above
    the knot before it joins that knot."""

    def __init__(self, x: list[float], y: list[float]) -> None:
        groups: list[list[tuple[float, float]]] = []
        for a, b in sorted(zip(map(float, x), map(float, y))):
            if groups and a <= np.mean([p for p, _ in groups[-1]]) * (1 + SAME_X) + 1e-3:
                groups[-1].append((a, b))
            else:
                groups.append([(a, b)])
        self.x = np.array([np.mean([a for a, _ in g]) for g in groups])
        self.y = np.maximum.accumulate(np.array([np.mean([b for _, b in g]) for g in groups]))
        self._f = PchipInterpolator(self.x, self.y) if len(self.x) > 1 else None
        self._memo: dict[float, float] = {}  # a simulation asks for the same batch sizes again and again

    def __call__(self, v: float) -> float:
        r = self._memo.get(v)
        if r is None:
            r = self._memo[v] = self._eval(v)
        return r

    def _eval(self, v: float) -> float:
        x, y = self.x, self.y
        if len(x) == 1:
            return float(y[0] * max(v, 1e-9) / x[0]) if v > x[0] else float(y[0])
        if v <= x[0]:
            return float(y[0])
        if v >= x[-1]:
            slope = (y[-1] - y[-2]) / (x[-1] - x[-2])
            return float(y[-1] + max(0.0, slope) * (v - x[-1]))
        return float(self._f(v))


SYNC_BORROWED_KEY = "sync_points_borrowed_from"  # a profile's provenance: whose async-off points it holds


def forward_curve(points: tuple[ForwardPoint, ...]) -> Curve:
    # the engine's own per-token ITL is the decode step period the model reproduces
    return Curve([p.batch for p in points], [p.itl_ms for p in points])


def hidden_work_ms(async_curve: Curve, sync_curve: Curve, batch: float) -> float:
    """The engine's work a step that async scheduling hides, at `batch` rows: the sync curve over the async one
    (ITL). One sync point: its difference at every batch, not a curve through the origin. (Above the last batch of
    either curve this is the two extrapolations apart: docs/validation.md finding 83.)"""
    if len(sync_curve.x) == 1:
        batch = float(sync_curve.x[0])
    return max(0.0, sync_curve(batch) - async_curve(batch))


@dataclass
class Traces:
    """All traces of one backend flattened: row r at position p costs fill[off[r] + p % n[r]]."""
    schema_ids: list[str]
    by_schema: dict[str, np.ndarray]  # schema id -> trace indices
    off: np.ndarray
    n: np.ndarray
    fill_us: np.ndarray
    accept_us: np.ndarray
    straddle: np.ndarray


def flatten(b: BackendCosts) -> Traces:
    off, n, f, a, s = [], [], [], [], []
    by: dict[str, list[int]] = {}
    pos = 0
    for i, t in enumerate(b.traces):
        off.append(pos)
        n.append(len(t.fill_us))
        pos += len(t.fill_us)
        f.append(t.fill_us)
        a.append(t.accept_us)
        s.append(t.straddle)
        by.setdefault(t.schema_id, []).append(i)
    return Traces(list(by), {k: np.array(v) for k, v in by.items()}, np.array(off), np.array(n),
                  np.concatenate(f).astype(float), np.concatenate(a).astype(float),
                  np.concatenate(s).astype(bool))


def _cpu_scale(cpu_speed: float) -> float:
    if not cpu_speed > 0:
        raise ValueError(f"--cpu-speed {cpu_speed}: must be > 0")
    return 1.0 / cpu_speed


class Costs:
    # what other engines on the host do to this one (model/host_share.py; 1: nothing): the GPU's
    # work (forward, mask apply) and a fill-pool burst take this many times as long
    gpu_factor: float = 1.0
    pool_factor: float = 1.0
    # and the engine's own per-step CPU work measured as an ITL difference (cpu_overhead_ms: not scaled
    # by cpu_speed, it is the profile host's), as the other host work, by this
    overhead_factor: float = 1.0
    # the forward at the engine's tensor parallel size over the profile's (EngineConfig.tp_forward_ratio)
    forward_factor: float = 1.0

    def __init__(self, profile: Profile, backend: str, cpu_speed: float = 1.0) -> None:
        if backend not in profile.backends:
            raise ValueError(f"--backend {backend}: the profile '{profile.name}' has no {backend} traces "
                             f"(it has {', '.join(profile.backends)})")
        self.profile = profile
        b = profile.backends[backend]
        self.blackbox = b.blackbox if not b.traces else None  # black box only where no library traces exist
        self.traces = flatten(b) if b.traces else None
        self.cpu_scale = _cpu_scale(cpu_speed)  # host CPU work scales with single-thread speed
        self._scale_rows()
        self.engine_row_ms = b.engine_row_us / 1e3  # the engine's own per-row grammar work (profile.BackendCosts)
        # what xgrammar's batch fill saves a row at the profile's CPU (vllm#51331; None: not measured)
        self.batch_fill_saving_us = b.batch_fill_saving_us
        self.compile = {c.schema_id: c for c in b.compiles}
        self.forward = forward_curve(profile.forward.points)
        self.forward_sync = forward_curve(profile.forward.sync_points) if profile.forward.sync_points else None
        # async-off points lent by another profile (cli.engine_args.with_async_off_costs) price async-off runs only
        self.sync_borrowed = bool(profile.provenance.get(SYNC_BORROWED_KEY))  # (for_async)
        # the GPU's kernels in a schema-off step at this many rows: NVML's busy share of the window times the
        # engine's step period (window / its steps), where the sweep read it at two loads or more (one point
        # is no curve: Curve would scale it from the origin)
        gpu = [p for p in profile.forward.points if p.gpu_busy is not None]
        self.forward_gpu = Curve([p.batch for p in gpu], [p.gpu_busy * p.step_ms for p in gpu]) \
            if len({round(p.batch, 3) for p in gpu}) >= 2 else None
        self.apply = Curve([p.rows for p in profile.apply.points], [p.apply_us / 1e3 for p in profile.apply.points])
        fw = profile.forward
        # prefill: the measured single-request steps, anchored at one token = the batch-1 forward
        self.prefill = Curve([1.0] + [p.tokens for p in fw.prefill_points],
                             [self.forward(1.0)] + [p.ms for p in fw.prefill_points]) if fw.prefill_points else None
        self.context_ref = fw.context_ref_tokens
        self.eager_prefill_ms = fw.eager_prefill_ms
        self.context_ms_per_token = fw.context_us_per_ktoken / 1e6
        self.pool = [p for p in b.pool if p.workers > 0]
        self._excess_memo: dict[tuple[int, int, bool], float] = {}  # pool_excess_ms, a simulation asks again and again
        self.batched = [p for p in b.pool if p.workers < 0]
        self.calib_cores = profile.host.nproc
        # the engine step as the probe timed it in a live engine (fit --probe --fit-engine-fill)
        ef = b.engine_fill
        self.fill_serial_factor = ef.serial_factor if ef is not None else 1.0
        self.serial_rows_exponent = ef.serial_rows_exponent if ef is not None else 0.0
        if self.serial_rows_exponent:
            rows = np.array([p.running for p in ef.serial_points()])
            self.serial_rows_ref = float(np.exp(np.log(rows).mean()))
            self.serial_rows_lo, self.serial_rows_hi = float(rows.min()), float(rows.max())
        self.fill_pool_factor = ef.pool_factor if ef is not None else 1.0
        self.engine_cpu = Curve([c.batch for c in ef.cpu_points], [c.ms for c in ef.cpu_points]) \
            if ef is not None and ef.cpu_points else None
        # beyond the highest probed batch: the least-squares slope of all the points (two close
        # points at the top would make a noisy one)
        self.engine_cpu_slope = float(max(0.0, np.polyfit(self.engine_cpu.x, self.engine_cpu.y, 1)[0])) \
            if self.engine_cpu is not None and len(self.engine_cpu.x) > 1 else 0.0
        self.engine_pool_excess = Curve([c.chunks for c in ef.pool_excess_points],
                                        [c.ms for c in ef.pool_excess_points]) \
            if ef is not None and ef.pool_excess_points else None
        self.pool_task_factor = 1.0
        if self.engine_pool_excess is not None:
            self.fill_pool_factor = 1.0  # the pool is built from its parts instead (EngineFill)
            self.pool_task_factor = ef.pool_task_factor

    def for_async(self, async_on: bool) -> "Costs":
        """These costs for a run with async scheduling on or off: the same, but where the async-off points are
        borrowed and it runs async, without them (as the profile prices async points on its own)."""
        if not (self.sync_borrowed and async_on):
            return self
        other = copy.copy(self)
        other.forward_sync, other.sync_borrowed = None, False
        return other

    def at_speed(self, cpu_speed: float) -> "Costs":
        """These costs on a host of another single-thread speed: the same curves and traces (and their
        memos), only the host-CPU scale differs (the one thing __init__ reads cpu_speed for)."""
        other = copy.copy(self)
        other.cpu_scale = _cpu_scale(cpu_speed)
        other._scale_rows()
        return other

    def sharing(self, cpu_speed: float, gpu_factor: float, pool_factor: float, overhead_factor: float) -> "Costs":
        """These costs for an engine that shares its host (model/host_share.py): host work at `cpu_speed`,
        the GPU's work, a fill-pool burst and the engine's measured CPU overhead stretched by the factors."""
        other = self.at_speed(cpu_speed)
        other.gpu_factor, other.pool_factor, other.overhead_factor = gpu_factor, pool_factor, overhead_factor
        return other

    def batch_fill_saving_ms(self) -> float:
        """What one batch call per chunk saves a row, at this CPU speed (ms); the profile must have measured it."""
        if self.batch_fill_saving_us is None:
            raise ValueError(f"the profile '{self.profile.name}' has no batch-fill measurement: add it with "
                             f"maskcost calibrate --batch-fill --engine-from PROFILE --tier flat nested deep bounded")
        return self.batch_fill_saving_us * self.cpu_scale / 1e3

    def with_row_saving(self, saving_ms: float) -> "Costs":
        """These costs with every trace position's fill `saving_ms` cheaper (to no less than 0)."""
        other = copy.copy(self)
        other.fill_row_ms = np.maximum(self.fill_row_ms - saving_ms, 0.0)
        return other

    def _scale_rows(self) -> None:
        """fill_row_ms: each trace position's fill in ms at this CPU speed (fill_us x cpu_scale / 1e3,
        elementwise, the very operations a step would run on its rows' gathered values)."""
        self.fill_row_ms = self.traces.fill_us * self.cpu_scale / 1e3 if self.traces is not None else None

    def forward_ms(self, batch: float, prefill_tokens: float = 0.0, decode_rows: float = 0.0,
                   context_tokens: float = 0.0) -> float:
        """One forward: the schema-off curve at this many rows; plus the prefill tokens it computes
        (the single-request prefill step beyond a one-token step); plus the attention over the decode
        rows' context beyond the curve's own (`context_tokens`: summed over the decode rows). A
        profile without prefill or context measurements adds nothing."""
        f = self.forward(batch)
        if prefill_tokens > 1 and self.prefill is not None:
            f += max(0.0, self.prefill(prefill_tokens) - self.prefill(1.0))
        if self.context_ms_per_token and decode_rows:
            f = max(0.5 * f, f + self.context_ms_per_token * (context_tokens - decode_rows * self.context_ref))
        return f * self.gpu_factor * self.forward_factor

    def with_forward_factor(self, factor: float) -> "Costs":
        """These costs with every forward `factor` times as long (another tensor parallel size)."""
        other = copy.copy(self)
        other.forward_factor = factor
        return other

    def forward_host_ms(self, batch: np.ndarray) -> np.ndarray | None:
        """The host's part of the forward at each of these row counts (a step's requests): the schema-off
        forward less the GPU's kernels in a step of that many rows (forward_gpu), at least 0 (where the
        kernels take the whole forward, all of it is the GPU's); None where the profile's sweep did not read
        the GPU's busy fraction."""
        if self.forward_gpu is None:
            return None
        host = {b: max(0.0, self.forward(b) - self.forward_gpu(b)) for b in np.unique(batch).tolist()}
        return np.array([host[b] for b in batch.tolist()], float)

    def serial_fill_factor(self, rows: int) -> float:
        """In-engine over the model's serial fill at a step of `rows` bitmask rows: the profile's
        serial factor, times (rows / ref)^exponent where the profile fitted one (EngineFill)."""
        if not self.serial_rows_exponent:
            return self.fill_serial_factor
        r = min(max(float(rows), self.serial_rows_lo), self.serial_rows_hi)
        return self.fill_serial_factor * (r / self.serial_rows_ref) ** self.serial_rows_exponent

    def cpu_overhead_ms(self, batch: float) -> float:
        """Engine CPU work per step that async scheduling hides when no grammar is present:
        schema-off ITL with --no-async-scheduling minus with it (0 where not measured; hidden_work_ms)."""
        if self.forward_sync is None:
            return 0.0
        return hidden_work_ms(self.forward, self.forward_sync, batch) * self.overhead_factor

    def grammar_step_cpu_terms(self, batch: float) -> tuple[float, float]:
        """The engine thread's work per step besides the fill when grammar rows are in the batch
        (async scheduling cannot hide it then), for an advance of a ms: max(a + add, floor), the probe's
        curve where the profile has one (add 0), else the advance + the schema-off sync overhead
        (floor 0). (add, floor) depend on the batch alone: a run of steps of one batch computes them once."""
        if self.engine_cpu is None:
            return self.cpu_overhead_ms(batch), 0.0
        x0 = float(self.engine_cpu.x[0])
        if batch < x0:  # below the lowest probed batch: linear down to the profile's own at one row
            lo = self.cpu_overhead_ms(1.0)
            w = (batch - 1.0) / (x0 - 1.0) if x0 > 1.0 else 1.0
            ms = lo + max(0.0, w) * (self.engine_cpu(x0) * self.cpu_scale - lo)
        elif batch > self.engine_cpu.x[-1]:
            x1 = float(self.engine_cpu.x[-1])
            ms = (self.engine_cpu(x1) + self.engine_cpu_slope * (batch - x1)) * self.cpu_scale
        else:
            ms = self.engine_cpu(batch) * self.cpu_scale
        return 0.0, ms

    def apply_ms(self, rows: int) -> float:
        return self.apply(rows) * self.gpu_factor if rows else 0.0

    def pool_excess_ms(self, workers: int, rows: int, batched: bool = False) -> float:
        """What the pool costs beyond ideal list scheduling on this many workers (thread hand-off,
        GIL, contention), measured on the calibration host: parallel wall - ideal wall at the
        nearest measured worker count (capped at the calibration host's cores) and row count.
        Additive, not a factor: the calibration shows it is a fixed cost per fill (a factor of up
        to 13 on cheap 128-row fills, under 1.5 on heavy 256-row ones)."""
        key = (workers, rows, batched)
        ms = self._excess_memo.get(key)  # (shared with the other speeds' costs: at the calibration host's)
        if ms is None:
            ms = self._excess_memo[key] = self._pool_excess_at_calibration_ms(workers, rows, batched)
        return ms * self.cpu_scale

    def _pool_excess_at_calibration_ms(self, workers: int, rows: int, batched: bool) -> float:
        pts = self.batched if batched else self.pool
        if workers <= 1 or not pts:
            return 0.0
        w_want = min(workers, self.calib_cores)
        ws = sorted({abs(p.workers) for p in pts})
        w = max([x for x in ws if x <= w_want] or [ws[0]])
        cand = [p for p in pts if abs(p.workers) == w]
        p = min(cand, key=lambda p: abs(np.log(p.rows / max(rows, 1))))
        return max(0.0, p.parallel_us - p.ideal_us) / 1e3
