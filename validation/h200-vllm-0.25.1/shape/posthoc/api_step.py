"""Post hoc on shape runs 6-12: calibrate's loop fit (calibrate.api_cpu, on the window's rates) with a column for the
engine's steps a second (the output handler's per-step work: the ZMQ read, the iteration's stats) beside its request
and token columns, and the held-out schema-alone points' loop CPU by each fit over what they read (median by server
and schema: gd/xg, flat/nested). Columns: step (ms a step), req/sreq (ms a request / a structured request), otok,
stok, tok (us a schema-off / structured / any token).
  python validation/h200-vllm-0.25.1/shape/posthoc/api_step.py [RUN ...] [proc]   -> api_step.txt (runs 6-12)
  proc: the listening process's CPU (every thread) instead of the loop thread's"""
import statistics
import sys
from pathlib import Path

import numpy as np
from scipy.optimize import nnls

from maskcost.calibrate.api_cpu import api_process, loop_cpus, window_tokens_per_s
from maskcost.records import read_summaries

SHAPE = Path(__file__).resolve().parents[1]
CALIBRATION = ("host.forward-sweep", "host.speed-sweep", "host.speed-sweep-guidance")
FITS = (("sreq", "otok", "stok"), ("step", "sreq", "otok", "stok"), ("step", "req", "tok"),
        ("step", "req", "sreq", "tok"))  # the first: calibrate.api_cpu's columns (the arms apart)
PER_MS = ("step", "req", "sreq")  # priced in ms; the rest in us


def process_cpus(s):
    """The listening process's CPU, all its threads (None where the record names no process)."""
    api = api_process(s)
    return api["cpus"] if api is not None and api.get("listens") else None


CPUS = process_cpus if "proc" in sys.argv else loop_cpus


def row(s, cols: tuple[str, ...]) -> list[float]:
    tok = window_tokens_per_s(s)
    per_s, on = tok / s.output_tokens_mean, s.arm == "on"
    d = {"step": s.engine.steps / s.engine.window_s, "req": per_s, "sreq": per_s if on else 0.0,
         "otok": 0.0 if on else tok, "stok": tok if on else 0.0, "tok": tok}
    return [d[c] for c in cols]


def held_out(run: str, cols: tuple[str, ...], x: np.ndarray) -> str:
    errs: dict[str, list[float]] = {}
    for srv in ("gd", "xg"):
        for schema in ("flat", "nested"):
            for s in read_summaries(SHAPE / run / srv / f"{schema}.jsonl"):
                if s.arm == "on" and CPUS(s) and s.engine.steps:
                    errs.setdefault(f"{srv}{schema[0]}", []).append(float(np.dot(row(s, cols), x)) / CPUS(s) - 1)
    return " ".join(f"{k} {100 * statistics.median(v):+.0f}%" for k, v in errs.items())


def main(runs: list[str]) -> None:
    for run in runs:
        cal = [s for f in CALIBRATION for s in read_summaries(SHAPE / run / "xg" / f"{f}.jsonl")
               if s.concurrency >= 8 and CPUS(s) and s.engine.steps]
        print(f"{run}:")
        for cols in FITS:
            a, b = np.array([row(s, cols) for s in cal]), np.array([CPUS(s) for s in cal])
            x = nnls(a, b)[0]
            coef = " ".join(f"{c}={v * (1e3 if c in PER_MS else 1e6):.2f}" for c, v in zip(cols, x))
            print(f"  [{coef}] {held_out(run, cols, x)} | fit med {100 * np.median(np.abs(a @ x / b - 1)):.0f}%")


if __name__ == "__main__":
    main([a for a in sys.argv[1:] if a.startswith("run")] or [f"run{i}" for i in range(6, 13)])
