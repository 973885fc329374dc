"""Post hoc on run 6 (docs/validation.md finding 24): is the servers' nested/flat ratio (0.81-0.96) above the
replay's (0.67-0.78) because the engine fills many matchers a step, not one at a time? xgrammar, run 6's recorded
outputs, on this CPU: each output replayed alone on a fresh matcher (fill, accept), against 74 requests (each
output twice) at staggered positions filled in turn into one 74-row bitmask a step, as vLLM's engine thread fills
under 128 rows, then each row's token accepted; 120 steps. Mean us a fill.
  python validation/h200-vllm-0.25.1/shape/posthoc/interleave.py   (repository root) -> stdout (interleave.txt)"""
import json
import random
import statistics
import time
from pathlib import Path
from maskcost.profile import load_profile
from maskcost.calibrate.tokenizer import profile_vocab
from maskcost.calibrate.run import recorded_outputs
from maskcost.calibrate.backends import make_backend
S = Path("validation/h200-vllm-0.25.1/shape")
p = load_profile(S / "run6/xg/host.json.gz")
vocab = profile_vocab(p.tokenizer, p.vocab_size, p.tokenizer_sha256)
outs = recorded_outputs(S / "run6/xg/host.outputs.raw.jsonl.gz", vocab)
be = make_backend("xgrammar", vocab)
random.seed(1)
ROWS = 74
res = {}
for sid in ("flat", "nested"):
    compiled, _ = be.compile(json.loads((S / "schemas" / f"{sid}.json").read_text()), True)
    streams = [list(t) + [vocab.eos_id] for t in outs[sid]]
    # alone: each output replayed on a fresh matcher, fill then accept each token
    bm = be.bitmask(1)
    alone = []
    for rep in range(2):
        for toks in streams:
            m = be.matcher(compiled)
            for t in toks:
                t0 = time.perf_counter_ns(); be.fill(m, bm, 0); alone.append((time.perf_counter_ns() - t0) / 1e3)
                if not be.accept(m, t): break
    # interleaved: ROWS requests, each one of the outputs, started at staggered offsets; each step fills every
    # live row in turn (one bitmask of ROWS rows), then accepts each row's token
    bmr = be.bitmask(ROWS)
    inter = []
    live = []
    for r in range(ROWS):
        toks = streams[r % len(streams)]
        m = be.matcher(compiled); k = random.randrange(len(toks) // 2)
        all(be.accept(m, t) for t in toks[:k])
        live.append([m, toks, k])
    for step in range(120):
        for r, (m, toks, k) in enumerate(live):
            if k >= len(toks):
                m = be.matcher(compiled); live[r] = [m, toks, 0]; k = 0
            t0 = time.perf_counter_ns(); be.fill(m, bmr, r); inter.append((time.perf_counter_ns() - t0) / 1e3)
        for r, rec in enumerate(live):
            m, toks, k = rec
            if not be.accept(m, toks[k]):
                rec[2] = len(toks)
            else:
                rec[2] = k + 1
    res[sid] = (statistics.fmean(alone), statistics.fmean(inter))
    print(f"{sid}: alone {res[sid][0]:.0f} us a fill, interleaved over {ROWS} rows {res[sid][1]:.0f} us ({res[sid][1]/res[sid][0]:.2f}x)", flush=True)
print(f"nested/flat: alone {res['nested'][0]/res['flat'][0]:.2f}, interleaved {res['nested'][1]/res['flat'][1]:.2f}")
