"""Post hoc on runs 3-7 (docs/validation.md finding 24; run 7 added after it was scored): the speed read the way the README tells a user after
calibrate, from a report of the server's own points (`maskcost report` on a sweep, then `predict
--cpu-speed-from-report`), instead of calibrate's: each server's first repeat of each held-out point (flat and
nested at 32, 128, 256 clients) is the report's sweep, its second repeat is predicted from that speed (the run's
own profile, each schema with its sweep's request). Scored like check.py: |predicted / measured - 1|.
  python validation/h200-vllm-0.25.1/shape/posthoc/report_read.py [RUN ...]   (repository root; default runs 3-7)
  -> stdout (report_read.txt: runs 3-7; report_read-run8.txt: run 8, as its registration asked)"""
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))
import check  # noqa: E402


def split(path: Path, out: Path, repeat: int) -> bool:
    """The sweep's points of one repeat, written to `out`; whether there were any."""
    lines = [l for l in path.read_text().splitlines() if json.loads(l)["repeat"] == repeat]
    out.write_text("\n".join(lines) + "\n")
    return bool(lines)


def run(name: str) -> tuple[list[float], list[float]]:
    prof = str(HERE / name / "xg" / "host.json.gz")
    calibrated = json.loads((HERE / name / "score.json").read_text())["rows"]
    read_err, cal_err = [], []
    for srv, backend in check.SERVERS.items():
        with tempfile.TemporaryDirectory() as t:
            first = [Path(t) / f"{s}-r0.jsonl" for s in check.SCHEMAS[:2]]
            if not all(split(HERE / name / srv / f"{s}.jsonl", f, 0) for s, f in zip(check.SCHEMAS[:2], first)):
                continue
            subprocess.run([sys.executable, "-m", "maskcost.cli", "report", "--profile", prof, "--backend", backend,
                            "--sweep", *map(str, first), "--out", t], check=True, capture_output=True)
            speed_from = ["--cpu-speed-from-report", str(Path(t) / "report.json")]
            meas = check.measured(HERE / name)
            for s in check.SCHEMAS[:2]:
                args = ["--schema-id", s, "--prompt-tokens", str(check.SWEEP_PROMPTS[s][0]),
                        "--prompt-cached-tokens", str(check.SWEEP_PROMPTS[s][1])]
                pred = check.model(prof, args, more=speed_from)[backend]
                for c in check.LOADS:
                    second = [x["itl_ms"] for x in meas.get((backend, s, c), ()) if x["repeat"] == 1]
                    if not second:
                        continue
                    e = 100 * (pred[c]["itl_ms"] / second[0] - 1)
                    cal = next(r for r in calibrated if r["backend"] == backend and r["load"] == c and
                               r["schema"] == s) if s != "flat" else \
                        next(r for r in calibrated if r["backend"] == backend and r["load"] == c)
                    ce = cal["itl_error_pct"] if s != "flat" else cal["flat_itl_error_pct"]
                    read_err.append(e)
                    cal_err.append(ce)
                    print(f"{name} {backend:10} {s:6} c{c:3}: second repeat {second[0]:6.1f} ms, predicted from the "
                          f"report's speed {pred[c]['itl_ms']:6.1f} ({e:+.0f}%); calibrate's speed, both repeats: {ce:+.0f}%")
    return read_err, cal_err


if __name__ == "__main__":
    med = lambda xs: statistics.median(abs(x) for x in xs)  # noqa: E731
    every_r, every_c = [], []
    names = sys.argv[1:] or ["run3", "run4", "run5", "run6", "run7"]
    for name in names:
        r, c = run(name)
        every_r, every_c = every_r + r, every_c + c
        print(f"{name}: speed read from a report of the first repeats: median |error| {med(r):.1f}% over {len(r)}; "
              f"calibrate's speed (as scored): {med(c):.1f}%\n")
    print(f"{', '.join(names)}: speed read from a report: median |error| {med(every_r):.1f}% over {len(every_r)}; "
          f"calibrate's speed: {med(every_c):.1f}%")
