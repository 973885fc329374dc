"""u/pooled.py with session V added: every pre-registered scored point of P-V by the rule each session
registered (V: the median of the server's earlier ITL speeds, as U), and at each session's idle bench
(V: bench-idle). Written before session V ran.
usage (from the repository root): python3 validation/h200-vllm-0.25.1/v/pooled.py"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "t"))
import pooled  # noqa: E402  (t/: the score tables' reader)

if __name__ == "__main__":
    pooled.main(pooled.SCORES + (("U", f"{pooled.V}/u/score.md"), ("V", f"{pooled.V}/v/score.md")))
