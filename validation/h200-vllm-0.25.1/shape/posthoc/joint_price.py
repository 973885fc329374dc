"""Post hoc on runs 4-8 (docs/validation.md finding 37): the replay's relative cost of two schemas moved with the
calibrating host's CPU, and the engine's did not. xgrammar's cost a token is nearly all fills inside a string
value (finding 33): would one price for every schema of a server, cost = a fills + b fills inside a string value
fitted over all its schemas' traces together, so that each schema's cost a token is a + b s (s: the share of its
fills inside a string value, counted from the tokens of the server's speed-sweep outputs, no timing), carry the
engine's relative cost where each schema's own replay did not?

Each run's own profile and traces (run 8's as calibrate scaled them); the flags of runs 4-7's traces counted from
the outputs they replayed (their outputs point, in order; token counts checked). The model's nested/flat with each
schema's traces scaled to a + b s over its replayed mean (flat's factor divided out), against the engine's.
  python validation/h200-vllm-0.25.1/shape/posthoc/joint_price.py   (repository root) -> stdout (joint_price.txt)"""
import statistics
import sys
from pathlib import Path

import numpy as np

from maskcost.calibrate.fill import in_string_value
from maskcost.calibrate.run import recorded_outputs
from maskcost.calibrate.tokenizer import profile_vocab
from maskcost.profile import load_profile

sys.path.insert(0, str(Path(__file__).resolve().parent))
from more_outputs import check  # noqa: E402
from output_sample_model import ratio_lines  # noqa: E402

RUNS = ("run4", "run5", "run6", "run7", "run8")


def flags(vocab, toks) -> list[bool]:
    return list(in_string_value([vocab.tokens[t] for t in toks if t != vocab.eos_id]))


def rows(run: str, p, vocab) -> dict[str, list[tuple[float, int, int]]]:
    """schema -> each trace's (cost us, fills, fills inside a string value)."""
    outs = {} if p.backends["xgrammar"].traces[0].in_string else \
        recorded_outputs(check.HERE / run / "xg" / "host.outputs.raw.jsonl.gz", vocab)
    by: dict[str, list] = {}
    for t in p.backends["xgrammar"].traces:
        k = len(by.get(t.schema_id, []))
        if t.in_string:
            x = sum(t.in_string)
        else:
            toks = list(outs[t.schema_id][k])
            if len(toks) + 1 != len(t.fill_us):
                continue  # not the output this trace replayed
            x = sum(flags(vocab, toks))
        by.setdefault(t.schema_id, []).append((sum(t.fill_us) + sum(t.accept_us), len(t.fill_us), x))
    return by


def main() -> None:
    for run in RUNS:
        prof = check.HERE / run / "xg" / "host.json.gz"
        p = load_profile(prof)
        vocab = profile_vocab(p.tokenizer, p.vocab_size, p.tokenizer_sha256)
        by = rows(run, p, vocab)
        speed = recorded_outputs(check.HERE / run / "xg" / "host.speed-sweep.raw.jsonl.gz", vocab)
        share = {s: statistics.fmean(f for o in speed[s] for f in flags(vocab, list(o))) for s in by}
        c, n, x = (np.array(col, dtype=float) for col in zip(*(r for v in by.values() for r in v)))
        (a, b), *_ = np.linalg.lstsq(np.column_stack([n, x]), c, rcond=None)
        est = {s: a + b * share[s] for s in by}
        replay = {s: sum(r[0] for r in v) / sum(r[1] for r in v) for s, v in by.items()}
        own_b = {}
        for s, v in by.items():
            cs, ns, xs = (np.array(col, dtype=float) for col in zip(*v))
            own_b[s] = float(np.linalg.lstsq(np.column_stack([ns, xs]), cs, rcond=None)[0][1])
        print(f"{run}: one price a = {a:.1f} us a fill, b = {b:.0f} us a fill inside a string value; each schema's "
              f"own b: " + ", ".join(f"{s} {own_b[s]:.0f}" for s in by) + "; share inside a string value "
              + ", ".join(f"{s} {share[s]:.3f}" for s in by) + f"; nested/flat replayed {replay['nested'] / replay['flat']:.3f}, "
              f"one price {est['nested'] / est['flat']:.3f}")
        f = {s: (est[s] / replay[s]) / (est["flat"] / replay["flat"]) for s in by}
        print("\n".join(ratio_lines(run, prof, f, ("model, as calibrated", "model, one string-value price"))) + "\n")


if __name__ == "__main__":
    main()
