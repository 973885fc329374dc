"""Shape runs 10-14, each run's own profile: the model's API server with its admissions queued first come first
served behind the streamed steps (as shipped), served at once (their CPU pushing the streamed steps back), or moved
one hop a loop turn (a turn ends where a streamed step's job ends; K hops, vLLM's admission being about six: finding
50); the model's ITL and its mean step at each held-out point against the engines', and the nested/flat ratios
(docs/validation.md finding 62). Run from the repository root:
python validation/h200-vllm-0.25.1/shape/posthoc/admit_order.py"""
import json
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))
import check  # noqa: E402

from maskcost.cli import main  # noqa: E402
from maskcost.model import api_server  # noqa: E402

FCFS_ADMIT, FCFS_STREAM = api_server.ApiServer.admit, api_server.ApiServer.stream


def _cost(self, structured: bool) -> float:
    ms = (self.structured_ms if self.apart else self.request_ms + self.structured_ms) if structured else self.request_ms
    return ms * self.cpu_scale


def at_once(self, structured: bool, now: float) -> float:
    dur = _cost(self, structured)
    self.free_at = (self.free_at if self.free_at > now else now) + dur
    self.busy_ms += dur
    return dur


def by_turns(k: int):
    def admit(self, structured: bool, now: float) -> float:
        dur, ends = _cost(self, structured), self.__dict__.setdefault("stream_ends", [])
        while ends and ends[0] <= now:
            ends.pop(0)
        self.free_at = (self.free_at if self.free_at > now else now) + dur
        self.busy_ms += dur
        return (ends[k - 1] + dur if len(ends) >= k else self.free_at) - now
    return admit


def stream_noting_ends(self, tokens: int, now: float) -> float:
    d = FCFS_STREAM(self, tokens, now)
    self.__dict__.setdefault("stream_ends", []).append(self.free_at)
    return d


def in_process(profile, schema_arg, loads=check.LOADS, more=()):
    """check.model, the predict command run in this process (so that the variant's patch holds)."""
    with tempfile.TemporaryDirectory() as t:
        out = Path(t) / "p.json"
        main(["predict", "--profile", profile, "--engine", "vllm", "--engine-version", "0.25.1", "--backend",
              *check.SERVERS.values(), "--max-num-seqs", "256", *schema_arg, "--concurrency", *map(str, loads), *more,
              "--json", str(out)])
        d = json.loads(out.read_text())
    got = {}
    for p in d["points"]:
        got.setdefault(p["backend"], {})[p["concurrency"]] = {"itl_ms": p["itl_ms_mean"],
                                                               "step_ms": p["breakdown"]["step_ms"]}
    return got


VARIANTS = {"first come first served (shipped)": (FCFS_ADMIT, FCFS_STREAM), "at once": (at_once, FCFS_STREAM),
            "one hop a turn, 6 hops": (by_turns(6), stream_noting_ends),
            "one hop a turn, 3 hops": (by_turns(3), stream_noting_ends)}


def main_() -> None:
    check.model = in_process
    import contextlib
    import io
    for name, (admit, stream) in VARIANTS.items():
        api_server.ApiServer.admit, api_server.ApiServer.stream = admit, stream
        within, lines = 0, []
        for run in ("run10", "run11", "run12", "run13", "run14"):
            with contextlib.redirect_stdout(io.StringIO()):
                pred = check.predictions(str(HERE / run / "xg" / "host.json.gz"), sweep_request=True, team16=True)
            meas = check.measured(HERE / run)
            errs, ratios = [], []
            for b in check.SERVERS.values():
                for c in check.LOADS:
                    m = {s: statistics.fmean(x["itl_ms"] for x in meas[(b, s, c)]) for s in ("flat", "nested")}
                    p = {s: pred["points"][s][b][str(c)] for s in ("flat", "nested")}
                    errs += [100 * (p[s]["itl_ms"] / m[s] - 1) for s in m]
                    ratios.append(100 * (p["nested"]["itl_ms"] / p["flat"]["itl_ms"] / (m["nested"] / m["flat"]) - 1))
                    if b == "guidance" and c == 256:
                        lines.append(f"  {run} llguidance 256: " + ", ".join(
                            f"{s} ITL {p[s]['itl_ms']:.1f} (step {p[s]['step_ms']:.1f}) against {m[s]:.1f}" for s in m)
                            + f"; nested/flat {ratios[-1]:+.0f}%")
            n = sum(abs(r) <= 10 for r in ratios)
            within += n
            lines.append(f"  {run}: nested/flat within 10% {n} of 6 ({', '.join(f'{r:+.0f}' for r in ratios)}); "
                         f"median |ITL error| {statistics.median(abs(e) for e in errs):.1f}% over 12")
        print(f"{name}: nested/flat within 10% {within} of 30")
        print("\n".join(lines))


if __name__ == "__main__":
    main_()
