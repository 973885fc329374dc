"""Issue 39: where the xgrammar engine's extra CPU comes from (engine_cpu-run*.txt: 115-175 ms of CPU a step beyond
the model's parts with xgrammar, none with llguidance up to 128 clients).

The mechanism, read from the sources (docs/engines.md, "The bitmask's pinned copy"): vLLM 0.25.1's model runner
copies the step's bitmask to the GPU through async_copy_to_gpu (v1/worker/gpu/buffer_utils.py:26-41), which calls
x.pin_memory(): a no-op where the tensor is pinned, else a CPU copy into pinned memory. llguidance allocates its
bitmask pinned (llguidance/torch.py allocate_token_bitmask: pin_memory=torch.cuda.is_available()); xgrammar 0.2.7
does not (xgrammar allocate_token_bitmask: torch.full(...), no pin_memory). A torch CPU copy of at least 32,768
elements (at::internal::GRAIN_SIZE) runs on the OpenMP team (as many threads as the process's usable cores, at
TP=1 the EngineCore holds the model runner and nothing sets OMP_NUM_THREADS there), and libgomp's threads spin
after a parallel region before they sleep (GOMP_SPINCOUNT). A Llama-3 bitmask row is 4,008 int32: 9 rows or more.

Part 1 (this host): the copy as the engine makes it, each followed by a sleep (the engine thread waiting for the
GPU): the process's CPU beyond the copy is the team's spin. Part 2 (the shape check's committed records): each
xgrammar point's CPU beyond the model's parts over the 15 spinning threads of a 16-core engine, as ms a thread
a step: were the mechanism the cause, one constant on one machine type.
  python validation/h200-vllm-0.25.1/shape/posthoc/omp_spin.py   (repository root) -> omp_spin.txt"""
import os
import re
import statistics as st
import time
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent


def copies(rows: int, gap_ms: float, n: int = 100) -> tuple[float, float]:
    """(process CPU ms a copy, of which the other threads': the team's spin) over n copies of a rows x 4008 int32
    bitmask, each followed by a sleep (calibrate/host.py omp_spin_ms measures the same at 32 rows)."""
    src = torch.full((rows, 4008), -1, dtype=torch.int32)
    dst = torch.empty_like(src)
    p0, t0 = time.process_time(), time.thread_time()
    for _ in range(n):
        dst.copy_(src)
        time.sleep(gap_ms / 1e3)
    proc, own = time.process_time() - p0, time.thread_time() - t0
    return 1e3 * proc / n, 1e3 * (proc - own) / n


print(f"# part 1: torch {torch.__version__}, {torch.get_num_threads()} threads, nproc {os.cpu_count()}, "
      f"{torch.__config__.parallel_info().splitlines()[3].strip()}")
for rows in (8, 9, 32, 256):
    for gap in (5, 20, 50):
        cpu, others = copies(rows, gap)
        print(f"rows {rows:3d} ({rows * 4008:7d} int32), {gap:2d} ms between copies: process CPU {cpu:5.2f} ms a copy, "
              f"the other thread's {others:5.2f} ms")

print("# part 2: the shape check's xgrammar points (engine_cpu-run*.txt), 16 cores: CPU beyond the model's parts / 15 threads")
LINE = re.compile(r"^(xg|gd) (\w+)\s+(\d+) meas ([\d.]+) model ([\d.]+) .* step (\d+) extra ms/step (-?\d+)")
fit = {}
for run in ("run1", "run2"):
    per = []
    for line in (HERE / f"engine_cpu-{run}.txt").read_text().splitlines():
        m = LINE.match(line)
        if m and m[1] == "xg":
            per.append((f"{m[2]} {m[3]}", int(m[7]) / 15))
    fit[run] = st.median(s for _, s in per)
    print(f"{run}: " + ", ".join(f"{k} {s:.1f}" for k, s in per) + f"; median {fit[run]:.1f} ms a thread a step")
for fit_run, test_run in (("run1", "run2"), ("run2", "run1")):
    errs = []
    for line in (HERE / f"engine_cpu-{test_run}.txt").read_text().splitlines():
        m = LINE.match(line)
        if m and m[1] == "xg":
            pred = float(m[5]) + 15 * min(fit[fit_run], int(m[6])) / int(m[6])
            errs.append(pred / float(m[4]) - 1)
    print(f"spin {fit[fit_run]:.1f} ms (fit on {fit_run}) added to the model's demand, {test_run}'s xgrammar points: "
          f"median |CPU error| {100 * st.median(abs(e) for e in errs):.0f}% (without it: "
          f"{100 * st.median(abs(float(m[5]) / float(m[4]) - 1) for m in map(LINE.match, (HERE / f'engine_cpu-{test_run}.txt').read_text().splitlines()) if m and m[1] == 'xg'):.0f}%)")

print("# part 3: the replicas check (../../replicas/, runs 1-2, registered 9.6% and 13.0%, directions 7 and 6 of 8) "
      "scored again with the spinners in the demand (main, 9 ms)")
import dataclasses  # noqa: E402
import replicas_extra  # noqa: E402
import maskcost.model.predict as mp  # noqa: E402
replicas_extra.rescore("team = the cell's cores", lambda sim: 0.0)
plain = mp.simulate
mp.simulate = lambda costs, cfg, wl, record_trace=False: plain(costs, dataclasses.replace(cfg, omp_threads=8), wl,
                                                              record_trace)
replicas_extra.rescore("team = 8 (server A started on cores 0-7, re-pinned with taskset -a)", lambda sim: 0.0)
