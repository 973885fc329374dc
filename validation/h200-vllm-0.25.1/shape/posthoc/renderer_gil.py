"""Post hoc on shape runs 6-12 (docs/validation.md finding 50): the API server's renderer thread (chat template and
tokenizer, one worker: vllm renderers/base.py) takes the GIL from the event loop while it works, so the loop serves
less than its own thread's CPU says it could. calibrate's loop fit as shipped (the loop thread's CPU, the window's
rates), then its costs made dearer by what the renderer's thread read at calibrate's own schema-on speed points
(the median over them, read as the sweeps read the loop: validate/servercpu.py, the listening process's second
thread): MODE=scale, every loop cost x (1 + renderer CPU / loop CPU); MODE=admit, a request's admission + the
renderer's CPU a request. Through calibrate's chain and scored as registered (api_split.py, api_cpu.py).
  MODE=scale|admit python validation/h200-vllm-0.25.1/shape/posthoc/renderer_gil.py [RUN ...]
      -> renderer_gil-MODE.txt"""
import os
import statistics
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import api_cpu  # noqa: E402
import api_split  # noqa: E402
import api_window  # noqa: E402,F401  (the window's rates)
from maskcost.calibrate.api_cpu import api_process, loop_cpus, window_tokens_per_s  # noqa: E402
from maskcost.profile import load_profile, save_profile  # noqa: E402
from maskcost.records import read_summaries  # noqa: E402

MODE = os.environ.get("MODE", "scale")
_refit = api_cpu.refit


def renderer_cpus(s) -> float | None:
    """The second-busiest thread of the API server's process (api_process), None where none."""
    threads = (api_process(s) or {}).get("threads") or []
    return threads[1] if len(threads) > 1 else None


def renderer_read(run: str) -> tuple[float, float]:
    """(renderer CPU over loop CPU, renderer ms a request): medians over calibrate's schema-on speed points."""
    d = api_cpu.SHAPE / run / "xg"
    pts = [s for f in ("host.speed-sweep.jsonl", "host.speed-sweep-guidance.jsonl") for s in read_summaries(d / f)
           if renderer_cpus(s) and loop_cpus(s)]
    share = statistics.median(renderer_cpus(s) / loop_cpus(s) for s in pts)
    per_req = statistics.median(1e3 * renderer_cpus(s) * s.output_tokens_mean / window_tokens_per_s(s) for s in pts)
    return share, per_req


def refit(run: str) -> Path | None:
    out = _refit(run)
    if out is None:
        return None
    path = out / "xg" / "host-cpu.json.gz"
    p, (share, per_req) = load_profile(path), renderer_read(run)
    fw = p.forward
    if MODE == "scale":
        k = 1 + share
        fw = replace(fw, frontend_token_us=fw.frontend_token_us * k, frontend_request_ms=fw.frontend_request_ms * k,
                     frontend_structured_ms=fw.frontend_structured_ms * k,
                     frontend_structured_token_us=fw.frontend_structured_token_us * k)
    else:  # (a structured request's cost is whole where the arms were read apart, else the extra over a request's)
        fw = replace(fw, frontend_request_ms=fw.frontend_request_ms + per_req,
                     frontend_structured_ms=fw.frontend_structured_ms + (per_req if fw.frontend_structured_token_us
                                                                          else 0.0))
    save_profile(replace(p, forward=fw), path)
    print(f"  the renderer's thread at calibrate's speed points: {share:.3f} of the loop's CPU, {per_req:.2f} ms a "
          f"request ({MODE})")
    return out


if __name__ == "__main__":
    api_cpu.refit = refit
    api_cpu.TMP = Path(f"/tmp/renderer_gil_{MODE}")
    api_split.main(sys.argv[1:] or ["run6", "run7", "run8", "run9", "run10", "run11", "run12"])
