"""How fast the engine ran on each measured server, against what its own bench said: for every
server with xgrammar max-num-seqs 256 schema-on sweeps (sessions A, E, H, I, J, K, L), the CPU speed
at which the median signed ITL error of the profile's model over its points is zero, found by
fixed-point steps (the model's ITL there is close to 1/speed), over the speed its bench gave (1.0
where a session measured none: sessions E and G measured the profile host's own bench).
Not a prediction: a description of the spread between servers of one host type, which
`predict` shows as the band around each point (profile.engine_speeds).
usage: python validation/h200-vllm-0.25.1/l/engine_speeds.py PROFILE OUT.json"""
import json
import statistics
import sys

from maskcost.calibrate.profile import load_profile
from maskcost.model.config import EngineConfig
from maskcost.validate.report import compare
from maskcost.validate.sweep import read_summaries

V = "validation/h200-vllm-0.25.1"
BENCH = {"I": float(open(f"{V}/i/speed.txt").read()), "J": 0.8768, "K": float(open(f"{V}/k/speed.txt").read()),
         "L": 0.94}  # J: j/bench-start.txt; L: the meter's median over its first minute (l/README.md)
SERVERS = {"A": ([f"{V}/a/on.jsonl"], 16), "E": ([f"{V}/e/h5-on-short.jsonl", f"{V}/e/h3-on-shared1000.jsonl"], 16),
           "H": ([f"{V}/h/h-on-short.jsonl"], 16), "I": ([f"{V}/i/i1-calib.jsonl", f"{V}/i/i2-on-short.jsonl"], 16),
           "J": ([f"{V}/j/j1-calib.jsonl", f"{V}/j/j2-on-short.jsonl"], 16),
           "K": ([f"{V}/k/k1-calib.jsonl", f"{V}/k/k2-held.jsonl"], 14),
           "L": ([f"{V}/l/l1-calib.jsonl", f"{V}/l/l2-held.jsonl"], 14)}


def median_error(profile, cfg, measured) -> float:
    rows = compare(profile, cfg, measured)
    return statistics.median(r["metrics"]["ITL ms"]["error_pct"] for r in rows
                             if r["arm"] == "on" and r["metrics"]["ITL ms"]["error_pct"] is not None)


def main() -> None:
    profile = load_profile(sys.argv[1])
    out = []
    for name, (sweeps, cores) in SERVERS.items():
        measured = [s for p in sweeps for s in read_summaries(p)]
        bench = BENCH.get(name, 1.0)
        speed, steps = bench, []
        for _ in range(4):
            err = median_error(profile, EngineConfig(max_num_seqs=256, cpu_count=16, usable_cores=cores,
                                                     cpu_speed=speed), measured)
            steps.append((round(speed, 4), round(err, 2)))
            if abs(err) < 0.5:
                break
            speed *= 1.0 + err / 100.0  # the model's ITL ~ 1/speed: this speed zeroes the median error
        out.append({"name": name, "bench_speed": bench, "engine_speed": speed, "ratio": speed / bench,
                    "steps": steps, "sweeps": sweeps})
        print(f"{name}: bench {bench:.3f}, engine {speed:.3f}, ratio {speed / bench:.3f}  {steps}", flush=True)
    json.dump({"profile": profile.name, "script": sys.argv[0], "servers": out}, open(sys.argv[2], "w"), indent=1)


if __name__ == "__main__":
    main()
