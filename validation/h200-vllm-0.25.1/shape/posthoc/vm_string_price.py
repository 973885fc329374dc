"""Post hoc on runs 7-8 (docs/validation.md finding 38): on a quiet CPU, do two schemas' fills inside a string value
cost the same? The outputs runs 7 and 8 traced on their devices (run 7: its outputs point's 32 a schema; run 8: the
96 of its speed sweep calibrate took), replayed on this CPU (xgrammar, one fresh matcher an output, fill and accept
each token: more_outputs.Costs); each schema's own fit cost = a fills + b fills inside a string value, and b over
flat's. joint_price.txt has the same fit on the devices' own replays.
  python validation/h200-vllm-0.25.1/shape/posthoc/vm_string_price.py   (repository root) -> stdout (vm_string_price.txt)"""
import sys
from pathlib import Path

import numpy as np

from maskcost.calibrate.backends import make_backend
from maskcost.calibrate.fill import in_string_value
from maskcost.calibrate.run import recorded_outputs
from maskcost.calibrate.tokenizer import profile_vocab
from maskcost.profile import load_profile
from maskcost.validate.server_calibration import spread

sys.path.insert(0, str(Path(__file__).resolve().parent))
from more_outputs import Costs, check, host_line  # noqa: E402

RUNS = (("run8", "host.speed-sweep.raw.jsonl.gz", lambda v: spread(v, 96)),
        ("run7", "host.outputs.raw.jsonl.gz", lambda v: v[:32]))

if __name__ == "__main__":
    for run, fname, pick in RUNS:
        d = check.HERE / run / "xg"
        p = load_profile(d / "host.json.gz")
        vocab = profile_vocab(p.tokenizer, p.vocab_size, p.tokenizer_sha256)
        cost = Costs(make_backend("xgrammar", vocab), vocab)
        outs = recorded_outputs(d / fname, vocab)
        b = {}
        for s in ("flat", "nested", "deep"):
            rows = [(*cost(s, o), sum(in_string_value([vocab.tokens[t] for t in o if t != vocab.eos_id])))
                    for o in pick(outs[s])]
            c, n, x = (np.array(col, float) for col in zip(*rows))
            (a, b[s]), *_ = np.linalg.lstsq(np.column_stack([n, x]), c, rcond=None)
            print(f"{run} {s:6}: this CPU's own fit a {a:.1f} us a fill, b {b[s]:.0f} us a fill inside a string "
                  f"value; share inside {x.sum() / n.sum():.3f} ({len(rows)} outputs)")
        print(f"{run}: b over flat's: nested {b['nested'] / b['flat']:.2f}, deep {b['deep'] / b['flat']:.2f}\n")
    print(host_line())
