"""Post hoc on run 8 (README.md "Run 8"): its calibrate traced 96 of the speed sweep's outputs a schema, each
replayed once on the device's CPU, and priced xgrammar's nested a token 1.07x flat, where runs 4-7's replays
(on their own devices) said 0.66-0.76 and the engine ran nested at 0.83-0.99x flat's ITL. Is it the outputs or
the CPU that replayed them?

On this CPU, xgrammar, run 8's profile vocabulary, one fresh matcher an output (more_outputs.Costs), the mean
cost a token of each schema over the same 96 speed outputs calibrate traced (server_calibration.spread), every
speed output, and every held-out output; beside it the device's replay (the profile's traces, fill + accept a
token); then the model's nested/flat with run 8's traces scaled to this CPU's relative cost of the 96 (each
schema's factor: this CPU's cost over the device's, divided by flat's, so flat stays as calibrated).
  python validation/h200-vllm-0.25.1/shape/posthoc/run8_replay.py   (repository root) -> stdout (run8_replay.txt)"""
import gzip
import json
import sys
from pathlib import Path

from maskcost.calibrate.backends import make_backend
from maskcost.calibrate.run import recorded_outputs
from maskcost.calibrate.tokenizer import profile_vocab
from maskcost.profile import load_profile
from maskcost.validate.server_calibration import spread

sys.path.insert(0, str(Path(__file__).resolve().parent))
from more_outputs import Costs, check, host_line, mean  # noqa: E402
from output_sample_model import ratio_lines  # noqa: E402

SCHEMAS = ("flat", "nested")


def device_cost() -> dict[str, float]:
    """The mean cost a token (fill + accept, us) of each schema's traces as the device replayed them."""
    raw = json.loads(gzip.open(check.HERE / "run8" / "xg" / "host.json.gz").read())["backends"]["xgrammar"]["traces"]
    out = {}
    for s in SCHEMAS:
        ts = [t for t in raw if t["schema_id"] == s]
        out[s] = sum(sum(t["fill_us"]) + sum(t["accept_us"]) for t in ts) / sum(len(t["fill_us"]) for t in ts)
    return out


def main() -> None:
    d = check.HERE / "run8" / "xg"
    p = load_profile(d / "host.json.gz")
    vocab = profile_vocab(p.tokenizer, p.vocab_size, p.tokenizer_sha256)
    cost = Costs(make_backend("xgrammar", vocab), vocab)
    speed = recorded_outputs(d / "host.speed-sweep.raw.jsonl.gz", vocab)
    sets = {s: {"96 speed": [cost(s, o) for o in spread(speed[s], 96)],
                "all speed": [cost(s, o) for o in speed[s]],
                "held-out": [cost(s, o) for o in recorded_outputs(d / f"{s}.raw.jsonl.gz", vocab)[s]]}
            for s in SCHEMAS}
    dev = device_cost()
    for s, got in sets.items():
        print(f"run8 {s:6}: us a token, this CPU, over " + ", ".join(f"{k} ({len(v)}) {mean(v):.0f}"
                                                                    for k, v in got.items())
              + f"; the device's replay of the 96: {dev[s]:.0f}")
    print("run8 nested/flat: this CPU " + ", ".join(f"{k} {mean(sets['nested'][k]) / mean(sets['flat'][k]):.3f}"
                                                   for k in sets["flat"]) + f"; the device's replay of the 96 "
          f"{dev['nested'] / dev['flat']:.3f}")
    here = {s: mean(sets[s]["96 speed"]) / dev[s] for s in SCHEMAS}
    f = {s: here[s] / here["flat"] for s in SCHEMAS}
    print("\n".join(ratio_lines("run8", d / "host.json.gz", f, ("model, as calibrated (the device's replay)",
                                                                 "model, this CPU's relative cost of the 96"))))
    print(host_line())


if __name__ == "__main__":
    main()
