"""y/pooled.py with session Z added: every pre-registered scored point of P-Z by the rule each session
registered (U-Z: the median of the server's earlier ITL speeds; W, Y and Z each with its own profile), and at
each session's idle bench. Written before session Z ran.
usage (from the repository root): python3 validation/h200-vllm-0.25.1/z/pooled.py"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "t"))
import pooled  # noqa: E402  (t/: the score tables' reader)

if __name__ == "__main__":
    pooled.main(pooled.SCORES + tuple((s.upper(), f"{pooled.V}/{s}/score.md") for s in "uvwyz"))
