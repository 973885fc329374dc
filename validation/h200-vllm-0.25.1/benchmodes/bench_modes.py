"""On the device (README.md here): the host's bench (calibrate.host.bench_us's round: one fresh-matcher replay of the
'bounded' tier's instance through xgrammar, one thread) taken five ways on an idle host, each round logged with its
time to OUT/bench.jsonl as it ends: one round a second (as calibrate's SpreadBench takes it), 30 back to back (the
moment bench), rounds back to back for 90 s (a sustained load), and one a second with 12 busy processes on the other
cores. Usage: python3 bench_modes.py OUT_DIR TOKENIZER_DIR (SCALE=x: every phase x as long; a trial run)"""
import json
import multiprocessing
import os
import sys
import time
from pathlib import Path

from maskcost.calibrate.backends import XGrammarBackend
from maskcost.calibrate.host import bench_us
from maskcost.calibrate.tokenizer import load_vocab

OUT = Path(sys.argv[1])
vocab = load_vocab(sys.argv[2])
be = XGrammarBackend(vocab)
log = open(OUT / "bench.jsonl", "a")
T0 = time.monotonic()
S = float(os.environ.get("SCALE", "1"))


def rnd(phase: str) -> float:
    us = bench_us(vocab, rounds=1, be=be)
    log.write(json.dumps({"phase": phase, "t_s": round(time.monotonic() - T0, 3), "us": round(us, 1)}) + "\n")
    log.flush()
    return us


def spread(phase: str, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t = time.monotonic()
        rnd(phase)
        time.sleep(max(0.0, 1.0 - (time.monotonic() - t)))


def spin(stop_at: float) -> None:
    while time.monotonic() < stop_at:
        pass


bench_us(vocab, rounds=3, be=be)  # (the grammar compiled, the matcher warm: not logged)
spread("spread-a", 60 * S)
end = time.monotonic() + 150 * S
k = 0
while time.monotonic() < end:
    for _ in range(30):
        rnd(f"b2b-{k}")
    spread(f"spread-b{k}", 5)
    k += 1
end = time.monotonic() + 90 * S
while time.monotonic() < end:
    rnd("sustained")
spread("spread-c", 45 * S)
stop = time.monotonic() + 45 * S
procs = [multiprocessing.Process(target=spin, args=(stop,)) for _ in range(12)]
for p in procs:
    p.start()
spread("loaded", 44 * S)
for p in procs:
    p.join()
print("done", round(time.monotonic() - T0), "s")
