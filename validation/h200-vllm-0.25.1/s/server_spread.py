"""How far apart two servers of one configuration on one machine run (post hoc, after session S):
r/server_spread.py's pairs of sessions M, N, P and R with session S's added (three 14-core servers and
three 4-core servers of one machine, xgrammar, max-num-seqs 256, async; three pairs of each config at
64 and 128). Serial fills (up to 128 constrained rows: offered 8-128) and pool fills (160-256) apart.
usage (from the repository root): python3 validation/h200-vllm-0.25.1/s/server_spread.py > validation/h200-vllm-0.25.1/s/server-spread.md"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "r"))
import server_spread  # noqa: E402  (r/: the pairs of M-R and the table)

GROUPS = server_spread.GROUPS + [
    ("S", "14 cores", {"S1": ["s/s1-14.jsonl"], "S3": ["s/s3-14.jsonl"], "S5": ["s/s5-14.jsonl"]}),
    ("S", "4 cores", {"S2": ["s/s2-4.jsonl"], "S4": ["s/s4-4.jsonl"], "S6": ["s/s6-4.jsonl"]}),
]

if __name__ == "__main__":
    server_spread.main(GROUPS, "S", __doc__)
