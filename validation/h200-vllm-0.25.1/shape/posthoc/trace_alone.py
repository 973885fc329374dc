"""Post hoc (finding 67): a shape run's xgrammar traces, the profile's 96 outputs a schema (calibrate's choice: its
speed points' outputs spread over them) against N more of the same server's outputs of each schema alone, all
replayed here in turns (one output of each set a turn, calibrate.fill.trace_interleaved), one fresh matcher an
output, once, as calibrate replays them. Usage (from the repository root): python PATH/trace_alone.py validation/h200-vllm-0.25.1/shape/run16 600 2"""
import random, statistics, sys
from dataclasses import replace
from pathlib import Path
from maskcost.calibrate.backends import make_backend
from maskcost.calibrate.fill import trace_interleaved
from maskcost.calibrate.run import recorded_outputs
from maskcost.calibrate.schemas import load_schema_file
from maskcost.calibrate.tokenizer import load_vocab
from maskcost.validate.server_outputs import spread

RUN, N = Path(sys.argv[1]), int(sys.argv[2]); ROUNDS = int(sys.argv[3]) if len(sys.argv) > 3 else 2
SCH = Path("validation/h200-vllm-0.25.1/shape/schemas")
vocab = load_vocab("llama3"); be = make_backend("xgrammar", vocab)
speed = recorded_outputs(RUN / "xg/host.speed-sweep.raw.jsonl.gz", vocab)
jobs = []
for s in ("flat", "nested", "deep"):
    e = load_schema_file(SCH / f"{s}.json")
    alone = recorded_outputs(RUN / f"xg/{s}.raw.jsonl.gz", vocab)[s]
    random.Random(0).shuffle(alone)
    jobs += [(replace(e, schema_id=f"{s}:profile96"), spread(speed[s], 96)), (replace(e, schema_id=f"{s}:alone"), alone[:N])]
for rnd in range(ROUNDS):
    res = trace_interleaved(be, jobs, repeats=1, max_traces=max(N, 96), sampled=0, seed=0, on_done=lambda *a: None)
    mean = {}
    for sid, r in sorted(res.items()):
        per = [statistics.mean(t.fill_us) for t in r.traces]
        mean[sid] = statistics.mean(v for t in r.traces for v in t.fill_us)
        print(f"round {rnd} {sid:18s} outputs {len(r.traces):4d} tokens/output {statistics.mean(len(t.fill_us) for t in r.traces):5.1f} "
              f"mean fill {mean[sid]:7.1f} us/token (+-{100 * statistics.stdev(per) / statistics.mean(per) / len(per) ** .5:.1f}%)", flush=True)
    for which in ("profile96", "alone"):
        print(f"round {rnd} {which}: deep/flat {mean['deep:' + which] / mean['flat:' + which]:.3f} "
              f"nested/flat {mean['nested:' + which] / mean['flat:' + which]:.3f}", flush=True)
