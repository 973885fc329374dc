"""Post hoc on shape runs 10-12, in sample (not a transfer test): calibrate's loop fit (calibrate.api_cpu, the window's
rates) given, beside its own points, the run's held-out schema-alone points (each schema alone on each server at 32,
128 and 256 clients: lengths apart within a server, which calibrate's mixed points never are), then calibrate's chain
and the score as registered (api_split.py, api_cpu.py). Does a split of the loop's costs read where the lengths differ
bring llguidance's nested/flat at 256 clients within 10%?
  python validation/h200-vllm-0.25.1/shape/posthoc/api_insample.py [RUN ...]   (repository root) -> api_insample.txt
  CPUS=process: on the listening process's CPU, every thread (api_gil.py) -> api_insample-process.txt"""
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import api_cpu  # noqa: E402
import api_split  # noqa: E402
import api_window  # noqa: E402,F401  (the window's rates, held-out points too)
from maskcost.calibrate.api_cpu import fit_api_cpu  # noqa: E402
from maskcost.records import read_summaries  # noqa: E402

if os.environ.get("CPUS") == "process":
    import api_gil  # noqa: E402,F401  (its import puts the process's CPU for the loop's)

RUN: list[str] = []


def with_held_out(points):
    run = api_cpu.SHAPE / RUN[0]
    more = [s for srv in ("xg", "gd") for schema in ("flat", "nested")
            for s in read_summaries(run / srv / f"{schema}.jsonl")]
    return fit_api_cpu([*points, *more])


def main(runs: list[str]) -> None:
    api_cpu.fit_api_cpu = with_held_out
    for run in runs:
        RUN[:] = [run]
        api_cpu.main([run])
        sys.stdout.flush()


if __name__ == "__main__":
    api_cpu.TMP = Path("/tmp/api_insample_posthoc")
    main(sys.argv[1:] or ["run10", "run11", "run12"])
