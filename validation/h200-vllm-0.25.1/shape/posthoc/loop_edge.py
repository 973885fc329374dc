"""Post hoc on shape runs 10-12 (docs/validation.md finding 50): how far llguidance's 256-client points move with the
API server's costs. Each run's own profile (RUN/xg/host.json.gz) with every frontend cost (a request's, a structured
request's, a token's) scaled by 0.90-1.10, then predict llguidance's flat and nested points at 256 clients with each
schema's sweep request (check.py SWEEP_PROMPTS), 256 max-num-seqs and predict's default precision (guidance alone at
one load, where the check predicts both backends at every load in one call); the model's ITL and running count
against the engine's (records.itl_ms and running_mean, the mean of the two repeats).
  python validation/h200-vllm-0.25.1/shape/posthoc/loop_edge.py [RUN ...]   (repository root) -> loop_edge.txt"""
import json
import statistics
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from maskcost.profile import load_profile, save_profile
from maskcost.records import itl_ms, read_summaries

SHAPE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(SHAPE))
from check import SWEEP_PROMPTS  # noqa: E402

SCALES = (0.90, 0.95, 1.00, 1.05, 1.10)


def predict(profile: Path, schema: str) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as t:
        out = Path(t) / "p.json"
        subprocess.run([sys.executable, "-m", "maskcost.cli", "predict", "--profile", str(profile), "--engine", "vllm",
                        "--engine-version", "0.25.1", "--backend", "guidance", "--max-num-seqs", "256", "--schema-id",
                        schema, "--prompt-tokens", str(SWEEP_PROMPTS[schema][0]), "--prompt-cached-tokens",
                        str(SWEEP_PROMPTS[schema][1]), "--concurrency", "256", "--json", str(out)],
                       check=True, capture_output=True)
        p = json.loads(out.read_text())["points"][0]
    return p["itl_ms_mean"], p["running_mean"]


def measured(run: str, schema: str) -> tuple[float, float]:
    pts = [s for s in read_summaries(SHAPE / run / "gd" / f"{schema}.jsonl") if s.concurrency == 256]
    return statistics.fmean(itl_ms(s) for s in pts), statistics.fmean(s.engine.running_mean for s in pts)


def main(runs: list[str]) -> None:
    for run in runs:
        base = load_profile(SHAPE / run / "xg" / "host.json.gz")
        meas = {s: measured(run, s) for s in ("flat", "nested")}
        (f_itl, f_run), (n_itl, n_run) = meas["flat"], meas["nested"]
        print(f"{run}: engine ITL ms / running: flat {f_itl:.1f} / {f_run:.0f}, nested {n_itl:.1f} / {n_run:.0f}; "
              f"nested/flat {n_itl / f_itl:.2f}")
        for k in SCALES:
            fw = base.forward
            p = replace(base, forward=replace(fw, frontend_token_us=fw.frontend_token_us * k,
                                              frontend_request_ms=fw.frontend_request_ms * k,
                                              frontend_structured_ms=fw.frontend_structured_ms * k,
                                              frontend_structured_token_us=fw.frontend_structured_token_us * k))
            with tempfile.TemporaryDirectory() as t:
                path = Path(t) / "p.json.gz"
                save_profile(p, path)
                got = {s: predict(path, s) for s in ("flat", "nested")}
            ratio = got["nested"][0] / got["flat"][0]
            (f_ms, f_n), (n_ms, n_n) = got["flat"], got["nested"]
            print(f"  loop costs x{k:.2f}: flat {f_ms:.1f} / {f_n:.0f}, nested {n_ms:.1f} / {n_n:.0f}; nested/flat "
                  f"{ratio:.2f} ({100 * (ratio / (n_itl / f_itl) - 1):+.0f}%)")
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:] or ["run10", "run11", "run12"])
