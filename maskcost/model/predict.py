"""A what-if grid: every combination of the given engine/host/load values, each run twice (with
the schemas, and the schema-off arm of the same point), reported with the overhead; simulations
that several points share (sim_key, off_key) run once."""
from __future__ import annotations

import itertools
import json
import os
import signal
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, Callable, Iterable

from tqdm import tqdm

from ..profile import Profile
from .config import EngineConfig, Workload
from .costs import Costs
from .engine import Simulation
from .engines import mechanisms_version
from .host_share import demand, simulate
from .metrics import step_columns, summarize
from ..point import Band, Breakdown, OffArm, Point


# predict's run length: each point runs until its ITL mean is known to +- this share of itself (95%, batch means),
# at most PRECISION_CAP x default_requests requests. A fixed max(200, 4 x clients) left a point's ITL known to +-6-14%
# (95%) where a schema's few outputs carry most of its fill (docs/validation.md finding 46). validate, report and the
# llama.cpp loop still run their own fixed counts.
DEFAULT_PRECISION = 0.02
PRECISION_CAP = 10


def default_requests(concurrency: int | None) -> int:
    return max(200, 4 * (concurrency or 0))


def run_requests(concurrency: int | None, precise: bool) -> int:
    """A point's request count: default_requests, or with a precision stop the most it may run to."""
    return (PRECISION_CAP if precise else 1) * default_requests(concurrency)


def _costs(profile: Profile, cfg: EngineConfig, costs_cache: dict) -> Costs:
    key, base_key = (cfg.backend, cfg.cpu_speed), (cfg.backend, 1.0)
    if base_key not in costs_cache:  # one Costs per backend, the other speeds sharing its curves (Costs.at_speed)
        costs_cache[base_key] = Costs(profile, cfg.backend)
    if key not in costs_cache:
        costs_cache[key] = costs_cache[base_key].at_speed(cfg.cpu_speed)
    return costs_cache[key]


def off_key(cfg: EngineConfig, wl: Workload) -> tuple[EngineConfig, Workload]:
    """What a point's schema-off arm depends on: no grammar is compiled or filled there, so neither
    the cores the engine may use nor the cpu_count that sizes its pools enters it, nor (a closed
    loop of c clients) max_num_seqs beyond c (the test test_the_schema_off_arm_is_shared_across_cores_exactly
    checks it); points that differ only in those share one simulation."""
    mns = min(cfg.max_num_seqs, wl.concurrency) if wl.concurrency is not None else cfg.max_num_seqs
    # a version that runs another's mechanisms unchanged is that one's simulation (engines.mechanisms_version)
    cfg = replace(cfg, engine_version=mechanisms_version(cfg.policy))
    if cfg.host_shared:  # other engines or a quota act on it through the cores (model/host_share.py)
        return replace(cfg, max_num_seqs=mns, cpu_speed_pool=None), replace(wl, structured_fraction=0.0)
    return (replace(cfg, max_num_seqs=mns, usable_cores=1, cpu_count=1, cpu_speed_pool=None),
            replace(wl, structured_fraction=0.0))


def sim_key(profile: Profile, cfg: EngineConfig, wl: Workload) -> tuple:
    """What a point's schema-on runs (its band and speed regime included) depend on: points with one
    key are the same simulations, so a grid runs one and gives its numbers to all. A closed loop of c
    clients never holds more than c requests, so max_num_seqs beyond c is never read; of the cores
    and cpu_count, what the engine can read at this load (Engine.cores_read: its compile pool, fill
    pool, batched fill). Checked by test_points_that_share_a_sim_key_are_the_same_simulation."""
    cfg = replace(cfg, engine_version=mechanisms_version(cfg.policy))  # (as off_key)
    mns = off_key(cfg, wl)[0].max_num_seqs
    b = profile.backends.get(cfg.backend)
    grammars = None if wl.unique_schemas else len(wl.schemas) or (
        len({t.schema_id for t in b.traces}) if b is not None and b.traces else None)
    bounds = [x for x in (wl.concurrency, grammars) if x is not None]
    if cfg.host_shared:  # the cores enter every part of a shared host's run (model/host_share.py)
        return replace(cfg, max_num_seqs=mns), wl, ()
    cores = cfg.policy.cores_read(replace(cfg, max_num_seqs=mns), mns, min(bounds) if bounds else None)
    return replace(cfg, max_num_seqs=mns, usable_cores=1, cpu_count=1), wl, cores


def run_off(profile: Profile, key: tuple[EngineConfig, Workload], costs_cache: dict | None = None) -> dict[str, Any]:
    cfg, wl = key
    sim, share = simulate(_costs(profile, cfg, {} if costs_cache is None else costs_cache), cfg, wl)
    return _summary(sim, share)


def _summary(sim: Simulation, share: dict[str, Any] | None) -> dict[str, Any]:
    """A run's summary; where it shared its host, what that did (model/host_share.py: factors, demand)."""
    out = summarize(sim)
    if share is not None:
        out["host_share"] = share
    return out


def run_point(profile: Profile, cfg: EngineConfig, wl: Workload, costs_cache: dict | None = None,
              trace_out: Path | None = None, offs: dict | None = None) -> Point:
    """One point, schema on and off; `offs`: schema-off arms already run, by off_key."""
    costs_cache = {} if costs_cache is None else costs_cache
    costs = _costs(profile, cfg, costs_cache)
    on_sim, share = simulate(costs, cfg, wl, record_trace=trace_out is not None)
    on = _summary(on_sim, share)
    # the CPUs its engine kept busy (model/host_share.py demand: what a sweep run beside the server measures
    # as engine.server_cpu), by part
    d = demand(on_sim)
    on["cpu_demand"], on["cpu_demand_parts"] = d.cpus, {k: v for k, v in asdict(d).items() if k != "gpu"}
    key = off_key(cfg, wl)
    off = offs[key] if offs is not None and key in offs else run_off(profile, key, costs_cache)
    if trace_out is not None:
        write_chrome_trace(on_sim, trace_out, {k: on[k] for k in SHOWS if k in on})
    return Point(**_labels(cfg, wl), **{**on, "breakdown": Breakdown(**on["breakdown"])},
                 off=OffArm(**{k: off[k] for k in ("itl_ms_mean", "itl_ms_p50", "ttft_ms_mean", "ttft_ms_p50",
                                                   "out_tok_per_s", "running_mean", "host_share") if k in off}),
                 overhead_pct=(100.0 * (on["itl_ms_mean"] / off["itl_ms_mean"] - 1.0)
                               if on["itl_ms_mean"] and off["itl_ms_mean"] else None),
                 throughput_loss_pct=(100.0 * (1.0 - on["out_tok_per_s"] / off["out_tok_per_s"])
                                      if on["out_tok_per_s"] and off["out_tok_per_s"] else None),
                 config={"engine": asdict(cfg), "workload": asdict(wl)})


def _labels(cfg: EngineConfig, wl: Workload) -> dict[str, Any]:
    """A point's own settings, as its record names them."""
    return {"engine": cfg.engine, "engine_version": cfg.policy.version, "backend": cfg.backend,
            "concurrency": wl.concurrency, "rate_per_s": wl.rate_per_s, "max_num_seqs": cfg.max_num_seqs,
            "cores": cfg.usable_cores, "cpu_count": cfg.cpu_count, "async_scheduling": cfg.effective_async,
            "spec_tokens": cfg.spec_tokens, "replicas": cfg.replicas, "replica_gpu": cfg.replica_gpu,
            "cpu_quota": cfg.cpu_quota, "tensor_parallel": cfg.tensor_parallel,
            "schema": ",".join(wl.schemas) if wl.schemas else "all"}


def relabel(point: Point, cfg: EngineConfig, wl: Workload) -> Point:
    """A point run for another config of the same sim_key, as the record of (cfg, wl)."""
    return replace(point, **_labels(cfg, wl), config={"engine": asdict(cfg), "workload": asdict(wl)})


def run_point_band(profile: Profile, cfg: EngineConfig, wl: Workload, costs_cache: dict | None = None,
                   trace_out: Path | None = None, offs: dict | None = None) -> Point:
    """run_point, plus (where the profile records how the engine's speed varied between servers of
    its host type: profile.engine_speeds) the band: ITL, TTFT and tokens/s with the engine as fast
    as on the fastest server measured and as slow as on the slowest, relative to their bench."""
    costs_cache = {} if costs_cache is None else costs_cache
    ran = replace(cfg, cpu_speed_pool=None)
    regime = None
    if cfg.cpu_speed_pool is not None:  # the regime's own speed (EngineConfig; an engine with a fill pool)
        # the pool needs more structured rows than the threshold: where the load cannot give them the
        # point is serial without a run; else it runs at the pool's speed and stays there when most of
        # its steps used the pool, and runs again at the serial speed when not
        rows = min(wl.concurrency, cfg.max_num_seqs) if wl.concurrency is not None else cfg.max_num_seqs
        regime = "serial"
        if cfg.policy.uses_pool(cfg, rows, cfg.spec_tokens) and wl.structured_fraction > 0:
            pooled = replace(ran, cpu_speed=cfg.cpu_speed_pool)
            point = run_point(profile, pooled, wl, costs_cache, trace_out, offs)
            if (point.breakdown.pool_step_fraction or 0.0) >= 0.5:
                regime, ran = "pool", pooled
    if regime != "pool":
        point = run_point(profile, ran, wl, costs_cache, trace_out, offs)
    # the config asked for; the speed it ran at
    point = replace(point, config={**point.config, "engine": asdict(cfg)}, cpu_speed_ran=ran.cpu_speed,
                    speed_regime=regime)
    es = profile.engine_speeds
    if es is not None:  # the schema-on arm only: the band is about the grammar's CPU work
        fast, slow = (summarize(simulate(_costs(profile, c, costs_cache), c, wl)[0])
                      for c in (replace(ran, cpu_speed=ran.cpu_speed * r) for r in (es.high, es.low)))
        point = replace(point, band=Band((ran.cpu_speed * es.high, ran.cpu_speed * es.low),
                                         tuple(s.name for s in es.servers),
                                         **{k: (fast[k], slow[k]) for k in ("itl_ms_mean", "ttft_ms_p50",
                                                                            "out_tok_per_s")}))
    return point


def point_key(cfg: EngineConfig, wl: Workload) -> str:
    """A point's identity in a grid (what --resume matches a finished point by)."""
    return json.dumps([asdict(cfg), asdict(wl)], sort_keys=True, default=str)


def _off(profile: Profile, key: tuple[EngineConfig, Workload], cache: dict) -> dict[str, Any]:
    return run_off(profile, key, cache)


def _point(profile: Profile, combo: tuple[EngineConfig, Workload, dict], cache: dict) -> Point:
    return run_point_band(profile, combo[0], combo[1], cache, offs=combo[2])


# a local pool worker's profile (set once by its initializer) and costs
_WORKER_PROFILE: Profile | None = None
_WORKER_CACHE: dict = {}


def _init_worker(profile: Profile) -> None:
    global _WORKER_PROFILE
    _WORKER_PROFILE = profile
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it stops the workers


def _in_worker(fn_arg: tuple) -> Any:
    fn, arg = fn_arg
    return fn(_WORKER_PROFILE, arg, _WORKER_CACHE)


class _Closing:
    """An executor as a context: closed on the way out, at once where Ctrl-C is what ends it."""

    def __enter__(self):
        return self

    def __exit__(self, kind, *_) -> None:
        self.close(interrupted=kind is not None and issubclass(kind, KeyboardInterrupt))


class LocalExecutor(_Closing):
    """The grid's work on this host: `jobs` processes for 8 or more tasks (the profile set once in each),
    else here, with the grid's own costs. The workers ignore Ctrl-C; the grid's close stops them."""

    def __init__(self, profile: Profile, jobs: int, cache: dict) -> None:
        self.profile, self.jobs, self.cache = profile, jobs, cache
        self.pool: Any = None  # a multiprocessing.Pool, started by the first map that needs it

    def map(self, fn, args: list) -> Iterable[Any]:
        if self.jobs > 1 and len(args) >= 8:
            if self.pool is None:
                import multiprocessing
                self.pool = multiprocessing.Pool(self.jobs, initializer=_init_worker, initargs=(self.profile,))
            yield from self.pool.imap(_in_worker, [(fn, a) for a in args],
                                      chunksize=max(1, len(args) // (16 * self.jobs)))
        else:
            for a in args:
                yield fn(self.profile, a, self.cache)

    def close(self, interrupted: bool = False) -> None:
        """The workers stopped: at once where `interrupted` (a resume runs their points again), else done."""
        if self.pool is not None:
            self.pool.terminate() if interrupted else self.pool.close()
            self.pool.join()


# a dask worker's costs, for the profile they were built from (a long-lived worker serves many grids)
_DASK_WORKER: list = [None, {}]


def _on_dask_worker(fn, profile: Profile, arg) -> Any:
    if _DASK_WORKER[0] is not profile:
        _DASK_WORKER[:] = [profile, {}]
    return fn(profile, arg, _DASK_WORKER[1])


class DaskExecutor(_Closing):
    """The grid's work on a dask.distributed cluster: the scheduler at `address`, or a LocalCluster of
    `jobs` single-threaded worker processes on loopback. The profile goes to every worker once; map()
    yields results in the order of its arguments, each as soon as it and those before it are done."""

    def __init__(self, profile: Profile, jobs: int, address: str | None = None) -> None:
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise ValueError("--executor dask: needs dask.distributed (pip install 'maskcost[dask]')") from None
        self.cluster = None if address else LocalCluster(
            n_workers=jobs, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None)
        try:
            self.client = Client(address or self.cluster, timeout=10)
        except OSError as e:
            if self.cluster is not None:
                self.cluster.close()
            raise ValueError(f"--scheduler {address}: cannot reach a dask scheduler there ({e})") from None
        self.profile = self.client.scatter(profile, broadcast=True)

    def map(self, fn, args: list) -> Iterable[Any]:
        for f in self.client.map(_on_dask_worker, [fn] * len(args), [self.profile] * len(args), args, pure=False):
            yield f.result()

    def close(self, interrupted: bool = False) -> None:
        self.client.close()  # (its tasks go with the client, interrupted or not)
        if self.cluster is not None:
            self.cluster.close()


def _shared_sims(profile: Profile, combos: list[tuple[EngineConfig, Workload]]) -> tuple[list, dict, dict]:
    """Points of one sim_key are the same simulations: each key runs once, for its first point. Returns
    the keys in first-seen order, each key's index, and each index's representative (config, workload)."""
    sims = list(dict.fromkeys(sim_key(profile, cfg, wl) for cfg, wl in combos))
    sim_of = {k: i for i, k in enumerate(sims)}
    reps: dict[int, tuple[EngineConfig, Workload]] = {}
    for cfg, wl in combos:
        reps.setdefault(sim_of[sim_key(profile, cfg, wl)], (cfg, wl))
    return sims, sim_of, reps


def _off_arms(ex, keys: list, progress: bool, desc: str = "schema-off arms") -> dict:
    """The schema-off arms, each once (off_key), with a bar."""
    offs: dict = {}
    with tqdm(total=len(keys), desc=desc, unit="arm", disable=not progress or not keys) as bar:
        for k, r in zip(keys, ex.map(_off, keys)):
            offs[k] = r
            bar.update()
    return offs


def _with_off_arms(ex, keys: list, offs: dict | None, progress: bool, desc: str) -> dict:
    """`offs` (schema-off arms by off_key; a new dict where None) with those of `keys` it lacks run and added."""
    offs = {} if offs is None else offs
    offs.update(_off_arms(ex, [k for k in keys if k not in offs], progress,
                          *([] if desc == "predict" else [f"{desc}: schema-off arms"])))
    return offs


def grid(profile: Profile, engines: Iterable[EngineConfig], workloads: Iterable[Workload],
         trace_out: Path | None = None, progress: bool = True, jobs: int | None = None,
         band: bool = True, done: dict[str, Point] | None = None,
         on_point: Callable[[str, Point], None] | None = None,
         executor: str = "local", scheduler: str | None = None, desc: str = "predict",
         offs: dict | None = None) -> list[Point]:
    """Every (engine config, workload) pair; spread over `jobs` processes (default: usable cores), or with `executor`
    "dask" over a dask.distributed cluster (`scheduler`: its address; none: a LocalCluster of `jobs` workers). `band`:
    each point also with the engine as fast and as slow as the profile's engine_speeds (run_point_band). Points of one
    sim_key (and schema-off arms of one off_key) are the same simulations: each runs once, its numbers relabelled to
    every point that has it; the runs start longest first. `done`: points already run, by point_key; `on_point(key,
    point)`: called as each new point finishes, in grid order; `desc`: the bars' words; `offs`: schema-off arms by
    off_key, those there taken as run and the ones run added (a profile differing in its traces' costs alone,
    calibrate/cost_spread.py's, has the same schema-off arms)."""
    if executor not in ("local", "dask"):
        raise ValueError(f"--executor {executor}: local or dask")
    if not band:
        profile = replace(profile, engine_speeds=None)
    every = list(itertools.product(engines, workloads))
    names = [point_key(cfg, wl) for cfg, wl in every]
    done = dict(done or {})
    combos = [c for k, c in zip(names, every) if k not in done]
    if not combos:
        return [done[k] for k in names]

    def finished(cfg: EngineConfig, wl: Workload, p: Point) -> None:
        done[k := point_key(cfg, wl)] = p
        if on_point:
            on_point(k, p)
    jobs = jobs or len(os.sched_getaffinity(0))
    sims, sim_of, reps = _shared_sims(profile, combos)
    # the schema-off arms first, each once (off_key); then every shared point's schema-on runs; each
    # phase longest first (_work), so that no worker is left with a long run at the end
    keys = sorted(dict.fromkeys(off_key(*reps[i]) for i in range(len(sims))), key=lambda k: -_work(*k))
    cache: dict = {}
    for cfg, wl in (reps[0], keys[0]):  # a config the profile cannot run fails here, before any bar
        Simulation(_costs(profile, cfg, cache), cfg, wl)
    ex = DaskExecutor(profile, jobs, scheduler) if executor == "dask" else LocalExecutor(profile, jobs, cache)
    ran: dict[int, Point] = {}
    with ex:  # (closed on the way out: at once on Ctrl-C)
        offs = _with_off_arms(ex, keys, offs, progress, desc)
        order = list(range(len(sims)))
        if trace_out is not None:  # the first point here: it writes the trace
            ran[0] = run_point_band(profile, *reps[0], cache, trace_out, offs)
            order = order[1:]
        order.sort(key=lambda i: -_work(*reps[i]))
        args = [(*reps[i], {off_key(*reps[i]): offs[off_key(*reps[i])]}) for i in order]
        results = zip(order, ex.map(_point, args))
        with tqdm(total=len(every), initial=len(every) - len(combos), desc=desc, unit="pt",
                  disable=not progress) as bar:
            for cfg, wl in combos:  # in grid order, each as soon as its simulation is done
                i = sim_of[sim_key(profile, cfg, wl)]
                while i not in ran:
                    j, r = next(results)
                    ran[j] = r
                finished(cfg, wl, ran[i] if reps[i] == (cfg, wl) else relabel(ran[i], cfg, wl))
                bar.update()
    return [done[k] for k in names]


def _work(cfg: EngineConfig, wl: Workload) -> float:
    """A rough measure of a run's cost, to start the long ones first: its steps (requests over the
    batch), each dearer with more rows."""
    batch = min(wl.concurrency or cfg.max_num_seqs, cfg.max_num_seqs)
    return wl.requests / batch * (1.0 + batch / 300.0)


# what a GPU monitor and the engine's metrics would show over the run (metrics.what_the_engine_shows): the trace's too
SHOWS = ("gpu_busy_fraction", "gpu_busy_basis", "host_exposed_fraction", "bound", "bitmask_h2d_bytes_per_step",
         "bitmask_h2d_link_fraction")


def write_chrome_trace(sim: Simulation, path: Path, shows: dict[str, Any] | None = None) -> None:
    """Chrome / Perfetto trace (JSON): one lane (tid) per thread: GPU, engine thread, fill workers,
    compile pool; a counter a step of its forward and the host time beyond it (a host-bound step: the second
    over the first); `shows` (SHOWS, the run's figures) in otherData. Times in µs."""
    lanes: dict[str, int] = {}
    events = []
    for e in sim.events:
        tid = lanes.setdefault(e.lane, len(lanes) + 1)
        events.append({"name": e.name, "ph": "X", "ts": e.start_ms * 1e3, "dur": e.dur_ms * 1e3, "pid": 1, "tid": tid})
    col = step_columns(sim.steps) if sim.steps else {}
    events += [{"name": "step ms", "ph": "C", "ts": float(t) * 1e3, "pid": 1,
                "args": {"forward": float(f), "host beyond the forward": float(x)}}
               for t, f, x in zip(col.get("t_start_ms", ()), col.get("forward_ms", ()), col.get("exposed_ms", ()))]
    meta = [{"name": "thread_name", "ph": "M", "pid": 1, "tid": t, "args": {"name": n}} for n, t in lanes.items()]
    path.write_text(json.dumps({"traceEvents": meta + events, "displayTimeUnit": "ms",
                                "otherData": {"config": {"engine": asdict(sim.cfg), "workload": asdict(sim.wl)},
                                              "engine_shows": shows or {}}}))


def plot_overhead(points: list[Point], path: Path, title: str) -> None:
    from ..plotting import batch_axis, save, subplots
    fig, (a1, a2) = subplots(1, 2, figsize=(11, 4.2))
    series: dict[str, list[Point]] = {}
    for p in points:
        speed = p.config["engine"]["cpu_speed"]
        label = f"{p.engine} {p.backend} mns={p.max_num_seqs} cores={p.cores}" + \
                (f" spec={p.spec_tokens}" if p.spec_tokens else "") + ("" if p.async_scheduling else " sync") + \
                (f" speed={speed:g}" if speed != 1.0 else "") + \
                (f" {p.replicas}x" + ("/1gpu" if p.replica_gpu == "shared" else "") if p.replicas > 1 else "") + \
                (f" quota={p.cpu_quota:g}" if p.cpu_quota is not None else "")
        series.setdefault(label, []).append(p)
    for label, ps in series.items():
        ps = sorted(ps, key=lambda p: p.running_mean or 0)
        xs = [p.concurrency or p.running_mean for p in ps]
        a1.plot(xs, [p.overhead_pct for p in ps], marker="o", label=label)
        a2.plot(xs, [p.itl_ms_mean for p in ps], marker="o", label=label)
        color = a2.lines[-1].get_color()
        a2.plot(xs, [p.off.itl_ms_mean for p in ps], ls="--", color=color, alpha=0.6)
        if all(p.band is not None for p in ps):
            a2.fill_between(xs, *zip(*(p.band.itl_ms_mean for p in ps)), color=color, alpha=0.15, lw=0)
    a1.set_ylabel("ITL overhead vs schema-off (%)")
    a2.set_ylabel("ITL (ms); dashed: schema off; shaded: band")
    for a in (a1, a2):
        batch_axis(a, "concurrency (batch)")
    a1.legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    save(fig, path)
