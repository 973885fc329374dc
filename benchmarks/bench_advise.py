"""Speed goal of `maskcost advise` (issue 38), printed as ratios (goal time / measured time; > 1 is met):
the whole default search on the embedded profile (every vLLM version modelled, both backends,
max-num-seqs 128 and 256, 4-32 cores, async scheduling on and off) in under 10 s on this machine, at
each of a low, a middle and a high load, each run as a user runs it (a fresh process: imports, profile,
grid).

Run: python benchmarks/bench_advise.py   (prints CPU model, nproc and each load's time and ratio)
"""
import os
import subprocess
import sys
import time

from maskcost.calibrate.host import cpu_model

GOAL_S = 10.0
LOADS = (8, 128, 256)


def main() -> None:
    print(f"{cpu_model()}, nproc {len(os.sched_getaffinity(0))}, Python {sys.version.split()[0]}; goal {GOAL_S:.0f} s")
    for c in LOADS:
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "maskcost.cli", "advise", "--concurrency", str(c), "--itl-p99-ms", "40",
                            "--quiet"], capture_output=True, text=True)
        dt = time.perf_counter() - t0
        searched = next((line for line in r.stdout.splitlines() if line.startswith("goal:")), r.stderr.strip()[-200:])
        print(f"concurrency {c:4d}: {dt:5.1f} s, ratio {GOAL_S / dt:4.1f} (exit {r.returncode}; {searched})")


if __name__ == "__main__":
    main()
