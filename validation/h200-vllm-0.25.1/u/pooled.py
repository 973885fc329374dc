"""t/pooled.py with session U added: every pre-registered scored point of P, R, S, T and U by the rule
each session registered (U: the median of the server's earlier ITL speeds), and at each session's idle
bench (U: bench-idle). Written before session U ran.
usage (from the repository root): python3 validation/h200-vllm-0.25.1/u/pooled.py"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "t"))
import pooled  # noqa: E402  (t/: the score tables' reader)

if __name__ == "__main__":
    pooled.main(pooled.SCORES + (("U", f"{pooled.V}/u/score.md"),))
