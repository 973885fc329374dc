"""Post hoc on shape runs 6-13 (docs/validation.md findings 54, 57): calibrate.api_cpu's fit as shipped from finding 54
on, a structured stream priced by its tokens alone on the API server process's CPU (no cost of its own a request; the
schema-off stream's token on the forward sweep), against the fit it replaced (a structured request's cost fitted apart
from its tokens' on two servers' points, the loop thread's CPU: each run's "as registered" line for runs 10-12, and
api_gil-loop.txt's chain for runs 6-12). At llguidance's 256-client points of runs 10-12 the engines served flat and
nested at the same tokens a second (decode rows a step over ITL: 7.2 and 7.0, 7.0 and 7.3, 6.1 and 6.2 a ms;
loop_busiest.txt), their outputs 25.6 and 35.7 tokens a request: where the API server binds, a request's length did not
change what it served. Through calibrate's chain and scored as registered (api_cpu.py: a copy of the run under /tmp).
Runs 6-9's records name no listening process: their loop thread is read.
  python validation/h200-vllm-0.25.1/shape/posthoc/api_token_only.py [RUN ...]   (repository root) -> api_token_only.txt
  CPUS=loop: the loop thread's CPU where the process is marked too -> api_token_only-loop.txt
  SCALE=K: the structured token's cost times K (how far the scores move with it) -> api_token_only-x0.9.txt,
      -x1.1.txt"""
import os
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import api_cpu  # noqa: E402
import maskcost.calibrate.api_cpu as api_cpu_lib  # noqa: E402

if os.environ.get("CPUS") == "loop":
    api_cpu_lib.api_cpus = lambda s: (api_cpu_lib.loop_cpus(s), "loop thread")
SCALE = float(os.environ.get("SCALE", "1"))


def scaled_fit(points):
    got = api_cpu_lib.fit_api_cpu(points)
    return got if got is None else replace(got, structured_token_us=got.structured_token_us * SCALE)


api_cpu.fit_api_cpu = scaled_fit

if __name__ == "__main__":
    for run in sys.argv[1:] or ["run6", "run7", "run8", "run9", "run10", "run11", "run12", "run13"]:
        api_cpu.main([run])
        sys.stdout.flush()
