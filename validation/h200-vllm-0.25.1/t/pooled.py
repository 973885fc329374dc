"""Every pre-registered scored point of sessions P, R, S and T, by the rule each session registered for
its ITL score (P: the median of the server's earlier fill speeds; R, S and T: the median of its earlier
ITL speeds, `predict --cpu-speed-from-report`'s default), and at each session's idle bench speed: read
from the first server table of each committed score.md (signed errors, rounded to whole %, as printed).
Written before session T ran. usage (from the repository root): python3 validation/h200-vllm-0.25.1/t/pooled.py"""
import os
import re
import statistics

V = "validation/h200-vllm-0.25.1"
SCORES = (("P", f"{V}/p/score.md"), ("R", f"{V}/r/score.md"), ("S", f"{V}/s/score.md"), ("T", f"{V}/t/score.md"))
POINT = re.compile(r"\s*\d+: ([+-]\d+) / ([+-]\d+)")  # "CONC: BENCH / RULE (at SPEED)"; a first point has no rule


def first_table(path: str) -> list[str]:
    rows: list[str] = []
    for line in open(path):
        if line.startswith("| ") and not line.startswith("| server"):
            rows.append(line)
        elif rows and not line.startswith("|"):
            break
    return rows


def errors(path: str) -> tuple[list[int], list[int]]:
    """(by the registered rule, at the bench) per scored point of the table's servers."""
    rule, bench = [], []
    for row in first_table(path):
        for part in row.rstrip().rstrip("|").split("|")[-1].split(";"):
            m = POINT.match(part)
            if m:
                bench.append(int(m.group(1)))
                rule.append(int(m.group(2)))
    return rule, bench


def line(label: str, rule: list[int], bench: list[int]) -> str:
    med = lambda e: statistics.median(abs(x) for x in e)  # noqa: E731
    within = lambda e: sum(abs(x) < 10 for x in e)  # noqa: E731
    return (f"| {label} | {len(rule)} | {med(rule):.1f}% ({within(rule)} within 10%) | "
            f"{med(bench):.1f}% ({within(bench)} within 10%) |")


def main(scores: tuple = SCORES) -> None:
    print("| sessions | points | registered rule: median \\|ITL error\\| | idle bench |")
    print("|---|---|---|---|")
    pooled_rule: list[int] = []
    pooled_bench: list[int] = []
    for name, path in scores:
        if not os.path.exists(path):
            print(f"| {name} | not scored |")
            continue
        r, b = errors(path)
        pooled_rule += r
        pooled_bench += b
        print(line(name, r, b))
    print(line("**all**", pooled_rule, pooled_bench))


if __name__ == "__main__":
    main()
