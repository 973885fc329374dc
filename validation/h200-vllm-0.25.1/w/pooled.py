"""u/pooled.py with sessions V and W added: every pre-registered scored point of P-W by the rule each session
registered (V and W: the median of the server's earlier ITL speeds, as U; W with its own profile), and at each session's idle bench
(V, W: bench-idle). Written before session W ran.
usage (from the repository root): python3 validation/h200-vllm-0.25.1/w/pooled.py"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "t"))
import pooled  # noqa: E402  (t/: the score tables' reader)

if __name__ == "__main__":
    pooled.main(pooled.SCORES + (("U", f"{pooled.V}/u/score.md"), ("V", f"{pooled.V}/v/score.md"),
                               ("W", f"{pooled.V}/w/score.md")))
