"""The pooled pre-registered points of P-Z (z/pooled.py) split by the server's grammar backend (a
server table row whose name says guidance is a guidance server; the others ran xgrammar), by the rule
each session registered and at the idle bench: the README's "How good is it" table.
usage (from the repository root): python3 validation/h200-vllm-0.25.1/pooled_by_backend.py"""
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "t"))
import pooled  # noqa: E402  (t/: the score tables' reader)

SCORES = pooled.SCORES + tuple((s.upper(), f"{pooled.V}/{s}/score.md") for s in "uvwyz")


def by_backend() -> dict[str, tuple[list[int], list[int]]]:
    out: dict[str, tuple[list[int], list[int]]] = {"xgrammar": ([], []), "guidance": ([], [])}
    for _, path in SCORES:
        for row in pooled.first_table(path):
            rule, bench = out["guidance" if "guidance" in row.split("|")[1] else "xgrammar"]
            for part in row.rstrip().rstrip("|").split("|")[-1].split(";"):
                m = pooled.POINT.match(part)
                if m:
                    bench.append(int(m.group(1)))
                    rule.append(int(m.group(2)))
    return out


if __name__ == "__main__":
    print("| backend | points | server's speed read from its earlier points | at the idle bench's speed |")
    print("|---|---|---|---|")
    med = lambda e: statistics.median(abs(x) for x in e)  # noqa: E731
    for b, (rule, bench) in by_backend().items():
        print(f"| {b} | {len(rule)} | {med(rule):.1f}% | {med(bench):.1f}% |")
