"""Post hoc on runs 3-6 (docs/validation.md finding 26): calibrate's chain run again on each run's own records with
the API-server fit as main has it now (calibrate.engine.fit_frontend: no pair dearer than the time between two
requests at a point's measured rate), then the server's speed and llguidance's factor fitted again on top (as
calibrate does), scored by check.py's rule against the run's registered score. Runs 3-5's forward sweeps had a busy
client at every point from 32 clients (finding 21), which the fit now leaves out, leaving too few: there every point
is read, as when they were calibrated.
  python validation/h200-vllm-0.25.1/shape/posthoc/frontend_bound.py   (repository root) -> stdout (frontend_bound.txt)"""
import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import maskcost.records
from maskcost.calibrate.engine import fit_frontend
from maskcost.model.config import EngineConfig
from maskcost.profile import load_profile, save_profile
from maskcost.records import read_summaries
from maskcost.validate.server_calibration import _fill_scaled, fit_backend_fill, read_speed

HERE = Path(__file__).resolve().parent.parent
CFG = EngineConfig(engine="vllm", engine_version="0.25.1", backend="xgrammar", max_num_seqs=256, usable_cores=16,
                   cpu_count=16)


def unfitted(p):
    """The profile as before its run's API-server fit and llguidance factor (both fitted again below)."""
    f0 = p.forward
    p = replace(p, forward=replace(f0, ttft_fixed_ms=f0.ttft_fixed_ms + f0.frontend_request_ms + f0.frontend_token_us / 1e3))
    ef = p.backends["guidance"].engine_fill
    if "then x" in ef.method:  # "...; then x<serial> serial, x<pool> pool over the factors carried ..."
        k_serial = float(ef.method.split("then x")[1].split(" serial")[0])
        k_pool = float(ef.method.split(" serial, x")[1].split(" pool")[0])
        p = replace(p, backends={**p.backends, "guidance": replace(
            p.backends["guidance"], engine_fill=_fill_scaled(ef, 1 / k_serial, 1 / k_pool))})
    return p


def refit(run: str):
    p = unfitted(load_profile(HERE / run / "xg" / "host.json.gz"))
    fw = fit_frontend(p, read_summaries(HERE / run / "xg" / "host.forward-sweep.jsonl"))
    p = replace(p, forward=replace(p.forward, frontend_token_us=fw.frontend_token_us,
                                   frontend_request_ms=fw.frontend_request_ms, ttft_fixed_ms=fw.ttft_fixed_ms))
    p = replace(p, measured_speed=read_speed(p, CFG, read_summaries(HERE / run / "xg" / "host.speed-sweep.jsonl"), "speed"))
    g = HERE / run / "xg" / "host.speed-sweep-guidance.jsonl"  # (run 3 fitted no llguidance factor)
    return (fit_backend_fill(p, CFG, "guidance", read_summaries(g), "its own server") if g.exists() else p), fw


def scored(run: str, p) -> dict:
    with tempfile.TemporaryDirectory() as t:
        f = Path(t) / "p.json.gz"
        save_profile(p, f)
        shutil.copytree(HERE / run, Path(t) / run)
        subprocess.run([sys.executable, str(HERE / "check.py"), "score", str(Path(t) / run), str(f)], check=True,
                       capture_output=True)
        return json.loads((Path(t) / run / "score.json").read_text())


def line(res: dict) -> str:
    it = res.get("itl_all") or res["itl"]
    by = res["itl"].get("median_abs_pct_by_backend")  # (scores before run 5 kept none)
    return (f"nested/flat {res['nested_within_bar']} of {res['nested_registered']} within 10%, median |ITL error| "
            f"{it['median_abs_pct']:.1f}% over {it['points']}" +
            (f" (xgrammar {by['xgrammar']:.1f}%, llguidance {by['guidance']:.1f}% at 16 cores)" if by else ""))


if __name__ == "__main__":
    for run in ("run3", "run4", "run5", "run6"):
        every = run != "run6"
        if every:  # (their calibration read every point)
            maskcost.records.client_busy = lambda s: False
        p, fw = refit(run)
        was = json.loads((HERE / run / "score.json").read_text())
        print(f"{run}: registered: {line(was)}\n  the fit bounded: {fw.frontend_token_us:.1f} us a token, "
              f"{fw.frontend_request_ms:.1f} ms a request; {line(scored(run, p))}", flush=True)
