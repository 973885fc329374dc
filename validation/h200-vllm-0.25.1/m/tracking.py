"""A backtest of a rule for the next session (post hoc, not a prediction): predict each point at the
speed the engine's own fill ran at on the point before it on the same server (inengine.fill_speed on
the probe's records), instead of the idle bench's speed. Every schema-on point of the servers that
ran with the probe (sessions I, J, K, L, M), in the order they ran, each summary (point x pass) on its
own; the model run now with the given profile. A server's first point has no point before it and
is not counted.
usage: python validation/h200-vllm-0.25.1/m/tracking.py PROFILE > validation/h200-vllm-0.25.1/m/tracking.md"""
import statistics
import sys
from dataclasses import replace

from maskcost.calibrate.profile import load_profile
from maskcost.model.config import EngineConfig
from maskcost.validate.inengine import attach, fill_speed, read_probe
from maskcost.validate.report import compare
from maskcost.validate.sweep import read_summaries

V = "validation/h200-vllm-0.25.1"


def bench(path: str) -> float:
    return float(open(path).read().split("speed")[-1])


SERVERS = (  # name, sweeps (in the order they ran), probe folder, idle bench speed, backend, usable cores
    ("I", [f"{V}/i/i1-calib.jsonl", f"{V}/i/i2-on-short.jsonl"], f"{V}/i/probe", bench(f"{V}/i/speed.txt"), "xgrammar", 16),
    ("J", [f"{V}/j/j1-calib.jsonl", f"{V}/j/j2-on-short.jsonl"], f"{V}/j/probe", bench(f"{V}/j/bench-start.txt"),
     "xgrammar", 16),
    ("K", [f"{V}/k/k1-calib.jsonl", f"{V}/k/k2-held.jsonl"], f"{V}/k/probe", bench(f"{V}/k/speed.txt"), "xgrammar", 14),
    ("L", [f"{V}/l/l1-calib.jsonl", f"{V}/l/l2-held.jsonl"], f"{V}/l/probe", 0.94, "xgrammar", 14),
    ("M1", [f"{V}/m/m1-xgrammar.jsonl"], f"{V}/m/probe", bench(f"{V}/m/bench-start.txt"), "xgrammar", 14),
    ("M1-guidance", [f"{V}/m/m3-guidance.jsonl"], f"{V}/m/probe", bench(f"{V}/m/bench-start.txt"), "guidance", 14),
    ("M1-4cores", [f"{V}/m/m4-taskset4.jsonl"], f"{V}/m/probe", bench(f"{V}/m/bench-start.txt"), "xgrammar", 4),
    ("M1b", [f"{V}/m/m5-xgrammar-2.jsonl"], f"{V}/m/probe", bench(f"{V}/m/bench-start.txt"), "xgrammar", 14),
    ("M2", [f"{V}/m/m7-xgrammar-3.jsonl"], f"{V}/m/probe", bench(f"{V}/m/bench-fresh.txt"), "xgrammar", 14),
    ("M2-guidance", [f"{V}/m/m8-guidance-2.jsonl"], f"{V}/m/probe", bench(f"{V}/m/bench-fresh.txt"), "guidance", 14),
)


def server_runs(servers: tuple = SERVERS):
    """Each server's name, idle bench speed, engine config, probe records and schema-on point
    summaries in the order they ran."""
    probes: dict[str, dict] = {}
    for name, sweeps, probe_dir, speed, backend, cores in servers:
        probe = probes.setdefault(probe_dir, read_probe(probe_dir))
        cfg = EngineConfig(backend=backend, max_num_seqs=256, cpu_count=16, usable_cores=cores, cpu_speed=speed)
        runs = sorted((s for f in sweeps for s in read_summaries(f) if s["arm"] == "on"),
                      key=lambda s: s["engine"]["window_start_unix_s"])
        yield name, speed, cfg, probe, runs


def main() -> None:
    profile = load_profile(sys.argv[1])
    print(f"Profile {profile.name}. Signed ITL error per point (each summary alone, in the order it ran): at the "
          "idle bench's speed / at the speed of the engine's fill on the point before.\n")
    print("| server | bench speed | points | median \\|error\\| at the bench speed | at the previous point's "
          "fill speed | per point (conc: bench / previous) |")
    print("|---|---|---|---|---|---|")
    every_b, every_t = [], []
    for name, speed, cfg, probe, runs in server_runs():
        prev, cells, eb, et = None, [], [], []
        for s in runs:
            row = attach(compare(profile, cfg, [s]), probe)[0]
            if prev is not None:
                tracked = compare(profile, replace(cfg, cpu_speed=prev), [s])[0]["metrics"]["ITL ms"]["error_pct"]
                eb.append(row["metrics"]["ITL ms"]["error_pct"])
                et.append(tracked)
                cells.append(f"{s['concurrency']}: {eb[-1]:+.0f} / {tracked:+.0f}")
            prev = fill_speed(row) or prev
        every_b += eb
        every_t += et
        print(f"| {name} | {speed:.3f} | {len(eb)} | {statistics.median(map(abs, eb)):.1f}% | "
              f"{statistics.median(map(abs, et)):.1f}% | {', '.join(cells)} |", flush=True)
    print(f"\nAll {len(every_b)} points: median |ITL error| {statistics.median(map(abs, every_b)):.1f}% at the idle "
          f"bench's speed, {statistics.median(map(abs, every_t)):.1f}% at the previous point's fill speed")


if __name__ == "__main__":
    main()
