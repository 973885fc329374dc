"""Post hoc on runs 4-7 (docs/validation.md finding 30): is xgrammar's nested/flat ratio off because calibrate
traces 32 outputs a schema, the same 32 on every run (dummy weights, calibrate's seed), where the held-out
sweeps' engines wrote thousands of others? On this CPU, xgrammar, each run's own profile vocabulary: the mean us a
fill over calibrate's recorded outputs (the first 32 a schema, as traced) and over every output the run's
held-out sweeps recorded (flat and nested alone on the xgrammar server, all loads and repeats), fill then accept
each token, EOS included; the nested/flat ratio of each, beside the engine's measured ITL ratios (score.json).
  python validation/h200-vllm-0.25.1/shape/posthoc/output_sample.py   (repository root) -> stdout (output_sample.txt)"""
import json
import statistics
import time
from pathlib import Path

from maskcost.calibrate.backends import make_backend
from maskcost.calibrate.run import recorded_outputs
from maskcost.calibrate.tokenizer import profile_vocab
from maskcost.profile import load_profile

S = Path(__file__).resolve().parent.parent


def us_a_fill(be, vocab, compiled, outputs) -> float:
    bm, total, n = be.bitmask(1), 0.0, 0
    for toks in outputs:
        m = be.matcher(compiled)
        for t in list(toks) + [vocab.eos_id]:
            t0 = time.perf_counter()
            be.fill(m, bm, 0)
            total += time.perf_counter() - t0
            n += 1
            if not be.accept(m, t):
                break
    return total / n * 1e6


def run(name: str) -> None:
    p = load_profile(S / name / "xg" / "host.json.gz")
    vocab = profile_vocab(p.tokenizer, p.vocab_size, p.tokenizer_sha256)
    be = make_backend("xgrammar", vocab)
    cal = recorded_outputs(S / name / "xg" / "host.outputs.raw.jsonl.gz", vocab)
    got = {}
    for s in ("flat", "nested"):
        compiled, _ = be.compile(json.loads((S / "schemas" / f"{s}.json").read_text()), True)
        held = recorded_outputs(S / name / "xg" / f"{s}.raw.jsonl.gz", vocab)[s]
        got[s] = (us_a_fill(be, vocab, compiled, cal[s][:32]), us_a_fill(be, vocab, compiled, held), len(held),
                  statistics.fmean(map(len, held)))
        print(f"{name} {s:6}: calibrate's 32 outputs {got[s][0]:5.0f} us a fill; the held-out sweeps' {got[s][2]} "
              f"outputs ({got[s][3]:.1f} tokens) {got[s][1]:5.0f}")
    rows = json.loads((S / name / "score.json").read_text())["rows"]
    measured = [r["measured_ratio"] for r in rows if r["backend"] == "xgrammar" and r["schema"] == "nested"]
    print(f"{name} nested/flat: calibrate's outputs {got['nested'][0] / got['flat'][0]:.3f}, the held-out sweeps' "
          f"{got['nested'][1] / got['flat'][1]:.3f}; the engine's ITL at 32/128/256 clients "
          f"{', '.join(f'{x:.2f}' if x is not None else '-' for x in measured)}\n")


if __name__ == "__main__":
    for name in ("run4", "run5", "run6", "run7"):
        run(name)
