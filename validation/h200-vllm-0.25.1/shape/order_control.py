"""Run 9's control, on the device after calibrate (run.sh run9): the very outputs calibrate traced (96 a schema of
its speed sweep, server_outputs.spread), replayed on this host in two orders, alternately: each schema in a
block of its own (flat, then nested, then deep: how calibrate traced before finding 38) and in turns (one output of
each schema a turn: how it traces now), twice each, blocks first. One fresh matcher an output, fill then accept
each token (EOS included), each output once. Writes JSON: for each pass, each schema's mean cost a token (us) and
nested/flat; the host's CPU.
  python3 order_control.py RESULTS_DIR [TOKENIZER_DIR]   (RESULTS_DIR/xg: calibrate's profile and its speed sweep's
      raw records; TOKENIZER_DIR: the folder calibrate's --tokenizer named, where the profile names the server's
      model (run 9 on the device: its profile says llama3-8b, the folder /tmp/llama3-8b, and quicktok, which would
      find the bundled vocabulary, is not installed there: the control failed and did not run; run 10's first try asked for the raw records
      gzipped, as committed, where the device has them as the sweep wrote them: it failed again))"""
import json
import sys
import time
from pathlib import Path

from maskcost.calibrate.backends import make_backend
from maskcost.calibrate.run import recorded_outputs
from maskcost.calibrate.tokenizer import profile_vocab
from maskcost.profile import load_profile
from maskcost.validate.server_outputs import spread

SCHEMAS = ("flat", "nested", "deep")


def main(results: Path, tokenizer: str | None = None) -> dict:
    d = results / "xg"
    p = load_profile(d / "host.json.gz")
    vocab = profile_vocab(p.tokenizer, p.vocab_size, p.tokenizer_sha256, tokenizer)
    be = make_backend("xgrammar", vocab)
    raw = d / "host.speed-sweep.raw.jsonl"  # as the sweep wrote it on the device; gzipped once committed
    outs = recorded_outputs(raw if raw.exists() else raw.with_name(raw.name + ".gz"), vocab)
    here = Path(__file__).resolve().parent / "schemas"
    compiled = {s: be.compile(json.loads((here / f"{s}.json").read_text()), True)[0] for s in SCHEMAS}
    picked = {s: [list(o) + [vocab.eos_id] for o in spread(outs[s], 96)] for s in SCHEMAS}
    bm, clock = be.bitmask(1), time.perf_counter_ns

    def replay(s: str, toks: list[int]) -> float:
        m, total = be.matcher(compiled[s]), 0
        for t in toks:
            t0 = clock()
            be.fill(m, bm, 0)
            ok = be.accept(m, t)
            total += clock() - t0
            if not ok:
                break
        return total / 1e3

    orders = {"blocks": [(s, i) for s in SCHEMAS for i in range(len(picked[s]))],
              "turns": [(s, i) for i in range(max(map(len, picked.values()))) for s in SCHEMAS if i < len(picked[s])]}
    passes = []
    for name in ("blocks", "turns", "blocks", "turns"):
        cost = {s: [0.0, 0] for s in SCHEMAS}
        t0 = time.monotonic()
        for s, i in orders[name]:
            cost[s][0] += replay(s, picked[s][i])
            cost[s][1] += len(picked[s][i])
        per = {s: c / n for s, (c, n) in cost.items()}
        passes.append({"order": name, "us_a_token": per, "nested_over_flat": per["nested"] / per["flat"],
                       "deep_over_flat": per["deep"] / per["flat"], "wall_s": time.monotonic() - t0})
        print(json.dumps(passes[-1]), file=sys.stderr)
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), "?")
    return {"outputs": {s: len(v) for s, v in picked.items()}, "cpu": cpu, "passes": passes}


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else None), indent=1))
