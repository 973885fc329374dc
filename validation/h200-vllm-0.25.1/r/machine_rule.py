"""The median rule over a machine instead of a server (post hoc, after session R): each scored point
read from its committed grid at the median of the ITL speeds of every earlier point on the same
machine, of any server (the servers of one machine share its host), beside the pre-registered rule
(the median of the same server's earlier points). Sessions P and R, each one machine; the points in
the order they ran; the openings at 96 give speeds but are not scored, as in the sessions' scoring.
The ITL speeds from the model as it stands (r/posthoc's ngram grid: the spec-decoding window fix).
usage (from the repository root): python3 validation/h200-vllm-0.25.1/r/machine_rule.py > validation/h200-vllm-0.25.1/r/machine-rule.md"""
import statistics
import sys
from pathlib import Path

from maskcost.calibrate.profile import load_default_profile
from maskcost.model.config import EngineConfig
from maskcost.validate.hostspeed import attach_itl_speeds
from maskcost.validate.report import compare
from maskcost.validate.sweep import itl_ms, read_summaries

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from scoring import grid  # noqa: E402
from tracking_report import read_at  # noqa: E402

V = "validation/h200-vllm-0.25.1"
# session: [(server, grid, [opening, points...])], each server's sweeps; the grids made with the default
MACHINES = {
    "P": [("P xgrammar", "p/predicted-xgrammar.json", ["p/p1-open", "p/p2-pass1", "p/p3-pass2"]),
          ("P 4 cores", "p/predicted-taskset4.json", ["p/p4-taskset4-open", "p/p5-taskset4"]),
          ("P guidance", "p/predicted-guidance.json", ["p/p6-guidance-open", "p/p7-guidance"]),
          ("P xgrammar extra", "p/predicted-xgrammar.json", ["p/p8-extra-open", "p/p9-extra"])],
    "R": [("R A, 14 cores", "r/predicted-xgrammar.json", ["r/a14-open", "r/a14"]),
          ("R B, 4 cores", "r/predicted-taskset4.json", ["r/b4-open", "r/b4"]),
          ("R C, 14 cores", "r/predicted-xgrammar.json", ["r/c14-open", "r/c14"]),
          ("R D, 4 cores", "r/predicted-taskset4.json", ["r/d4-open", "r/d4"]),
          ("R max-num-seqs 128", "r/predicted-mns128.json", ["r/mns128-open", "r/mns128"]),
          ("R ngram 3", "r/posthoc/predicted-ngram3.json", ["r/ngram3-open", "r/ngram3"])],
}
RULES = ("server", "machine")


def main() -> None:
    profile = load_default_profile()
    print("Signed ITL error per scored point, in the order the points ran: at the median of the server's "
          "earlier points' ITL speeds / of the machine's (any server's) earlier points'.\n")
    print("| machine | server | points | median of the server's earlier | median of the machine's earlier | per point |")
    print("|---|---|---|---|---|---|")
    total: dict[str, list[float]] = {r: [] for r in RULES}
    for machine, servers in MACHINES.items():
        runs = []  # (window start, server, grid, cfg, summary, is opening)
        for name, grid_path, sweeps in servers:
            g, doc = grid(f"{V}/{grid_path}")
            cfg = EngineConfig(**doc["points"][0]["config"]["engine"])
            for i, f in enumerate(sweeps):
                for s in read_summaries(f"{V}/{f}.jsonl"):
                    if s["arm"] == "on":
                        runs.append((s["engine"]["window_start_unix_s"], name, g, cfg, s, i == 0))
        runs.sort(key=lambda r: r[0])
        seen: dict[str, list[float]] = {name: [] for name, _, _ in servers}
        machine_seen: list[float] = []
        errs = {name: {r: [] for r in RULES} for name, _, _ in servers}
        cells: dict[str, list[str]] = {name: [] for name, _, _ in servers}
        for _, name, g, cfg, s, opening in runs:
            measured = itl_ms(s)
            if not opening and seen[name]:
                at = {"server": statistics.median(seen[name]), "machine": statistics.median(machine_seen)}
                e = {r: 100.0 * (read_at(g[s["concurrency"]], sp)[0]["itl_ms_mean"] - measured) / measured
                     for r, sp in at.items()}
                for r in RULES:
                    errs[name][r].append(e[r])
                cells[name].append(f"{s['concurrency']}: {e['server']:+.0f} / {e['machine']:+.0f} "
                                   f"(at {at['server']:.2f} / {at['machine']:.2f})")
            own = attach_itl_speeds(compare(profile, cfg, [s]), profile, cfg, [s], 4, progress=False)[0]["itl_speed"]
            if own:
                seen[name].append(own)
                machine_seen.append(own)
        for name, _, _ in servers:
            for r in RULES:
                total[r] += errs[name][r]
            print(f"| {machine} | {name} | {len(errs[name]['server'])} | "
                  + " | ".join(f"{statistics.median(map(abs, errs[name][r])):.1f}%" for r in RULES)
                  + f" | {'; '.join(cells[name])} |", flush=True)
    n = len(total["server"])
    print(f"\nAll {n} points, median |ITL error|: " + ", ".join(
        f"{r}'s earlier {statistics.median(map(abs, total[r])):.1f}% ({sum(abs(e) < 10 for e in total[r])} within 10%)"
        for r in RULES))


if __name__ == "__main__":
    main()
