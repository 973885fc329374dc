"""How far apart two servers of one configuration on one machine run, minutes apart (post hoc, after
session R): the engine's own ITL (vllm:inter_token_latency_seconds over each point's window) of every
pair of same-config servers that sessions M, N, P and R ran on one machine, at each offered
concurrency both ran, and, for the servers that ran a point twice, the two passes of one server.
Serial fills (up to 128 constrained rows: offered 8-128) and pool fills (160-256) apart.
usage (from the repository root): python3 validation/h200-vllm-0.25.1/r/server_spread.py > validation/h200-vllm-0.25.1/r/server-spread.md"""
import itertools
import statistics
import sys
from pathlib import Path

from maskcost.validate.sweep import itl_ms, read_summaries

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from scoring import apart_pct as apart  # noqa: E402

V = "validation/h200-vllm-0.25.1"
# (session, config, {server: [sweeps]}): xgrammar, max-num-seqs 256, async scheduling, the servers of one
# machine (each session's README); the openings at 96 are left out (each server has one)
GROUPS = [
    ("M", "14 cores", {"M1": ["m/m1-xgrammar.jsonl"], "M1b": ["m/m5-xgrammar-2.jsonl"]}),
    ("N", "14 cores", {"N1": ["n/n2-pass1.jsonl", "n/n3-pass2.jsonl"], "N-resume": ["n/n9-resume.jsonl"]}),
    ("P", "14 cores", {"P1": ["p/p2-pass1.jsonl", "p/p3-pass2.jsonl"], "P-extra": ["p/p9-extra.jsonl"]}),
    ("R", "14 cores", {"R-A": ["r/a14.jsonl"], "R-C": ["r/c14.jsonl"]}),
    ("R", "4 cores", {"R-B": ["r/b4.jsonl"], "R-D": ["r/d4.jsonl"]}),
]
POOL_FROM = 160  # offered concurrency from which more than 128 rows fill (vLLM's pool; model/fill.py)


def points(sweeps: list[str]) -> dict[int, list[float]]:
    """The server's engine ITL per concurrency, one value per pass, in the order they ran."""
    by: dict[int, list[float]] = {}
    runs = sorted((s for f in sweeps for s in read_summaries(f"{V}/{f}") if s["arm"] == "on"),
                  key=lambda s: s["engine"]["window_start_unix_s"])
    for s in runs:
        by.setdefault(s["concurrency"], []).append(itl_ms(s))
    return by


def summary(label: str, vals: list[float]) -> str:
    if not vals:
        return f"| {label} | 0 | - | - | - |"
    return (f"| {label} | {len(vals)} | {statistics.median(vals):.1f}% | {max(vals):.1f}% | "
            f"{sum(v > 10 for v in vals)} |")


def main(groups: list = GROUPS, after: str = "R", doc: str = __doc__) -> None:
    between: dict[str, list[float]] = {"serial": [], "pool": []}
    within: dict[str, list[float]] = {"serial": [], "pool": []}
    print(f"# Two servers of one configuration on one machine (post hoc, after session {after})\n")
    print(doc.split("usage")[0].strip().replace("\n", " "), "\n")
    print("| session | config | concurrency | servers: engine ITL ms (passes) | apart |")
    print("|---|---|---|---|---|")
    for session, cfg, servers in groups:
        by = {name: points(sw) for name, sw in servers.items()}
        for name, pts in by.items():
            for c, v in pts.items():
                if len(v) > 1:
                    within["pool" if c >= POOL_FROM else "serial"].append(apart(v[0], v[1]))
        for c in sorted(set.intersection(*(set(p) for p in by.values()))):
            means = {n: statistics.mean(p[c]) for n, p in by.items()}
            gaps = [apart(means[x], means[y]) for x, y in itertools.combinations(means, 2)]
            between["pool" if c >= POOL_FROM else "serial"].extend(gaps)
            cells = "; ".join(f"{n} {means[n]:.1f}" + (f" ({', '.join(f'{v:.1f}' for v in by[n][c])})"
                                                          if len(by[n][c]) > 1 else "") for n in by)
            print(f"| {session} | {cfg} | {c} | {cells} | {', '.join(f'{g:.1f}%' for g in gaps)} |")
    print("\n| pairs | n | median apart | largest | over 10% |")
    print("|---|---|---|---|---|")
    print(summary("two servers, serial fills (8-128)", between["serial"]))
    print(summary("two servers, pool fills (160-256)", between["pool"]))
    print(summary("one server's two passes, serial fills", within["serial"]))
    print(summary("one server's two passes, pool fills", within["pool"]))


if __name__ == "__main__":
    main()
