"""Post hoc on run 8 (README.md "Run 8", docs/validation.md finding 37): its calibrate traced 96 of the speed
sweep's outputs a schema, each replayed once on the device's CPU, and priced xgrammar's nested a token 1.09x flat,
where runs 4-7's devices priced it 0.72-0.93x and the engine ran nested at 0.81-1.13x flat's ITL. Is it the
outputs or the CPU that replayed them?

On this CPU, xgrammar, the run's profile vocabulary, one fresh matcher an output (more_outputs.Costs: fill then
accept each token, EOS included), the very outputs the device traced (their token counts checked against the
traces), beside the device's replay of them (the profile's traces, fill + accept a token):
  1. run 8: the 96 a schema (server_calibration.spread over the speed sweep), every speed output and every
     held-out output; each schema's mean cost a token and nested/flat;
  2. output by output, the device's cost over this CPU's, its median in each quarter of the replay (drift) and
     over all, flat, nested and deep; the same for run 7's 32 a schema (its outputs point, 3 replays each);
  3. the model's nested/flat with run 8's traces scaled to this CPU's relative cost of the 96 (each schema's
     factor: this CPU's cost over the device's, divided by flat's, so flat stays as calibrated).
  python validation/h200-vllm-0.25.1/shape/posthoc/run8_replay.py   (repository root) -> stdout (run8_replay.txt)"""
import gzip
import json
import statistics
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

SCHEMAS = ("flat", "nested", "deep")


def device_traces(run: str) -> dict[str, list[float]]:
    """Each schema's traces as the device replayed them: (cost us, tokens) an output, in replay order."""
    raw = json.loads(gzip.open(check.HERE / run / "xg" / "host.json.gz").read())["backends"]["xgrammar"]["traces"]
    return {s: [(sum(t["fill_us"]) + sum(t["accept_us"]), len(t["fill_us"])) for t in raw if t["schema_id"] == s]
            for s in SCHEMAS}


def per_output(run: str, dev: dict, here: dict) -> None:
    """Output by output, the device's cost over this CPU's (outputs of under 2 ms here left out: timer noise)."""
    for s in SCHEMAS:
        pairs = [(d, h) for d, h in zip(dev[s], here[s]) if d[1] == h[1]]
        r = [d[0] / h[0] for d, h in pairs if h[0] > 2000]
        q = max(1, len(r) // 4)
        print(f"{run} {s:6}: device / this CPU, output by output ({len(pairs)} of {len(dev[s])} token counts match, "
              f"{len(r)} over 2 ms here): median {statistics.median(r):.2f}, by quarter of the replay "
              + ", ".join(f"{statistics.median(r[k * q:(k + 1) * q]):.2f}" for k in range(4))
              + f"; over the sums {mean(dev[s]) / mean(here[s]):.2f}")
    print(f"{run} nested/flat: the device {mean(dev['nested']) / mean(dev['flat']):.3f}, this CPU "
          f"{mean(here['nested']) / mean(here['flat']):.3f} (the same outputs)\n")


def main() -> None:
    d = check.HERE / "run8" / "xg"
    p = load_profile(d / "host.json.gz")
    vocab = profile_vocab(p.tokenizer, p.vocab_size, p.tokenizer_sha256)
    cost = Costs(make_backend("xgrammar", vocab), vocab)
    speed = recorded_outputs(d / "host.speed-sweep.raw.jsonl.gz", vocab)
    sets = {s: {"96 speed": [cost(s, o) for o in spread(speed[s], 96)],
                "all speed": [cost(s, o) for o in speed[s]],
                "held-out": [cost(s, o) for o in recorded_outputs(d / f"{s}.raw.jsonl.gz", vocab)[s]]}
            for s in SCHEMAS[:2]}
    dev = device_traces("run8")
    for s, got in sets.items():
        print(f"run8 {s:6}: us a token, this CPU, over " + ", ".join(f"{k} ({len(v)}) {mean(v):.0f}"
                                                                    for k, v in got.items())
              + f"; the device's replay of the 96: {mean(dev[s]):.0f}")
    print("run8 nested/flat: this CPU " + ", ".join(f"{k} {mean(sets['nested'][k]) / mean(sets['flat'][k]):.3f}"
                                                   for k in sets["flat"]) + "\n")
    per_output("run8", dev, {s: [cost(s, o) for o in spread(speed[s], 96)] for s in SCHEMAS})
    own = recorded_outputs(check.HERE / "run7" / "xg" / "host.outputs.raw.jsonl.gz", vocab)
    per_output("run7", device_traces("run7"), {s: [cost(s, o) for o in own[s][:32]] for s in SCHEMAS})
    f = {s: mean(sets[s]["96 speed"]) / mean(dev[s]) for s in SCHEMAS[:2]}
    print("\n".join(ratio_lines("run8", d / "host.json.gz", {s: f[s] / f["flat"] for s in f},
                                ("model, as calibrated (the device's replay)",
                                 "model, this CPU's relative cost of the 96"))))
    print(host_line())


if __name__ == "__main__":
    main()
