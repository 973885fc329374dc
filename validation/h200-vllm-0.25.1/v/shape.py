"""Where the median rule's error comes from (post hoc, not a prediction; written after session V ran):
over every probed xgrammar/guidance max-num-seqs 256 server of sessions I-V (s/tracking_rules_i_t.py's
I-T, and U's and V's three each), each point's ITL at the median ITL speed of the server's *other*
points, earlier and later (leave one out: the server's speed as well as its own points can tell it,
without the point itself), beside the registered rule (its earlier points only); and by concurrency, the
signed leave-one-out error, which a speed cannot absorb: the model's shape across concurrency plus the
point's own noise. The model run now with the given profile; a server's first point is not counted.
usage (from the repository root; SERVER...: only these, by name):
  python3 validation/h200-vllm-0.25.1/v/shape.py PROFILE [SERVER...] > validation/h200-vllm-0.25.1/v/shape.md"""
import statistics
import sys
from dataclasses import replace
from pathlib import Path

from maskcost.calibrate.profile import load_profile
from maskcost.validate.report import compare

V = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(V / "m"))
sys.path.insert(0, str(V / "s"))
sys.path.insert(0, str(V))
from scoring import UV_SERVERS, itl_speeds  # noqa: E402
from tracking import server_runs  # noqa: E402
from tracking_rules_i_t import SERVERS as SERVERS_I_T, session  # noqa: E402

SERVERS = SERVERS_I_T + tuple(
    x for s, b in (("u", "bench-idle"), ("v", "bench-idle")) for x in session(s, tuple(
        (f"{s.upper()}{i}-{be}", [f"{s}{i}-open", f"{s}{i}"], be, 14)
        for i, be in UV_SERVERS), bench_file=f"{b}.txt"))


def med_abs(e: list[float]) -> str:
    return f"{statistics.median(map(abs, e)):.1f}% ({sum(abs(x) < 10 for x in e)} within 10%)"


def main() -> None:
    profile = load_profile(sys.argv[1])
    only = set(sys.argv[2:])
    unknown = only - {s[0] for s in SERVERS}
    if unknown:
        sys.exit(f"shape.py: no server named {', '.join(sorted(unknown))} (they are {', '.join(s[0] for s in SERVERS)})")
    print(f"Profile {profile.name}. Per server: the median |ITL error| by the registered rule (the median ITL speed "
          "of the earlier points) and left one out (of all its other points); the first point not counted.\n")
    print("| server | points | median-itl rule | leave one out |")
    print("|---|---|---|---|")
    rule_all: list[float] = []
    loo_all: list[float] = []
    by_conc: dict[int, list[float]] = {}
    for name, _, cfg, _, runs in server_runs(tuple(s for s in SERVERS if not only or s[0] in only)):
        speeds = itl_speeds(profile, cfg, runs)
        err = lambda s, sp: compare(profile, replace(cfg, cpu_speed=sp), [s])[0]["metrics"]["ITL ms"]["error_pct"]  # noqa: E731
        rule, loo = [], []
        for i, s in enumerate(runs[1:], 1):
            before = [x for x in speeds[:i] if x]
            others = [x for j, x in enumerate(speeds) if j != i and x]
            if not before:
                continue
            rule.append(err(s, statistics.median(before)))
            loo.append(err(s, statistics.median(others)))
            by_conc.setdefault(s["concurrency"], []).append(loo[-1])
        rule_all += rule
        loo_all += loo
        print(f"| {name} | {len(rule)} | {med_abs(rule)} | {med_abs(loo)} |", flush=True)
    print(f"\nAll {len(rule_all)} points: median-itl rule {med_abs(rule_all)}; leave one out {med_abs(loo_all)}\n")
    print("By concurrency, the signed leave-one-out error (+: predicted ITL above measured):\n")
    print("| concurrency | points | median signed | median \\|error\\| | above 0 |")
    print("|---|---|---|---|---|")
    for c in sorted(by_conc):
        e = by_conc[c]
        print(f"| {c} | {len(e)} | {statistics.median(e):+.1f}% | {statistics.median(map(abs, e)):.1f}% | "
              f"{sum(x > 0 for x in e)} of {len(e)} |")


if __name__ == "__main__":
    main()
