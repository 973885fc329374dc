"""One host, many engines: replicas that share the host's cores (and maybe one GPU), and a cgroup CPU quota.

The simulation runs one engine (model/engine.py). `replicas` engines serving the same load each are
alike, so the model runs one of them with what the others do to it, found as a fixed point (a mean
field: each other replica is taken at its average, not step by step):

- **One GPU for all** (`replica_gpu` "shared"): without MPS the GPU time-slices the CUDA contexts of
  the processes on it, so a replica's kernels progress at 1 / (1 + the forwards of others in flight).
  With each other replica's forward in flight a fraction u of the time, a forward (and the mask's
  copy and apply) takes 1 + (N - 1) u as long (processor sharing). Two schema-off replicas, each with
  its GPU busy nearly all the time, so take twice as long a step (measured on one H200, issue 39's
  exploration: 7.1 ms alone, 14.7 and 15.6 ms together).
- **One set of cores** (`usable_cores`, a cpuset all replicas run on): each replica's engine thread
  (busy while it steps, in its own work or spinning on the GPU's result, CUDA's default wait where
  cores outnumber contexts), its API server, its fill pool (vLLM: min(cpu_count // 2, 8) threads;
  SGLang with llguidance: the rayon pool), its compile pool, all sized from cpu_count as if alone.
  With xgrammar on vLLM, each step's bitmask is copied into pinned memory on the engine's OpenMP team
  (omp_threads: the cores it started on), whose other threads then spin (omp_spin_ms,
  Engine.copy_spinners): CPU too; so are
  a tensor-parallel engine's worker processes, each busy while the engine steps (tp_worker_threads).
  A replica's demand rho is the CPUs those threads keep busy on average (Demand, read from its run);
  the others add L = (N - 1) rho. On C cores, work that runs while rho + L threads want a core is
  slowed by max(1, (rho + L) / C), and a fill-pool burst of k threads (with the replica's own API
  server, a) by max(1, (k + a + L) / C), each relative to the same with L = 0, since the
  single-engine model (what one replica alone is calibrated and checked as) is the reference: one
  replica gives factors of 1 exactly. The copy's spinners are not spread: the model takes a replica's k
  spinners to spin all at once (the team is released together after its copy), for about omp_spin_ms
  after each of the replica's copies, a fraction f = copy_spin / k of the time. The host factor is then
  the mean over how many of the others are in such a burst (each independently, with probability f, a
  mean field still; a burst adds its k threads to the others' CPUs less their spinners), and during the
  replica's own burst its team shares the cores with the others' average CPUs (Share.crowd_cpus,
  Engine.spin_share). Two replicas of a team of 8 each on 8 cores at 64 clients, 2.1 CPUs each on average
  (4.2 of 8: no slowdown by the average alone): measured 8%, 19% and 14% slower on three machines, the
  model 14%. Not in it: the pool burst meeting the others' bursts (pool_factor takes their average), and
  a quota's period walk spreads the spinners over the step (cpu_segments).
- **A CPU quota** (`cpu_quota`, cgroup v2 cpu.max): the group's threads run on any usable core until
  they have used quota x period of CPU time in the period (PERIOD_MS, cpu.max's default 100 ms), then
  all wait to its end. The pools are still sized from cpu_count, and they run as wide as the usable
  cores allow. The model walks the replica's run period by period (throttled_ms): the CPUs it keeps
  busy through each step (its engine thread, a fill-pool burst while the engine thread waits for it,
  the API server and the compile pool at their run's average) spend the period's budget; once it is
  spent the replica waits to the period's end. A steady demand rho > Q runs at Q / rho of its pace
  (the mean field); a burst (a pool of 8 threads) can spend a period's budget while the average is
  under the quota, and then the rest of that period is lost. The factor, wall time over unthrottled
  time, stretches every part of the next round's step alike (the GPU's next launch waits for the
  throttled engine thread): the mean ITL is modelled, not where in a period a stall falls (a step's
  tail), and a forward in flight is taken to stall with the host.

Each round runs the replica with the factors the last one's demand gives, until no factor moves by
more than TOLERANCE (at most MAX_ROUNDS rounds; a run that did not settle says so).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .config import EngineConfig, Workload
from .costs import Costs
from .engine import Simulation
from .metrics import step_columns

TOLERANCE = 0.005
MAX_ROUNDS = 12
PERIOD_MS = 100.0  # cgroup v2 cpu.max's default period ("max 100000" us)


@dataclass(frozen=True)
class Demand:
    """What one replica uses, averaged over its run's wall time: CPUs by thread kind, and the GPU."""
    engine_thread: float  # the time it steps (its own work, or spinning on the GPU), less its waits for other fill threads
    api_server: float  # the API server's jobs (admission, streaming)
    fill_pool: float  # CPU time of the threads that fill beside it (vLLM's pool, llguidance's batched fill): their rows
    compile_pool: float
    gpu: float  # the fraction of the time a forward is in flight
    copy_spin: float = 0.0  # the OpenMP threads that spin after each step's bitmask copy (Engine.copy_spinners)
    tp_workers: float = 0.0  # a tensor-parallel engine's worker processes, busy while it steps (Engine.tp_worker_threads)

    @property
    def cpus(self) -> float:
        return (self.engine_thread + self.api_server + self.fill_pool + self.compile_pool + self.copy_spin
                + self.tp_workers)


@dataclass(frozen=True)
class Share:
    """What the other replicas and the quota do to one replica: factors on how long its parts take (the
    pool's is over host_factor, so it can be below 1 where a burst contends less than the engine's other work)."""
    gpu_factor: float = 1.0  # a forward, the mask's copy and apply (the GPU's time-slicing)
    host_factor: float = 1.0  # every host thread's work (the others' demand on the cores)
    pool_factor: float = 1.0  # a fill-pool burst, beyond host_factor
    quota_factor: float = 1.0  # every part of the step (the quota's throttling)
    crowd_cpus: float = 0.0  # the others' CPUs (their average) beside the replica's own spinners' burst (Engine.spin_share)

    def close_to(self, other: "Share") -> bool:
        return all(math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=TOLERANCE)
                   for a, b in zip(asdict(self).values(), asdict(other).values()))


def _step_cpu(sim: Simulation) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, float]:
    """A run's steps as columns, and per step the engine thread's waits for other fill threads and the
    CPU time of those threads (ms), and the run's end (ms). The columns gain spin_ms: the CPU the
    OpenMP team spins after the step's bitmask copy, each spinner until the next step's or omp_spin_ms."""
    col = step_columns(sim.steps)
    t_end = float(col["t_start_ms"][-1] + col["period_ms"][-1])
    cfg = sim.cfg
    big = col["structured_rows"] >= sim.copy_rows  # the steps whose copy ran on the team
    until_next = np.append(np.diff(col["t_start_ms"]), col["period_ms"][-1])
    col["spin_ms"] = np.where(big, cfg.policy.copy_spinners(cfg) * np.minimum(cfg.omp_spin_ms, until_next), 0.0)
    pool = col["pool_used"] > 0
    batched = sim.engine.fills_batched(sim)  # (SGLang's llguidance: every fill on its rayon pool)
    # the engine thread waits (not runs) while other threads fill: vLLM's pool, or the batched fill
    waits = np.where(pool, col["pool_wait_ms"], col["thread_fill_ms"] if batched else 0.0)
    pool_fill = col["fill_ms"] if batched else np.where(pool, col["fill_ms"], 0.0)
    return col, waits, pool_fill, t_end


def demand(sim: Simulation) -> Demand:
    """A finished run's Demand, over the time from its start to its last step's end."""
    if not sim.steps:
        return Demand(0.0, 0.0, 0.0, 0.0, 0.0)
    col, waits, pool_fill, t_end = _step_cpu(sim)
    if t_end <= 0:
        return Demand(0.0, 0.0, 0.0, 0.0, 0.0)
    return Demand(engine_thread=float((col["period_ms"] - waits).sum()) / t_end,
                  api_server=(sim.api.busy_ms if sim.api is not None else 0.0) / t_end,
                  fill_pool=float(pool_fill.sum()) / t_end, compile_pool=sim.compiler.busy_ms / t_end,
                  gpu=min(1.0, float(col["forward_ms"].sum()) / t_end), copy_spin=float(col["spin_ms"].sum()) / t_end,
                  tp_workers=sim.cfg.policy.tp_worker_threads(sim.cfg) * float(col["period_ms"].sum()) / t_end)


def cpu_segments(sim: Simulation, d: Demand) -> tuple[np.ndarray, np.ndarray]:
    """A run's CPU use over time as segments (durations ms, CPUs busy): per step, the engine thread's
    part (1 CPU) and the pool's burst while the engine thread waits for it (the pool's CPU time over that
    wait), then the gap to the next step (the engine thread idle); the copy's spinners spread over the
    step and its gap; a tensor-parallel engine's workers through its steps; the API server and the compile
    pool beside them at their run's average (d)."""
    if not sim.steps:
        return np.zeros(0), np.zeros(0)
    col, waits, pool_fill, t_end = _step_cpu(sim)
    start, period = col["t_start_ms"], col["period_ms"]
    gap = np.maximum(np.append(start[1:], t_end) - (start + period), 0.0)
    burst = np.divide(pool_fill, waits, out=np.zeros_like(waits), where=waits > 0)
    dur = np.column_stack([period - waits, waits, gap]).ravel()
    spin = np.divide(col["spin_ms"], period + gap, out=np.zeros_like(waits), where=period + gap > 0)
    workers = float(sim.cfg.policy.tp_worker_threads(sim.cfg))  # busy while the engine steps, not in its gaps
    cpus = (np.column_stack([np.ones_like(waits) + workers, burst + workers, np.zeros_like(waits)])
            + spin[:, None]).ravel()
    return dur, cpus + d.api_server + d.compile_pool


def throttled_ms(dur_ms: np.ndarray, cpus: np.ndarray, quota_cpus: float, period_ms: float = PERIOD_MS) -> float:
    """The wall time the segments (durations ms, CPUs busy, as they run with no quota) take under a quota
    of quota_cpus a period: each period's budget quota_cpus x period_ms spent as they run, and once it
    is spent, the rest of the period waited out (the module doc). Periods begin at 0."""
    budget = quota_cpus * period_ms
    wall, left, period_end = 0.0, budget, period_ms
    for du, r in zip(dur_ms.tolist(), cpus.tolist()):
        while du > 1e-9:
            x = min(du, period_end - wall, left / r if r > 0 else du)
            wall, du, left = wall + x, du - x, left - r * x
            if du > 1e-9 and left <= 1e-9 * budget:
                wall = period_end  # throttled to the period's end
            if wall >= period_end - 1e-9:
                period_end, left = period_end + period_ms, budget
    return wall


def quota_factor(cfg: EngineConfig, d: Demand, segments: tuple[np.ndarray, np.ndarray] | None = None,
                 ran_at: float = 1.0) -> float:
    """How much longer a replica's run takes under cfg.cpu_quota: its segments (of a run stretched by
    ran_at, the factor it ran at) walked period by period; without segments, the mean field max(1, rho / Q)."""
    if cfg.cpu_quota is None:
        return 1.0
    if segments is None or not segments[0].size:
        return max(1.0, d.cpus / cfg.cpu_quota)
    dur, cpus = segments[0] / ran_at, segments[1]
    total = float(dur.sum())
    return max(1.0, throttled_ms(dur, cpus, cfg.cpu_quota) / total) if total > 0 else 1.0


def next_share(cfg: EngineConfig, d: Demand, quota: float | None = None) -> Share:
    """The factors a replica of demand `d` meets beside cfg.replicas - 1 others like it (module doc);
    quota: its quota's factor (quota_factor), None for the mean field's."""
    rho = d.cpus
    quota = quota_factor(cfg, d) if quota is None else quota
    held = rho if cfg.cpu_quota is None else min(rho, cfg.cpu_quota)  # the CPUs a replica holds on average
    others = (cfg.replicas - 1) * held
    cores = float(cfg.usable_cores)

    def slowdown(threads: float, others: float = others) -> float:  # with the others, relative to alone
        return max(1.0, (threads + others) / cores) / max(1.0, threads / cores)
    spinners = cfg.policy.copy_spinners(cfg)
    if spinners and d.copy_spin > 0:  # the others' bursts (module doc): j of them spinning at once
        f = min(1.0, d.copy_spin / spinners)
        n = cfg.replicas - 1
        steady = others * (1.0 - d.copy_spin / rho)  # the others less their spinners (held: under a quota, in part)
        host = sum(math.comb(n, j) * f ** j * (1 - f) ** (n - j) * slowdown(held, steady + j * spinners)
                   for j in range(n + 1))
    else:
        host = slowdown(held)
    k = cfg.policy.pool_threads(cfg)
    pool = slowdown(k + d.api_server) / host if k else 1.0
    gpu = 1.0 + (cfg.replicas - 1) * d.gpu if cfg.replica_gpu == "shared" else 1.0
    return Share(gpu_factor=gpu, host_factor=host, pool_factor=pool, quota_factor=quota,
                 crowd_cpus=others if spinners else 0.0)


def shared_costs(costs: Costs, cfg: EngineConfig, share: Share) -> Costs:
    q = share.quota_factor
    return costs.sharing(cfg.cpu_speed / (share.host_factor * q), share.gpu_factor * q, share.pool_factor,
                         share.host_factor * q)


def simulate(costs: Costs, cfg: EngineConfig, wl: Workload, record_trace: bool = False
             ) -> tuple[Simulation, dict[str, Any] | None]:
    """One replica's run (`costs` at cfg.cpu_speed), and where cfg.host_shared what sharing did to it:
    the factors it ran at, its demand, the rounds to the fixed point; None where it runs alone."""
    if not cfg.host_shared:
        return Simulation(costs, cfg, wl, record_trace).run(), None
    share, rounds, settled = Share(), 0, False
    while True:
        rounds += 1
        sim = Simulation(shared_costs(costs, cfg, share), cfg, wl, record_trace, crowd_cpus=share.crowd_cpus).run()
        d = demand(sim)
        q = quota_factor(cfg, d, cpu_segments(sim, d), share.quota_factor) if cfg.cpu_quota is not None else 1.0
        nxt = next_share(cfg, d, q)
        if nxt.close_to(share):
            settled = True
            break
        if rounds >= MAX_ROUNDS:
            break
        share = nxt
    return sim, {"replicas": cfg.replicas, "replica_gpu": cfg.replica_gpu, "cpu_quota": cfg.cpu_quota,
                 "factors": asdict(share), "demand": {**asdict(d), "cpus": d.cpus},
                 "rounds": rounds, "settled": settled}
