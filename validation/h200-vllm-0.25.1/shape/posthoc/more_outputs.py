"""Post hoc on runs 4-7 (docs/validation.md finding 31): would tracing more of the server's outputs, each replayed
once, have fixed xgrammar's nested/flat ratio at the same trace time? calibrate traced 32 outputs a schema, each
the median of 3 replays; a replay's timing varies 1.1% where one output's cost varies 43-56% from the next
(replay_noise.txt), so 96 outputs replayed once cost the same replay time and know the mean sqrt(3) better.

On this CPU, xgrammar, each run's own profile vocabulary, one fresh matcher an output, fill then accept each token,
EOS included (an output's cost, its tokens):
  1. the mean cost a token over calibrate's 32 outputs a schema (as traced), over those and the next 64 the server
     wrote on the calibration's side (its speed sweep: outputs calibrate already receives), and over every output
     of the held-out sweeps (flat and nested alone, all loads and repeats: the test);
  2. the ratio nested/flat of each, and the draw's spread: the ratio over k outputs a schema drawn at random from
     the calibration's side (its outputs and speed sweep, 2,000 draws), how often within 5% and 10% of the
     held-out ratio, k = 32, 96, 192;
  3. the model's nested/flat ITL ratio with each run's traces scaled by the 96 outputs' cost against the 32's (as
     output_sample_model.py does with the held-out cost), beside the engine's measured ratios.
  python validation/h200-vllm-0.25.1/shape/posthoc/more_outputs.py   (repository root) -> stdout (more_outputs.txt)"""
import json
import os
import platform
import random
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path

from maskcost.calibrate.backends import make_backend
from maskcost.calibrate.run import recorded_outputs
from maskcost.calibrate.tokenizer import profile_vocab
from maskcost.profile import load_profile

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import check  # noqa: E402
from output_sample_model import ratio_lines  # noqa: E402

RUNS = ("run4", "run5", "run6", "run7")
KS = (32, 96, 192)
DRAWS = 2000


class Costs:
    """An output's (cost us, tokens) on one fresh matcher, cached by its token stream."""

    def __init__(self, be, vocab) -> None:
        self.be, self.vocab, self.bm, self.seen, self.compiled = be, vocab, be.bitmask(1), {}, {}

    def __call__(self, schema: str, toks) -> tuple[float, int]:
        key = (schema, tuple(toks))
        if key not in self.seen:
            if schema not in self.compiled:
                self.compiled[schema] = self.be.compile(json.loads((check.HERE / "schemas" / f"{schema}.json")
                                                                   .read_text()), True)[0]
            m, clock, total, n = self.be.matcher(self.compiled[schema]), time.perf_counter_ns, 0, 0
            for t in list(toks) + [self.vocab.eos_id]:
                t0 = clock()
                self.be.fill(m, self.bm, 0)
                ok = self.be.accept(m, t)
                total += clock() - t0
                n += 1
                if not ok:
                    break
            self.seen[key] = (total / 1e3, n)
        return self.seen[key]


def mean(cn: list[tuple[float, int]]) -> float:
    return sum(c for c, _ in cn) / sum(n for _, n in cn)


def draws(pool: dict[str, list], truth: float, rng: random.Random) -> str:
    out = []
    for k in KS:
        errs = [abs(mean(rng.sample(pool["nested"], k)) / mean(rng.sample(pool["flat"], k)) / truth - 1)
                for _ in range(DRAWS)]
        out.append(f"k={k}: within 5% {100 * sum(e <= 0.05 for e in errs) / DRAWS:.0f}%, within 10% "
                   f"{100 * sum(e <= 0.10 for e in errs) / DRAWS:.0f}%")
    return "; ".join(out)


def run_outputs(name: str, vocab_cache: dict) -> tuple[Path, Costs, dict, dict]:
    """A run's xgrammar folder, the Costs of its profile's vocabulary (one a vocabulary, in `vocab_cache`), and
    the calibration side's outputs by schema as the engine emitted them: calibrate's, its speed sweep's."""
    d = check.HERE / name / "xg"
    p = load_profile(d / "host.json.gz")
    if p.tokenizer_sha256 not in vocab_cache:
        vocab = profile_vocab(p.tokenizer, p.vocab_size, p.tokenizer_sha256)
        vocab_cache[p.tokenizer_sha256] = Costs(make_backend("xgrammar", vocab), vocab)
    cost = vocab_cache[p.tokenizer_sha256]
    return d, cost, *(recorded_outputs(d / f, cost.vocab) for f in ("host.outputs.raw.jsonl.gz",
                                                                    "host.speed-sweep.raw.jsonl.gz"))


def run(name: str, vocab_cache: dict) -> None:
    d, cost, cal, speed = run_outputs(name, vocab_cache)
    vocab = cost.vocab
    sets = {s: {"32": [cost(s, o) for o in cal[s][:32]],
                "96": [cost(s, o) for o in (cal[s][:32] + speed[s])[:96]],
                "held-out": [cost(s, o) for o in recorded_outputs(d / f"{s}.raw.jsonl.gz", vocab)[s]]}
            for s in ("flat", "nested")}
    for s, got in sets.items():
        print(f"{name} {s:6}: us a token over " + ", ".join(f"{k} ({len(v)} outputs) {mean(v):.0f}"
                                                            for k, v in got.items()))
    ratio = {k: mean(sets["nested"][k]) / mean(sets["flat"][k]) for k in ("32", "96", "held-out")}
    print(f"{name} nested/flat: 32 outputs {ratio['32']:.3f}, 96 outputs {ratio['96']:.3f}, held-out "
          f"{ratio['held-out']:.3f}")
    pool = {s: [cost(s, o) for o in cal[s] + speed[s]] for s in ("flat", "nested")}
    print(f"{name} draws from the calibration's side ({len(pool['flat'])} flat, {len(pool['nested'])} nested) "
          f"against the held-out ratio: {draws(pool, ratio['held-out'], random.Random(name))}")
    f = {s: mean(sets[s]["96"]) / mean(sets[s]["32"]) for s in ("flat", "nested")}
    model_ratios(name, d / "host.json.gz", f)


def model_ratios(name: str, prof: Path, f: dict[str, float]) -> None:
    print("\n".join(ratio_lines(name, prof, f, ("model, as calibrated (32)", "model, 96 outputs' cost"))))
    print(f"{name} factors (96 outputs' cost / 32's): flat x{f['flat']:.3f}, nested x{f['nested']:.3f}\n")


def host_line() -> str:
    """This CPU, its nproc and xgrammar's version (the figures' basis)."""
    cpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    name = next((ln for ln in cpu.splitlines() if ln.startswith("Model name")), platform.processor())
    return f"{name.split(':')[-1].strip()} nproc {len(os.sched_getaffinity(0))}, xgrammar {version('xgrammar')}"


if __name__ == "__main__":
    vocabs: dict = {}
    for r in RUNS:
        run(r, vocabs)
    print(host_line())
