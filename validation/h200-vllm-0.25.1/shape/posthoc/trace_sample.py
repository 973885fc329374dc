"""Post hoc (finding 67): for each shape run with 96 traced outputs a schema (runs 8-16), the profile's 96 (calibrate's
choice) against all the valid outputs its speed points wrote of each schema, replayed here in turns, once each. The
profile's mean cost a token of each schema is then read against the mean of all: how far calibrate's sample moved
the model's deep/flat and nested/flat. Usage (from the repository root): python PATH/trace_sample.py validation/h200-vllm-0.25.1/shape/run{8..16}"""
import statistics, sys
from dataclasses import replace
from pathlib import Path
from maskcost.calibrate.backends import make_backend
from maskcost.calibrate.fill import trace_interleaved
from maskcost.calibrate.run import recorded_outputs
from maskcost.calibrate.schemas import load_schema_file
from maskcost.calibrate.tokenizer import load_vocab
from maskcost.validate.server_outputs import spread

SCH = Path("validation/h200-vllm-0.25.1/shape/schemas")
vocab = load_vocab("llama3"); be = make_backend("xgrammar", vocab)
for run in map(Path, sys.argv[1:]):
    speed = recorded_outputs(run / "xg/host.speed-sweep.raw.jsonl.gz", vocab)
    jobs = []
    for s in ("flat", "nested", "deep"):
        e = load_schema_file(SCH / f"{s}.json")
        jobs += [(replace(e, schema_id=f"{s}:profile96"), spread(speed[s], 96)), (replace(e, schema_id=f"{s}:all"), speed[s])]
    res = trace_interleaved(be, jobs, repeats=1, max_traces=1000, sampled=0, seed=0, on_done=lambda *a: None)
    mean = {sid: statistics.mean(v for t in r.traces for v in t.fill_us) for sid, r in res.items()}
    n = {sid: len(r.traces) for sid, r in res.items()}
    print(run.name, " ".join(f"{s}: 96 {mean[s + ':profile96']:.0f} all({n[s + ':all']}) {mean[s + ':all']:.0f} x{mean[s + ':profile96'] / mean[s + ':all']:.3f};"
                             for s in ("flat", "nested", "deep")),
          f"deep/flat 96 {mean['deep:profile96'] / mean['flat:profile96']:.3f} all {mean['deep:all'] / mean['flat:all']:.3f};",
          f"nested/flat 96 {mean['nested:profile96'] / mean['flat:profile96']:.3f} all {mean['nested:all'] / mean['flat:all']:.3f}", flush=True)
