"""Post hoc on shape runs 10-12 (docs/validation.md finding 51): a request's admission as HOPS turns of the API server's
loop, each queued behind what the loop holds when the last one ends (vLLM 0.25.1's admission awaits the loop some six
times and the renderer's one worker twice: serving.py, renderers/base.py, async_llm.py), where the model queues it once
(model/api_server.py); its cost split evenly over the hops. Each run's profile as calibrated (RUN/xg/host.json.gz),
llguidance's flat and nested points at 256 clients (loop_edge.py's predict), against the engine's running count and the
client's TTFT p50.
  python validation/h200-vllm-0.25.1/shape/posthoc/admit_hops.py [RUN ...]   (repository root) -> admit_hops.txt"""
import contextlib
import io
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import loop_edge  # noqa: E402  (SHAPE)
from maskcost.cli import main as maskcost_main  # noqa: E402
from maskcost.model.engine import Simulation  # noqa: E402
from maskcost.records import itl_ms, read_summaries  # noqa: E402
from check import SWEEP_PROMPTS  # noqa: E402  (loop_edge put the shape folder on the path)

HOPS = (1, 6, 12)


def hopped(hops: int) -> None:
    """The model's admission as `hops` queued turns, a structured request's cost split evenly over them (every request
    of these points carries a schema), each queued when the one before it ends."""
    def admit(sim, rid, left=hops):
        if not left:
            sim._reach_engine(rid)
            return
        api = sim.api
        ms = (api.structured_ms if api.apart else api.request_ms + api.structured_ms) * api.cpu_scale / hops
        sim.env.timeout(api.job("admit request (a turn)", ms, sim.env.now)).callbacks.append(
            lambda _ev: admit(sim, rid, left - 1))
    Simulation._admit = admit


def predict_point(profile: Path, schema: str) -> dict:
    """loop_edge.predict's point, in this process (where the patched admission runs)."""
    with tempfile.TemporaryDirectory() as t, contextlib.redirect_stdout(io.StringIO()):
        out = Path(t) / "p.json"
        maskcost_main(["predict", "--profile", str(profile), "--engine", "vllm", "--engine-version", "0.25.1",
                       "--backend", "guidance", "--max-num-seqs", "256", "--schema-id", schema, "--prompt-tokens",
                       str(SWEEP_PROMPTS[schema][0]), "--prompt-cached-tokens", str(SWEEP_PROMPTS[schema][1]),
                       "--concurrency", "256", "--json", str(out)])
        return json.loads(out.read_text())["points"][0]


def main(runs: list[str]) -> None:
    for run in runs:
        prof = loop_edge.SHAPE / run / "xg" / "host.json.gz"
        for schema in ("flat", "nested"):
            pts = [s for s in read_summaries(loop_edge.SHAPE / run / "gd" / f"{schema}.jsonl") if s.concurrency == 256]
            print(f"{run} {schema}: engine ITL {statistics.fmean(itl_ms(s) for s in pts):.1f} ms, running "
                  f"{statistics.fmean(s.engine.running_mean for s in pts):.0f}, client TTFT p50 "
                  f"{statistics.fmean(s.ttft_ms_p50 for s in pts):.0f} ms")
            for h in HOPS:
                hopped(h)
                got = predict_point(prof, schema)
                print(f"  {h:2d} turns: ITL {got['itl_ms_mean']:.1f} ms, running {got['running_mean']:.0f}, TTFT p50 "
                      f"{got['ttft_ms_p50']:.0f} ms, loop {got['api_server_busy_fraction']:.2f}")
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:] or ["run10", "run11", "run12"])
