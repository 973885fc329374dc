"""Post hoc on runs 4-7 (docs/validation.md finding 34): the held-out xgrammar points' ITL with each run's traces at
the cost of all its speed sweep's outputs (speed_outputs.txt's "all speed" factors: what calibrate's 96 speed-point
outputs and its string-value scaling now estimate), the server's speed read again from the run's own speed
points on the scaled profile (as calibrate now does, after the scaling), against the profile as calibrated. The
xgrammar server only: llguidance's factor is fitted at that speed on its own server (fit_backend_fill), not
redone here. No timing: the model on the committed profiles and sweeps.
  python validation/h200-vllm-0.25.1/shape/posthoc/speed_outputs_itl.py   (repository root) -> stdout (.txt)"""
import re
import statistics
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from maskcost.model.config import EngineConfig
from maskcost.profile import load_profile, save_profile
from maskcost.records import read_summaries
from maskcost.validate.server_calibration import read_speed

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
import check  # noqa: E402
from output_sample_model import scaled  # noqa: E402

SERVER = EngineConfig(engine="vllm", engine_version="0.25.1", backend="xgrammar", max_num_seqs=256, usable_cores=16,
                      cpu_count=16)


def factors() -> dict[str, dict[str, float]]:
    """Each run's "all speed" factors (flat, nested) from speed_outputs.txt."""
    got = {}
    for line in (HERE / "speed_outputs.txt").read_text().splitlines():
        m = re.match(r"(run\d) factors against the 32's: .*all speed flat x([\d.]+), nested x([\d.]+)", line)
        if m:
            got[m.group(1)] = {"flat": float(m.group(2)), "nested": float(m.group(3))}
    return got


def xgrammar_errors(run: str, prof: Path) -> list[float]:
    meas, meas6 = check.measured(check.HERE / run), check.measured(check.HERE / run, "6")
    pred = check.predictions(str(prof), cores6=bool(meas6), sweep_request=run in check.SWEEP_REQUEST_RUNS,
                             team16=run in check.TEAM16_RUNS)
    pick = lambda m: {k: v for k, v in m.items() if k[0] == "xgrammar"}  # noqa: E731
    return check.itl_score(pred["points"], pick(meas))["errors_pct"] + (
        check.itl_score(pred["cores6"], pick(meas6))["errors_pct"] if meas6 else [])


def run(name: str, f: dict[str, float]) -> list[float]:
    prof = check.HERE / name / "xg" / "host.json.gz"
    on = read_summaries(check.HERE / name / "xg" / "host.speed-sweep.jsonl")
    with tempfile.TemporaryDirectory() as t:
        alt = Path(t) / "host.json.gz"
        scaled(prof, f, alt)
        p = load_profile(alt)
        speed = read_speed(p, replace(SERVER), on, "host.speed-sweep.jsonl")
        save_profile(replace(p, measured_speed=speed), alt)
        before, after = xgrammar_errors(name, prof), xgrammar_errors(name, alt)
    was = load_profile(prof).measured_speed
    again = read_speed(load_profile(prof), replace(SERVER), on, "host.speed-sweep.jsonl")  # (this code, same traces)
    med = lambda es: statistics.median(abs(e) for e in es)  # noqa: E731
    print(f"{name} speed as calibrated {was.words()} (read again here on its traces {again.words()}), on the "
          f"scaled traces {speed.words()}")
    print(f"{name} xgrammar ITL errors as calibrated: {', '.join(f'{e:+.0f}%' for e in before)}; median |error| "
          f"{med(before):.1f}% over {len(before)}")
    print(f"{name} xgrammar ITL errors, traces at the speed sweep's cost: {', '.join(f'{e:+.0f}%' for e in after)}; "
          f"median |error| {med(after):.1f}%\n")
    return before, after


if __name__ == "__main__":
    got = [run(r, f) for r, f in factors().items()]
    for i, what in enumerate(("as calibrated", "traces at the speed sweep's cost")):
        every = [e for pair in got for e in pair[i]]
        print(f"runs 4-7, xgrammar's held-out points, {what}: median |ITL error| "
              f"{statistics.median(abs(e) for e in every):.1f}% over {len(every)}")
