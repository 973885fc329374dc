"""Post hoc on transfer run 2 (docs/validation.md finding 57): its profile's API-server costs fitted again by
calibrate.api_cpu as shipped from finding 54 on (the process's CPU, a structured stream priced by its tokens alone) on
the profile's own calibrate sweeps, the speed read again on its speed points as calibrate reads it, then both
campaigns' predictions made again with the commands they ran and scored with report against the held-out sweeps they
recorded (16 cores: 4 points, 6 cores: 3), beside the scores as registered.
  python validation/h200-vllm-0.25.1/transfer2/posthoc_api_fit.py   (repository root) -> posthoc_api_fit.txt
  CPUS=loop: the loop thread's CPU though the record marks the process -> posthoc_api_fit-loop.txt
  FIT=kept: the profile's own API-server costs kept (the fit it was calibrated with), only the speed read again with
      the model as it now is -> posthoc_api_fit-kept.txt"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import maskcost.calibrate.api_cpu as api_cpu_lib
from maskcost.calibrate.api_cpu import fit_api_cpu
from maskcost.calibrate.engine import with_api_server
from maskcost.model.config import EngineConfig
from maskcost.profile import load_profile, save_profile
from maskcost.records import read_summaries
from maskcost.validate.server_calibration import read_speed

if os.environ.get("CPUS") == "loop":
    api_cpu_lib.api_cpus = lambda s: (api_cpu_lib.loop_cpus(s), "loop thread")
LABEL = "kept" if os.environ.get("FIT") == "kept" else "refitted"
T2 = Path(__file__).resolve().parent
RUN1, RUN2 = T2 / "run1-16cores", T2 / "run2-6cores" / "c6"
SCHEMAS = [str(T2 / "schemas" / f"{s}.json") for s in ("invoice", "booking", "sensor")]
ENGINE = ["--engine", "vllm", "--engine-version", "0.25.1", "--backend", "xgrammar", "--max-num-seqs", "256"]


def refit(out: Path) -> None:
    p = load_profile(RUN1 / "host.json.gz")
    fwd, on = read_summaries(RUN1 / "host.forward-sweep.jsonl"), read_summaries(RUN1 / "host.speed-sweep.jsonl")
    got = fit_api_cpu(fwd + on)
    fw = p.forward
    print(f"as calibrated: {fw.frontend_token_us:.0f} us a token, {fw.frontend_request_ms:.2f} ms a request, "
          f"{fw.frontend_structured_ms:.2f} ms more structured; speed read {p.measured_speed.cpu_speed:.3f}")
    if os.environ.get("FIT") == "kept":
        print("kept: the profile's own costs")
    else:
        print(f"refitted: {got.words()}")
        before = replace(fw, ttft_fixed_ms=fw.ttft_fixed_ms + fw.frontend_request_ms + fw.frontend_token_us / 1e3)
        p = replace(p, forward=with_api_server(before, got.token_us, got.request_ms,
                                               frontend_structured_ms=got.structured_ms,
                                               frontend_structured_token_us=got.structured_token_us))
    cfg = EngineConfig(engine="vllm", engine_version="0.25.1", backend="xgrammar", max_num_seqs=256, cpu_count=16,
                       usable_cores=16)
    p = replace(p, measured_speed=read_speed(p, cfg, on, "host.speed-sweep.jsonl"))
    print(f"  speed read {p.measured_speed.cpu_speed:.3f}")
    save_profile(p, out)


def score(profile: Path, run: Path, more: list[str], concurrency: list[str], tmp: Path) -> list[float]:
    pred, rep = tmp / f"{run.name}-predicted.json", tmp / f"{run.name}-report"
    cli = [sys.executable, "-m", "maskcost.cli"]
    subprocess.run([*cli, "predict", "--profile", str(profile), *ENGINE, *more, "--concurrency", *concurrency,
                    "--json", str(pred)], check=True, capture_output=True)
    cores = more[:4] if more[:1] == ["--cores"] else []  # (report runs the model as predict did)
    subprocess.run([*cli, "report", "--profile", str(profile), *ENGINE, *cores,
                    "--sweep", str(run / "val" / "sweep.jsonl"), "--predicted", str(pred), "--out", str(rep)],
                   check=True, capture_output=True)
    return errors(rep / "report.json")


def errors(report: Path) -> list[float]:
    rows = json.loads(report.read_text())["rows"]
    return [r["metrics"]["ITL ms"]["error_pct"] for r in rows if r["arm"] == "on"]


def main() -> None:
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        refit(tmp / "host.json.gz")
        got = {"16 cores": score(tmp / "host.json.gz", RUN1, ["--schema-id", "invoice", "booking", "sensor"],
                                 ["8", "64", "160", "256"], tmp),
               "6 cores": score(tmp / "host.json.gz", RUN2, ["--cores", "6", "--omp-threads", "16", "--schema", *SCHEMAS],
                                ["32", "128", "256"], tmp)}
    was = {"16 cores": errors(RUN1 / "val-predicted" / "report.json"),
           "6 cores": errors(RUN2 / "val-predicted" / "report.json")}
    for k in got:
        print(f"{k}: ITL error as registered {', '.join(f'{e:+.1f}%' for e in was[k])}; {LABEL} "
              f"{', '.join(f'{e:+.1f}%' for e in got[k])}")
    for label, d in (("as registered", was), (LABEL, got)):
        all_ = [abs(e) for v in d.values() for e in v]
        print(f"{label}: median |ITL error| {statistics.median(all_):.1f}% over {len(all_)}")


if __name__ == "__main__":
    main()
