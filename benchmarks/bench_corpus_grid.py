"""A corpus-wide what-if grid (issue 23 item 3): every schema of a corpus profile (corpus_profile.py) x 10
loads x 5 core counts, on the local process pool and on a dask.distributed LocalCluster of this host's
cores (predict --executor dask), with the points per wall second of each and every dask worker's memory.

  1. the mixed grid: each point's workload draws from every schema of the profile (10 loads x 5 core
     counts x the profile's backends), the band on, as predict runs it
  2. the per-schema grid: each of --per-schema schemas its own workload (x 10 loads x 5 core counts), on
     dask; its points per second say how long the whole corpus's per-schema grid takes here

Run: python benchmarks/bench_corpus_grid.py PROFILE [--per-schema N] [--jobs N] [--out benchmarks/out]
Writes corpus_grid.json there (the figures, the config, the host, the profile's digest).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import subprocess
import time
from dataclasses import replace
from pathlib import Path

from maskcost.calibrate.host import cpu_model
from maskcost.model.config import EngineConfig, Workload
from maskcost.model.predict import DaskExecutor, default_requests, grid
from maskcost.profile import ProfileError, load_default_profile, load_profile

LOADS = (1, 8, 32, 64, 128, 160, 192, 224, 256, 320)
CORES = (4, 8, 16, 32, 64)


def rss_mb() -> float:
    import psutil
    return psutil.Process().memory_info().rss / 2 ** 20


def timed_grid(profile, engines, loads, **kw) -> tuple[float, int]:
    t = time.perf_counter()
    pts = grid(profile, engines, loads, progress=False, **kw)
    return time.perf_counter() - t, len(pts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("profile")
    ap.add_argument("--per-schema", type=int, default=8, metavar="N", help="schemas of the per-schema grid (default 8)")
    ap.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)), help="workers (default: nproc)")
    ap.add_argument("--out", default="benchmarks/out")
    args = ap.parse_args()
    t = time.perf_counter()
    try:
        p = load_profile(args.profile)
    except ProfileError as e:
        raise SystemExit(f"bench_corpus_grid: {e}") from None
    load_s = time.perf_counter() - t
    # a host-side calibration has no in-engine factors or server spread: the embedded profile's (both
    # measured on its H200 servers), so that each point runs what a point of predict's default grid runs
    d = load_default_profile()
    p = replace(p, engine_speeds=p.engine_speeds or d.engine_speeds, backends={
        b: replace(c, engine_fill=c.engine_fill or (d.backends[b].engine_fill if b in d.backends else None))
        for b, c in p.backends.items()})
    here_mb = rss_mb()
    backends = [b for b, c in p.backends.items() if c.traces]
    schemas = {b: sorted({t.schema_id for t in p.backends[b].traces}) for b in backends}
    host = f"{cpu_model()}, nproc {len(os.sched_getaffinity(0))}, Python {platform.python_version()}"
    print(f"host: {host}; profile {args.profile}: " + ", ".join(f"{b} {len(s)} schemas" for b, s in schemas.items())
          + f" (loaded in {load_s:.1f} s; this process {here_mb:.0f} MB resident after)")
    engines = [EngineConfig(backend=b, usable_cores=c) for b in backends for c in CORES]
    loads = [Workload(concurrency=c, requests=default_requests(c)) for c in LOADS]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    res: dict = {"host": host, "commit": commit or None, "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                 "profile": str(args.profile), "jobs": args.jobs,
                 "profile_sha256": hashlib.sha256(Path(args.profile).read_bytes()).hexdigest(),
                 "schemas": {b: len(s) for b, s in schemas.items()}, "loads": LOADS, "cores": CORES}
    local_s, n = timed_grid(p, engines, loads, jobs=args.jobs)
    print(f"mixed grid ({n} points, band on), local process pool of {args.jobs}: {local_s:.1f} s, "
          f"{n / local_s:.2f} points/s")
    dask_s, _ = timed_grid(p, engines, loads, jobs=args.jobs, executor="dask")
    print(f"the same on a dask LocalCluster of {args.jobs} workers (start and the profile's scatter included): "
          f"{dask_s:.1f} s, {n / dask_s:.2f} points/s")
    res["mixed"] = {"points": n, "local_s": local_s, "dask_s": dask_s}
    # the per-schema grid, and each worker's memory once it has the profile and has run points
    b = backends[0]
    pick = schemas[b][::max(1, len(schemas[b]) // args.per_schema)][:args.per_schema]
    per = [Workload(concurrency=c, requests=default_requests(c), schemas=(s,)) for s in pick for c in LOADS]
    ex_t = time.perf_counter()
    pts = grid(p, [EngineConfig(backend=b, usable_cores=c) for c in CORES], per, progress=False, executor="dask",
               jobs=args.jobs)
    per_s = time.perf_counter() - ex_t
    total = len(schemas[b]) * len(LOADS) * len(CORES)
    print(f"per-schema grid on dask ({len(pick)} {b} schemas x {len(LOADS)} loads x {len(CORES)} core counts = "
          f"{len(pts)} points): {per_s:.1f} s, {len(pts) / per_s:.2f} points/s; the whole corpus's {total:,} points "
          f"at that rate: {total / (len(pts) / per_s) / 3600:.1f} h on this host")
    ex = DaskExecutor(p, args.jobs)
    try:
        from maskcost.model.predict import _point, off_key, run_off
        e, w = EngineConfig(backend=b), Workload(concurrency=256, requests=default_requests(256))
        list(ex.map(_point, [(e, w, {off_key(e, w): run_off(p, off_key(e, w))})] * args.jobs))
        mem = sorted(ex.client.run(rss_mb).values())
    finally:
        ex.close()
    print(f"dask worker memory with the profile and a c256 point run: {mem[0]:.0f}-{mem[-1]:.0f} MB resident")
    res["per_schema"] = {"schemas": pick, "points": len(pts), "dask_s": per_s, "corpus_points": total}
    res["dask_worker_rss_mb"] = mem
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "corpus_grid.json").write_text(json.dumps(res, indent=1))
    print(f"wrote {out / 'corpus_grid.json'}")


if __name__ == "__main__":
    main()
