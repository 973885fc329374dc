"""Post hoc (the registration of shape run 20): the API server's costs priced as read (ForwardCurve.frontend_read_speed)
the way calibrate now does it, replayed on shape runs 13-19's records: each run's xgrammar speed points read again with
its profile's API costs as read at every speed tried (AS_READ_HERE), the costs then marked read at the serial speed
read (at_speed_read), the rest of the profile as made (llguidance's fill factor not refitted); scored as the shape
check scores (check.py score on a copy of the run, main's model). SAME: the speed read again as made (the old
convention), to check that the replay gives the profile's own speed. Run from the repository root with the
repository's environment: python validation/h200-vllm-0.25.1/shape/posthoc/api_as_read.py [run13 ...]"""
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(ROOT))
from maskcost.model.config import EngineConfig  # noqa: E402
from maskcost.profile import AS_READ_HERE, load_profile, save_profile  # noqa: E402
from maskcost.records import read_summaries  # noqa: E402
from maskcost.validate.server_fits import at_speed_read, read_speed  # noqa: E402

SHAPE = ROOT / "validation/h200-vllm-0.25.1/shape"
CFG = EngineConfig(engine="vllm", engine_version="0.25.1", backend="xgrammar", max_num_seqs=256, usable_cores=16,
                   cpu_count=16)


def scored(run: Path, profile) -> dict:
    with tempfile.TemporaryDirectory() as t:
        copy = Path(t) / run.name
        shutil.copytree(run, copy, ignore=shutil.ignore_patterns("*.raw.jsonl.gz", "*.log.gz", "score.*",
                                                                 "predicted.json"))
        save_profile(profile, Path(t) / "p.json.gz")
        subprocess.run([sys.executable, str(SHAPE / "check.py"), "score", str(copy), str(Path(t) / "p.json.gz")],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
        return json.loads((copy / "score.json").read_text())


def view(d: dict) -> str:
    ok = lambda key: sum(abs(r["error_pct"]) <= 10 for r in d["rows"] if r["schema"] == key  # noqa: E731
                         and r.get("error_pct") is not None)
    it = d["itl"]
    return (f"{it['median_abs_pct']:5.1f}% ({statistics.median(it['errors_pct']):+5.1f}%), llguidance "
            f"{it['median_abs_pct_by_backend']['guidance']:5.1f}%, nested/flat {ok('nested')}, deep/flat {ok('deep')}, "
            f"interval {it['inside_interval']}/{it['points']}")


def main(runs: list[str]) -> None:
    for name in runs:
        run = SHAPE / name
        made = load_profile(run / "xg" / "host.json.gz")
        on = read_summaries(run / "xg" / "host.speed-sweep.jsonl")
        line = [f"{name}: made {made.measured_speed.words()} {made.measured_speed.points}"]
        for what, mark in (("same", made.forward.frontend_read_speed), ("as read", AS_READ_HERE)):
            p = replace(made, forward=replace(made.forward, frontend_read_speed=mark), measured_speed=None)
            ms = read_speed(p, CFG, on, "host.speed-sweep.jsonl")
            p = at_speed_read(replace(p, measured_speed=ms))
            line.append(f"  {what}: speed {ms.words()} {ms.points}, API read at {p.forward.frontend_read_speed}: "
                        + (view(scored(run, p)) if what == "as read" else "(not scored)"))
        print("\n".join(line), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or [f"run{n}" for n in range(13, 20)])
