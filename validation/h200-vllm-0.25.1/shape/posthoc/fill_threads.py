"""Issue 39: is a fill (and an accept) single-threaded? The process's CPU time over the wall time of a loop of
fill + accept on one matcher, one Python thread (as vLLM's engine thread calls them), the shape check's flat
schema, the bundled llama3 vocabulary. The engine core used 2-3 CPUs beyond the model's parts with xgrammar
and none with llguidance (engine_cpu-run*.txt); were the fill multi-threaded, this would read over 1.
  python validation/h200-vllm-0.25.1/shape/posthoc/fill_threads.py  (repository root) -> fill_threads.txt"""
import json, os, time, threading
from maskcost.calibrate.tokenizer import load_vocab
from maskcost.calibrate.backends import make_backend
schema = json.load(open('validation/h200-vllm-0.25.1/shape/schemas/flat.json'))
vocab = load_vocab("llama3")
for name in ("xgrammar", "guidance"):
    be = make_backend(name, vocab)
    compiled, _ = be.compile(schema, cache=True)
    text = '{"name": "Ann", "age": 40, "active": false, "city": "Oslo"}'
    toks = vocab.encode(text)
    bm = be.bitmask(1)
    for rep in range(2):
        n = 0
        t0, c0 = time.perf_counter(), os.times()
        while time.perf_counter() - t0 < 3.0:
            m = be.matcher(compiled)
            for t in toks:
                be.fill(m, bm, 0)
                if not be.accept(m, t):
                    break
                n += 1
        wall = time.perf_counter() - t0
        c1 = os.times()
        cpu = (c1.user - c0.user) + (c1.system - c0.system)
        print(f"{name} rep{rep}: {n} fills in {wall:.2f} s wall, process CPU {cpu:.2f} s: {cpu / wall:.2f} CPUs; threads now {threading.active_count()} py, {len(os.listdir('/proc/self/task'))} os")
