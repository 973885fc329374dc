"""Tracking rules backtested over every probed server of sessions I-N (post hoc, not a prediction):
each schema-on point predicted at (a) the engine's fill speed on the point before it (the rule N
pre-registered), (b) the median of the fill speeds of all the server's points before it, (c) the
median of the server's first two points' fill speeds, fixed (one report on a server's openings, as
session O ran it; the second point has only the first); beside the idle bench's speed and, as the
floor the structure allows, the point's own fill speed. The model run
now with the given profile; m/tracking.py's servers (I-M) and N's four. A server's first point is not
counted.
usage: python validation/h200-vllm-0.25.1/n/tracking_rules.py PROFILE > validation/h200-vllm-0.25.1/n/tracking-rules.md"""
import statistics
import sys
from dataclasses import replace
from pathlib import Path

from maskcost.calibrate.profile import load_profile
from maskcost.validate.inengine import attach
from maskcost.validate.report import compare

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "m"))
from tracking import SERVERS as SERVERS_I_M, V, bench, server_runs  # noqa: E402

N = f"{V}/n"
SERVERS = SERVERS_I_M + tuple(  # name, sweeps (in the order they ran), probe folder, idle bench speed, backend, cores
    (name, [f"{N}/{s}.jsonl" for s in sweeps], f"{N}/probe", bench(f"{N}/bench-start.txt"), backend, cores)
    for name, sweeps, backend, cores in (
        ("N", ["n1-open", "n2-pass1", "n3-pass2"], "xgrammar", 14),
        ("N-guidance", ["n4-guidance-open", "n5-guidance"], "guidance", 14),
        ("N-4cores", ["n6-taskset4-open", "n7-taskset4"], "xgrammar", 4),
        ("N-resume", ["n8-resume-open", "n9-resume"], "xgrammar", 14)))
RULES = ("bench", "previous", "median before", "first two", "own")


def med(errors: list[float]) -> str:
    return f"{statistics.median(map(abs, errors)):.1f}%"


def main(servers: tuple = SERVERS) -> None:
    profile = load_profile(sys.argv[1])
    print(f"Profile {profile.name}. Signed ITL error per point, in the order the points ran: at the idle bench's "
          "speed / the previous point's fill speed / the median of the earlier points' fill speeds / the median of the "
          "first two points' / the point's own (the floor: the model's structure alone).\n")
    print("| server | bench speed | points | " + " | ".join(RULES) + " | per point (conc: " + " / ".join(RULES) + ") |")
    print("|---|---|---|" + "---|" * len(RULES) + "---|")
    every: dict[str, list[float]] = {r: [] for r in RULES}
    for name, speed, cfg, probe, runs in server_runs(servers):
        speeds: list[float] = []
        errs: dict[str, list[float]] = {r: [] for r in RULES}
        cells = []
        for s in runs:
            row = attach(compare(profile, cfg, [s]), probe)[0]
            own = row["fill_speed"]
            if speeds and own is not None:
                at = {"previous": speeds[-1], "median before": statistics.median(speeds),
                      "first two": statistics.median(speeds[:2]), "own": own}
                errs["bench"].append(row["metrics"]["ITL ms"]["error_pct"])
                for rule, sp in at.items():
                    errs[rule].append(compare(profile, replace(cfg, cpu_speed=sp), [s])[0]["metrics"]["ITL ms"]["error_pct"])
                cells.append(f"{s['concurrency']}: " + " / ".join(f"{errs[r][-1]:+.0f}" for r in RULES))
            if own is not None:
                speeds.append(own)
        for r in RULES:
            every[r] += errs[r]
        print(f"| {name} | {speed:.3f} | {len(errs['bench'])} | " + " | ".join(med(errs[r]) for r in RULES)
              + f" | {', '.join(cells)} |", flush=True)
    n = len(every["bench"])
    print(f"\nAll {n} points, median |ITL error|: " + ", ".join(f"{r} {med(every[r])}" for r in RULES))
    print("Points within 10%: " + ", ".join(f"{r} {sum(abs(e) < 10 for e in every[r])}" for r in RULES))


if __name__ == "__main__":
    main()
