"""Post hoc on shape runs 6-12 (docs/validation.md finding 50): the API server's costs fitted on the CPU of its whole
process (every thread of the process that listens on the port: the event loop and the renderer's one worker thread,
which share the GIL) instead of the loop thread's alone, through calibrate's chain and scored as registered
(api_split.py, api_cpu.py: a copy of the run under /tmp), with the window's rates (finding 47) and finding 46's
model.
  python validation/h200-vllm-0.25.1/shape/posthoc/api_gil.py [RUN ...]   (repository root) -> api_gil.txt
  CPUS=loop: the loop thread alone (calibrate as shipped), for the same runs -> api_gil-loop.txt
Runs 6-9's records do not mark the listening process, so there the loop thread's CPU stands for it (their lines are
the same in both files): the variant differs on runs 10-12 only."""
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import api_split  # noqa: E402
import api_window  # noqa: E402,F401  (the window's rates, held-out points too)
import maskcost.calibrate.api_cpu as api_cpu_lib  # noqa: E402

_loop = api_cpu_lib.loop_cpus


def process_cpus(s):
    """The listening process's CPU, all its threads (the loop thread's where the record names no process)."""
    api = api_cpu_lib.api_process(s)
    return api.get("cpus") if api is not None and api.get("listens") else _loop(s)


if os.environ.get("CPUS") != "loop":
    api_cpu_lib.loop_cpus = process_cpus
    api_split.loop_cpus = process_cpus

if __name__ == "__main__":
    api_split.main(sys.argv[1:] or ["run6", "run7", "run8", "run9", "run10", "run11", "run12"])
