"""The rules backtested over every probed xgrammar/guidance max-num-seqs 256 server of sessions I-R
(post hoc, not a prediction): p/tracking_rules_i_p.py's servers (I-P) and session R's four (A and C on
14 cores, B and D on 4; R's max-num-seqs 128 and ngram servers have other configs and are scored in
score.md alone). The model run now with the given profile. A server's first point is not counted.
usage (from the repository root):
  python3 validation/h200-vllm-0.25.1/r/tracking_rules_i_r.py fill PROFILE > validation/h200-vllm-0.25.1/r/tracking-rules.md
  python3 validation/h200-vllm-0.25.1/r/tracking_rules_i_r.py itl PROFILE > validation/h200-vllm-0.25.1/r/itl-speed.md"""
import sys
from pathlib import Path

V = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(V / "n"))
sys.path.insert(0, str(V / "p"))
import itl_speed  # noqa: E402  (p/: the ITL speed's rules)
import tracking_rules  # noqa: E402  (n/: the fill speed's rules)
from tracking_rules_i_p import SERVERS as SERVERS_I_P  # noqa: E402

R = f"{tracking_rules.V}/r"
SERVERS = SERVERS_I_P + tuple(
    (name, [f"{R}/{s}.jsonl" for s in sweeps], f"{R}/probe", tracking_rules.bench(f"{R}/bench-start.txt"), "xgrammar",
     cores)
    for name, sweeps, cores in (("R-A", ["a14-open", "a14"], 14), ("R-B-4cores", ["b4-open", "b4"], 4),
                                ("R-C", ["c14-open", "c14"], 14), ("R-D-4cores", ["d4-open", "d4"], 4)))

if __name__ == "__main__":
    which = sys.argv.pop(1)
    {"fill": tracking_rules.main, "itl": itl_speed.main}[which](SERVERS)
