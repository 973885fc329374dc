"""Post hoc on run 6 (README.md "Run 6", item 2): its recorded xgrammar outputs (flat, nested; the same outputs
on runs 1-6) replayed three times each on this CPU, one fresh matcher a replay: the timing noise (one output's mean
fill from one replay to the next) against the draw (one output's mean fill against another's).
  python validation/h200-vllm-0.25.1/shape/posthoc/replay_noise.py   (repository root) -> stdout (replay_noise.txt)"""
import json, platform, statistics, os
from pathlib import Path
from maskcost.profile import load_profile
from maskcost.calibrate.tokenizer import profile_vocab
from maskcost.calibrate.run import recorded_outputs
from maskcost.calibrate.backends import make_backend
from maskcost.calibrate.fill import trace_schema
from maskcost.calibrate.schemas import SchemaEntry
S = Path("validation/h200-vllm-0.25.1/shape")
p = load_profile(S / "run6/xg/host.json.gz")
vocab = profile_vocab(p.tokenizer, p.vocab_size, p.tokenizer_sha256)
outs = recorded_outputs(S / "run6/xg/host.outputs.raw.jsonl.gz", vocab)
print(f"{platform.processor() or platform.machine()}, nproc {os.cpu_count()}; outputs a schema:", {k: len(v) for k, v in outs.items()})
be = make_backend("xgrammar", vocab)
res = {}
for sid in ("flat", "nested"):
    schema = json.loads((S / "schemas" / f"{sid}.json").read_text())
    e = SchemaEntry(schema_id=sid, subset="shape", schema=schema, examples=())
    reps = []
    for rep in range(3):
        r = trace_schema(be, e, outs[sid], repeats=1, max_traces=len(outs[sid]))
        reps.append([statistics.fmean(t.fill_us) for t in r.traces])
    n = min(len(x) for x in reps)
    per = [[reps[k][i] for k in range(3)] for i in range(n)]
    timing = statistics.median(statistics.stdev(x) / statistics.fmean(x) for x in per if statistics.fmean(x) > 20)
    means = [statistics.fmean(x) for x in per]
    draw = statistics.stdev(means) / statistics.fmean(means)
    print(f"{sid}: {n} outputs; per-output mean fill {statistics.fmean(means):.0f} us; timing noise a replay (median cv) {100*timing:.1f}%; "
          f"output-to-output cv {100*draw:.0f}%; the mean of {n} outputs: +-{100*draw/n**0.5:.1f}% from the draw")
    res[sid] = means
