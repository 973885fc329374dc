"""Run 20's registered comparison (shape/README.md, run 20): the run's records scored by check.py score on a copy of
the run as made (AS READ: the API server's costs priced as read, ForwardCurve.frontend_read_speed the speed read) and
with the profile's frontend_read_speed set to 1.0 (SCALED AGAIN: the costs as read, scaled by the speed read, the
model before). Per arm: median |ITL error| over the held-out points (llguidance's), the signed median, nested/flat
and deep/flat within 10%, points inside the interval. Run from the repository root with the repository's environment:
python validation/h200-vllm-0.25.1/shape/posthoc/read_vs_scaled.py run20"""
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from api_as_read import SHAPE, scored, view  # noqa: E402
from maskcost.profile import load_profile  # noqa: E402


def main(name: str) -> None:
    run = SHAPE / name
    made = load_profile(run / "xg" / "host.json.gz")
    print(f"{name}: speed read {made.measured_speed.words()}, API costs read at {made.forward.frontend_read_speed}")
    print(f"  as read:      {view(scored(run, made))}")
    again = replace(made, forward=replace(made.forward, frontend_read_speed=1.0))
    print(f"  scaled again: {view(scored(run, again))}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "run20")
