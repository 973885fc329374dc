"""Speed goals of the model (issue 2), printed as ratios (goal time / measured time; > 1 is met).

  1. one 10,000-request, concurrency-256 simulation on the embedded profile: under 10 s
  2. a 200-point what-if grid (each point = schema-on + schema-off arms): under 60 s
  3. the same grid with the band (predict's default; issue 23): under 10 s, and at most 12 times
     one point without the band (concurrency 256, predict's request count)
  4. the same grid on a dask.distributed LocalCluster of this host's cores (predict --executor dask):
     points per wall second against the local process pool, and each worker's memory after it
Also reports simulated output tokens per wall second. Run: python benchmarks/bench_model.py
"""
import os
import platform
import time

from maskcost.calibrate.host import cpu_model
from maskcost.profile import load_default_profile
from maskcost.model.config import EngineConfig, Workload
from maskcost.model.costs import Costs
from maskcost.model.engine import Simulation
from maskcost.model.metrics import summarize
from maskcost.model.predict import default_requests, grid


def main() -> None:
    p = load_default_profile()
    costs = Costs(p, "xgrammar")
    print(f"host: {cpu_model()}, nproc {len(os.sched_getaffinity(0))}, Python {platform.python_version()}")
    t = time.perf_counter()
    sim = Simulation(costs, EngineConfig(max_num_seqs=256), Workload(concurrency=256, requests=10_000)).run()
    r = summarize(sim)
    dt = time.perf_counter() - t
    toks = float(sim.out_len.sum())
    print(f"10k requests @ c256: {dt:.2f} s wall, {len(sim.steps)} steps, {toks / dt:,.0f} simulated tokens/wall s, "
          f"ratio {10.0 / dt:.1f}x (goal 10 s)  [ITL {r['itl_ms_mean']:.1f} ms]")
    engines = [EngineConfig(backend=b, max_num_seqs=m, usable_cores=c)
               for b in ("xgrammar", "guidance") for m in (128, 256) for c in (4, 8, 16, 32, 64)]
    loads = [Workload(concurrency=c, requests=default_requests(c)) for c in (1, 8, 32, 64, 128, 160, 192, 224, 256, 320)]
    t = time.perf_counter()
    pts = grid(p, engines, loads, progress=False, band=False)
    dt = time.perf_counter() - t
    print(f"{len(pts)}-point grid: {dt:.1f} s wall, ratio {60.0 / dt:.1f}x (goal 60 s)")
    grid(p, engines, loads[8:9], progress=False, band=False, jobs=1)  # warm: the costs, the pool's start
    t = time.perf_counter()
    grid(p, engines[:1], [Workload(concurrency=256, requests=default_requests(256))], progress=False, band=False)
    one = time.perf_counter() - t
    t = time.perf_counter()
    grid(p, engines, loads, progress=False)
    dt = time.perf_counter() - t
    print(f"the same grid with the band (predict's default): {dt:.1f} s wall, ratio {10.0 / dt:.2f}x (goal 10 s); "
          f"{dt / one:.0f} times one point ({one:.2f} s; goal <= 12)")
    try:
        from maskcost.model.predict import DaskExecutor, _point, off_key, run_off
    except ImportError:
        return
    jobs = len(os.sched_getaffinity(0))
    t = time.perf_counter()
    try:
        grid(p, engines, loads, progress=False, executor="dask", jobs=jobs)
    except ValueError as e:  # no dask installed
        print(f"dask: {e}")
        return
    dd = time.perf_counter() - t
    print(f"the same grid on a dask LocalCluster of {jobs} workers (cluster start included): {dd:.1f} s wall, "
          f"{len(pts) / dd:.1f} points/s against {len(pts) / dt:.1f} locally (ratio {dt / dd:.2f}x)")
    ex = DaskExecutor(p, jobs)
    try:
        combos = [(e, w, {off_key(e, w): run_off(p, off_key(e, w))}) for e in engines[:jobs] for w in loads[8:9]]
        list(ex.map(_point, combos))

        def rss_mb() -> float:
            import psutil
            return psutil.Process().memory_info().rss / 2 ** 20
        mem = sorted(ex.client.run(rss_mb).values())
        print(f"dask worker memory after a point at concurrency 256: {mem[0]:.0f}-{mem[-1]:.0f} MB resident "
              f"(median {mem[len(mem) // 2]:.0f})")
    finally:
        ex.close()


if __name__ == "__main__":
    main()
