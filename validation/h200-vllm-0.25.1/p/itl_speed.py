"""The host's speed read from the engine's ITL (maskcost.validate.hostspeed, no probe) against the
speed read from the probe's fill (inengine.fill_speed), over every probed point of sessions I-P
(post hoc, not a prediction): per point both speeds, and the median rule on each (each point at the
median of the speeds of the server's earlier points; a server's first point not counted), with the
speed of the server's first point kept beside it. The model run now with the given profile.
usage: python validation/h200-vllm-0.25.1/p/itl_speed.py PROFILE > validation/h200-vllm-0.25.1/p/itl-speed.md"""
import statistics
import sys
from dataclasses import replace
from pathlib import Path

from maskcost.calibrate.profile import load_profile
from maskcost.validate.hostspeed import attach_itl_speeds
from maskcost.validate.inengine import attach
from maskcost.validate.report import compare

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "m"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from tracking import server_runs  # noqa: E402
from tracking_rules_i_p import SERVERS  # noqa: E402  (I-N, O, P)

RULES = ("fill, median before", "ITL, median before", "ITL, first point kept")


def main(servers: tuple = SERVERS) -> None:
    profile = load_profile(sys.argv[1])
    print(f"Profile {profile.name}. Per point (in the order the points ran): the probe's fill speed / the ITL speed; "
          f"then the signed ITL error of each rule.\n")
    print("| server | points | " + " | ".join(RULES) + " | per point (conc: fill / ITL speed; " + " / ".join(RULES) + ") |")
    print("|---|---|" + "---|" * len(RULES) + "---|")
    every: dict[str, list[float]] = {r: [] for r in RULES}
    gaps: list[float] = []
    for name, _, cfg, probe, runs in server_runs(servers):
        fills: list[float] = []
        itls: list[float] = []
        errs: dict[str, list[float]] = {r: [] for r in RULES}
        cells = []
        for s in runs:
            row = attach(compare(profile, cfg, [s]), probe)[0]
            own_fill = row["fill_speed"]
            own_itl = attach_itl_speeds([row], profile, cfg, [s], 4, progress=False)[0]["itl_speed"]
            if own_fill and own_itl:
                gaps.append(100.0 * (own_itl - own_fill) / own_fill)
            cell = f"{s['concurrency']}: {own_fill or 0:.2f} / {own_itl or 0:.2f}"
            if fills and itls and own_fill is not None:
                at = {RULES[0]: statistics.median(fills), RULES[1]: statistics.median(itls), RULES[2]: itls[0]}
                for rule, sp in at.items():
                    errs[rule].append(compare(profile, replace(cfg, cpu_speed=sp), [s])[0]["metrics"]["ITL ms"]["error_pct"])
                cell += "; " + " / ".join(f"{errs[r][-1]:+.0f}" for r in RULES)
            cells.append(cell)
            if own_fill:
                fills.append(own_fill)
            if own_itl:
                itls.append(own_itl)
        for r in RULES:
            every[r] += errs[r]
        print(f"| {name} | {len(errs[RULES[0]])} | " + " | ".join(f"{statistics.median(map(abs, errs[r])):.1f}%"
                                                                   for r in RULES) + f" | {', '.join(cells)} |", flush=True)
    n = len(every[RULES[0]])
    print(f"\nAll {n} points, median |ITL error|: " + ", ".join(f"{r} {statistics.median(map(abs, every[r])):.1f}%"
                                                           for r in RULES))
    print("Points within 10%: " + ", ".join(f"{r} {sum(abs(e) < 10 for e in every[r])}" for r in RULES))
    print(f"The ITL speed against the fill speed, per point ({len(gaps)}): median {statistics.median(gaps):+.1f}%, "
          f"median |gap| {statistics.median(map(abs, gaps)):.1f}%, {sum(abs(g) < 5 for g in gaps)} within 5%")


if __name__ == "__main__":
    main()
