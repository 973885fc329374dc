"""Post hoc (docs/validation.md finding 58): how far calibrate's speed read moves with the model's own sampling.
Transfer run 2's profile (its own API-server costs), its speed read again on its speed points (read_speed, as calibrate
reads it: each point's model run on max(200, REQUESTS_FACTOR x clients) requests) at workload seeds 0-4, with calibrate's
factor (4) and with 16; then both campaigns scored as posthoc_api_fit.py scores them with the speed read at 16 (its
own costs kept, and refitted as calibrate now fits them).
  python validation/h200-vllm-0.25.1/transfer2/posthoc_speed_noise.py  (repository root) -> posthoc_speed_noise.txt"""
import dataclasses
import os
import runpy
import sys
from pathlib import Path

import maskcost.validate.report as report
import maskcost.validate.server_calibration as sc
from maskcost.model.config import EngineConfig
from maskcost.profile import load_profile
from maskcost.records import read_summaries

HERE = Path(__file__).resolve().parent
RUN1 = HERE / "run1-16cores"
CFG = EngineConfig(engine="vllm", engine_version="0.25.1", backend="xgrammar", max_num_seqs=256, cpu_count=16,
                   usable_cores=16)
_workload, _attach = report.measured_workload, sc.attach_itl_speeds


def with_factor(factor: int, seed: int = 0) -> None:
    report.measured_workload = lambda *a, **k: dataclasses.replace(_workload(*a, **k), seed=seed)
    sc.attach_itl_speeds = lambda rows, p, cfg, on, requests_factor=4, **k: _attach(rows, p, cfg, on,
                                                                                      requests_factor=factor,
                                                                                      progress=False)


def main() -> None:
    p, on = load_profile(RUN1 / "host.json.gz"), read_summaries(RUN1 / "host.speed-sweep.jsonl")
    for factor in (4, 16):
        for seed in range(5):
            with_factor(factor, seed)
            ms = sc.read_speed(p, CFG, on, "host.speed-sweep.jsonl")
            print(f"factor {factor}, seed {seed}: speed read {ms.cpu_speed:.3f} (points {ms.points})", flush=True)
    with_factor(16)
    for fit in ("kept", "refit"):
        print(f"held out, the speed read at factor 16, API costs {fit}:", flush=True)
        os.environ["FIT"] = fit
        sys.argv = ["posthoc_api_fit.py"]
        runpy.run_path(str(HERE / "posthoc_api_fit.py"), run_name="__main__")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
