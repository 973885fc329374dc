"""Post hoc on run 7 (docs/validation.md finding 30): does the replay call xgrammar as vLLM 0.25.1 does? Run 7's
recorded xgrammar outputs (30 a schema, EOS included), flat and nested, replayed three ways, shuffled, three
repeats: as maskcost replays (its bundled vocabulary's TokenizerInfo: Llama-3's 256 special tokens marked
special), with vLLM's TokenizerInfo (from_huggingface on the tokenizer folder: none marked), and vLLM's calls in
full (that, GrammarMatcher(max_rollback_tokens=0), is_terminated after each accept: backend_xgrammar.py:61-64,
82-84, 120-123, 152-171 of the 0.25.1 wheel). Mean and median us a fill; the steps whose masks differ; where the
fill time goes.
  python validation/h200-vllm-0.25.1/shape/posthoc/xgrammar_calls.py TOKENIZER_DIR   (repository root; the
  Llama-3-8B tokenizer folder the device stages as /tmp/llama3-8b) -> stdout (xgrammar_calls.txt)"""
import sys
import json
import random
import statistics
import time
import warnings
from pathlib import Path
warnings.filterwarnings("ignore")
import xgrammar as xgr
from transformers import AutoTokenizer
from maskcost.profile import load_profile
from maskcost.calibrate.tokenizer import profile_vocab
from maskcost.calibrate.run import recorded_outputs
S = Path("validation/h200-vllm-0.25.1/shape")
p = load_profile(S / "run7/xg/host.json.gz")
vocab = profile_vocab(p.tokenizer, p.vocab_size, p.tokenizer_sha256)
outs = recorded_outputs(S / "run7/xg/host.outputs.raw.jsonl.gz", vocab)
infos = {"maskcost": vocab.xgrammar_info,
         "vllm": xgr.TokenizerInfo.from_huggingface(AutoTokenizer.from_pretrained(sys.argv[1]), vocab_size=128256)}
N = 30
streams = {sid: [list(t) + [vocab.eos_id] for t in outs[sid][:N]] for sid in ("flat", "nested")}
for sid in streams: print(sid, len(outs[sid]), "outputs; using", len(streams[sid]), "mean len", statistics.fmean(map(len, streams[sid])))
comp = {}
for n, info in infos.items():
    c = xgr.GrammarCompiler(info, max_threads=8, cache_enabled=True, cache_limit_bytes=512 << 20)
    for sid in streams:
        comp[n, sid] = c.compile_json_schema(json.dumps(json.loads((S / "schemas" / f"{sid}.json").read_text())), any_whitespace=False)
bm = xgr.allocate_token_bitmask(1, 128256)
def replay(ctx, toks, mk, vllm_accept):
    m = mk(ctx); f = []
    for t in toks:
        t0 = time.perf_counter_ns(); m.fill_next_token_bitmask(bm, 0); f.append((time.perf_counter_ns() - t0) / 1e3)
        ok = m.accept_token(t)
        if vllm_accept: m.is_terminated()
        if not ok: return f, False
    return f, True
variants = {
  "maskcost": ("maskcost", lambda c: xgr.GrammarMatcher(c), False),
  "vllm-tokinfo": ("vllm", lambda c: xgr.GrammarMatcher(c), False),
  "vllm-full": ("vllm", lambda c: xgr.GrammarMatcher(c, max_rollback_tokens=0), True),
}
res = {k: {s: [] for s in streams} for k in variants}
rej = {k: 0 for k in variants}
for rep in range(3):
    order = [(k, s) for k in variants for s in streams]; random.Random(rep).shuffle(order)
    for k, sid in order:
        ti, mk, va = variants[k]
        for toks in streams[sid]:
            f, ok = replay(comp[ti, sid], toks, mk, va)
            res[k][sid].extend(f); rej[k] += (not ok)
for k in variants:
    fl, ne = statistics.fmean(res[k]["flat"]), statistics.fmean(res[k]["nested"])
    mf, mn = statistics.median(res[k]["flat"]), statistics.median(res[k]["nested"])
    print(f"{k:13s} flat {fl:6.1f} us/fill  nested {ne:6.1f}  ratio {ne/fl:.3f} | medians {mf:.1f} {mn:.1f} ratio {mn/mf:.3f} | rejected {rej[k]}")
# mask equality check
diffs = {}
for sid in streams:
    nd = 0; tot = 0
    for toks in streams[sid][:10]:
        ma, mb = xgr.GrammarMatcher(comp["maskcost", sid]), xgr.GrammarMatcher(comp["vllm", sid])
        ba, bb = xgr.allocate_token_bitmask(1, 128256), xgr.allocate_token_bitmask(1, 128256)
        for t in toks:
            ma.fill_next_token_bitmask(ba, 0); mb.fill_next_token_bitmask(bb, 0)
            tot += 1
            if not (ba == bb).all():
                nd += 1
            if not (ma.accept_token(t) and mb.accept_token(t)): break
    print(sid, "steps with differing masks", nd, "/", tot)
print("--- distribution (maskcost variant)")
for sid in streams:
    f = res["maskcost"][sid]; tot = sum(f)
    big = [x for x in f if x > 100]
    print(sid, "fills", len(f), ">100us:", len(big), f"share of time {sum(big)/tot:.3f}", "big mean", statistics.fmean(big) if big else 0)
    # per position in first stream
    toks = streams[sid][0]; fl, _ = replay(comp["maskcost", sid], toks, lambda c: xgr.GrammarMatcher(c), False)
    print(" ", [(i, vocab.tokens[toks[i-1]] if i else b'^', round(x)) for i, x in enumerate(fl) if x > 20])
