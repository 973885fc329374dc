"""Post hoc on shape runs 6-9 (docs/validation.md finding 39): the API server's costs read from its event
loop's CPU (calibrate.api_cpu, as calibrate now does where the server runs on the calibrating machine) in
place of the fit on the forward sweep's TTFT and running counts each run's profile holds, then what follows
it in calibrate again (the speed read on the xgrammar server's speed points, llguidance's fill factor on its
own server's, over the factors the profile holds), and the run scored as its registration says (check.py
score, into a copy of the run under /tmp). Runs 1-5's calibrate sweeps carry no server CPU.
  python validation/h200-vllm-0.25.1/shape/posthoc/api_cpu.py [RUN ...]   (repository root) -> stdout (api_cpu.txt)
  SCALED=1: the loop's costs times the speed read (the model scales host work by 1 / speed; the loop's CPU was
      measured at the server's own speed): api_cpu-scaled.txt, worse on all four runs, not shipped"""
import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from maskcost.calibrate.api_cpu import fit_api_cpu
from maskcost.model.config import EngineConfig
from maskcost.profile import load_profile, save_profile
from maskcost.records import read_summaries
from maskcost.validate.server_calibration import fit_backend_fill, read_speed

SHAPE = Path(__file__).resolve().parent.parent
TMP = Path("/tmp/api_cpu_posthoc")
SCALED = bool(os.environ.get("SCALED"))


def refit(run: str) -> Path | None:
    d = SHAPE / run / "xg"
    p = load_profile(d / "host.json.gz")
    fwd = read_summaries(d / "host.forward-sweep.jsonl")
    xg, gd = read_summaries(d / "host.speed-sweep.jsonl"), read_summaries(d / "host.speed-sweep-guidance.jsonl")
    got = fit_api_cpu([*fwd, *xg, *gd])
    fw = p.forward
    print(f"{run}: as calibrated {fw.frontend_token_us:.0f} us a token, {fw.frontend_request_ms:.2f} ms a request, "
          f"{fw.frontend_structured_ms:.2f} ms more structured; refitted: "
          + ("none (no server CPU in its sweeps)" if got is None else got.words()))
    if got is None:
        return None
    fixed = fw.ttft_fixed_ms + fw.frontend_request_ms + fw.frontend_token_us / 1e3  # (before the TTFT fit)
    p = replace(p, forward=replace(fw, frontend_token_us=got.token_us, frontend_request_ms=got.request_ms,
                                   frontend_structured_ms=got.structured_ms,
                                   frontend_structured_token_us=got.structured_token_us,  # (finding 44 on)
                                   ttft_fixed_ms=max(0.0, fixed - got.request_ms - got.token_us / 1e3)))
    cfg = EngineConfig(engine="vllm", engine_version="0.25.1", backend="xgrammar", max_num_seqs=256, cpu_count=16,
                       usable_cores=16)
    p = replace(p, measured_speed=read_speed(p, cfg, xg, "host.speed-sweep.jsonl"))
    if SCALED:
        k = p.measured_speed.cpu_speed
        fw = p.forward
        p = replace(p, forward=replace(fw, frontend_token_us=fw.frontend_token_us * k,
                                       frontend_request_ms=fw.frontend_request_ms * k,
                                       frontend_structured_ms=fw.frontend_structured_ms * k,
                                       frontend_structured_token_us=fw.frontend_structured_token_us * k))
    p = fit_backend_fill(p, cfg, "guidance", gd, "its llguidance server")
    ef = p.backends["guidance"].engine_fill
    pool = p.measured_speed.pool_speed
    print(f"  speed read {p.measured_speed.cpu_speed:.3f} (pool {'-' if pool is None else f'{pool:.3f}'}); llguidance's factors "
          f"serial {ef.serial_factor:.3f}, pool {ef.pool_factor:.3f}")
    out = TMP / run
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(SHAPE / run, out)
    save_profile(p, out / "xg" / "host-cpu.json.gz")
    return out


def main(runs: list[str]) -> None:
    for run in runs:
        out = refit(run)
        if out is None:
            continue
        subprocess.run([sys.executable, str(SHAPE / "check.py"), "score", str(out), str(out / "xg" / "host-cpu.json.gz")],
                       check=True, capture_output=True)
        new, old = json.loads((out / "score.json").read_text()), json.loads((SHAPE / run / "score.json").read_text())
        for label, s, pred in (("as registered", old, SHAPE / run), ("loop CPU fit", new, out)):
            print(f"  {label:13s}: " + "; ".join(f"{k} {v}" for k, v in summary(s).items()) + "; " + running(run, pred))


def running(run: str, d: Path) -> str:
    """llguidance's running requests at 128 and 256 clients, the model's (d/predicted.json) / the engine's."""
    pred, got = json.loads((d / "predicted.json").read_text())["points"], []
    for s in ("flat", "nested"):
        lines = [json.loads(x) for x in (SHAPE / run / "gd" / f"{s}.jsonl").read_text().splitlines()]
        for c in (128, 256):
            m = [x["engine"]["running_mean"] for x in lines if x["arm"] == "on" and x["concurrency"] == c]
            p = pred[s]["guidance"][str(c)]["running"]
            got.append(f"{s} {c} {p:.0f}/{sum(m) / len(m):.0f}")
    return "llguidance running (model/engine) " + ", ".join(got)


def summary(s: dict) -> dict:
    ratios = [f"{r['backend'][:2]}{r['load']} {r['error_pct']:+.0f}%" for r in s["rows"] if r.get("error_pct") is not None]
    by = s["itl"]["median_abs_pct_by_backend"]
    return {"nested/flat within 10%": f"{s['nested_within_bar']} of {s['nested_scored']} ({', '.join(ratios)})",
            "median |ITL error|": f"{s['itl_all']['median_abs_pct']:.1f}% over {s['itl_all'].get('points', 16)} "
                                  f"(16 cores: xgrammar {by['xgrammar']:.1f}%, llguidance {by['guidance']:.1f}%)"}


if __name__ == "__main__":
    main(sys.argv[1:] or ["run6", "run7", "run8", "run9"])
