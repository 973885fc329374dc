"""Post hoc on runs 4-7 (docs/validation.md finding 34): calibrate --base-url traces the outputs its speed points
already bring (the schemas mixed, at the loads the speed is read at) in place of a point of its own a schema. Would
that have priced xgrammar's nested/flat as well as the outputs' own point did?

On this CPU, xgrammar, each run's own profile vocabulary, one fresh matcher an output (more_outputs.Costs), the
mean cost a token of each schema over:
  - "32 own point": calibrate's 32 traced outputs (its outputs point, each schema alone at 32 clients);
  - "96 speed": 96 outputs of the speed sweep, evenly spaced over its file (what calibrate now takes,
    server_calibration.spread);
  - "all speed": every valid output of the speed sweep (about 500 a schema; what string_value_scaled scales to);
  - "held-out": every output of the held-out sweeps (flat and nested alone, all loads and repeats: the test);
then the model's nested/flat with each run's traces scaled by the 96 speed outputs' cost against the 32's, and by all
the speed sweep's (what calibrate's string-value scaling, finding 33, estimates from the 96 without timing the rest).
  python validation/h200-vllm-0.25.1/shape/posthoc/speed_outputs.py   (repository root) -> stdout (speed_outputs.txt)"""
import sys
from pathlib import Path

from maskcost.calibrate.run import recorded_outputs
from maskcost.validate.server_calibration import spread

sys.path.insert(0, str(Path(__file__).resolve().parent))
from more_outputs import RUNS, host_line, mean, run_outputs  # noqa: E402
from output_sample_model import ratio_lines  # noqa: E402


def run(name: str, vocab_cache: dict) -> None:
    d, cost, cal, speed = run_outputs(name, vocab_cache)
    sets = {s: {"32 own point": [cost(s, o) for o in cal[s][:32]],
                "96 speed": [cost(s, o) for o in spread(speed[s], 96)],
                "all speed": [cost(s, o) for o in speed[s]],
                "held-out": [cost(s, o) for o in recorded_outputs(d / f"{s}.raw.jsonl.gz", cost.vocab)[s]]}
            for s in ("flat", "nested")}
    for s, got in sets.items():
        print(f"{name} {s:6}: us a token over " + ", ".join(f"{k} ({len(v)}) {mean(v):.0f}" for k, v in got.items()))
    print(f"{name} nested/flat: " + ", ".join(f"{k} {mean(sets['nested'][k]) / mean(sets['flat'][k]):.3f}"
                                              for k in sets["flat"]))
    f = {k: {s: mean(sets[s][k]) / mean(sets[s]["32 own point"]) for s in ("flat", "nested")}
         for k in ("96 speed", "all speed")}
    for k in f:
        print("\n".join(ratio_lines(name, d / "host.json.gz", f[k], ("model, as calibrated (32)", f"model, {k}' cost"))
                        [0 if k == "96 speed" else 1:]))
    print(f"{name} factors against the 32's: " + "; ".join(f"{k} flat x{v['flat']:.3f}, nested x{v['nested']:.3f}"
                                                           for k, v in f.items()) + "\n")


if __name__ == "__main__":
    vocabs: dict = {}
    for r in RUNS:
        run(r, vocabs)
    print(host_line())
