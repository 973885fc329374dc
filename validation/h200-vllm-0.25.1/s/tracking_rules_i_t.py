"""The rules backtested over every probed xgrammar/guidance max-num-seqs 256 server of sessions I-T
(post hoc, not a prediction): r/tracking_rules_i_r.py's servers (I-R), session S's six (1, 3, 5 on 14
cores; 2, 4, 6 on 4) and session T's guidance server; S's ngram server has another config and is scored
in s/score.md alone. The model run now with the given profile. A server's first point is not counted.
usage (from the repository root):
  python3 validation/h200-vllm-0.25.1/s/tracking_rules_i_t.py fill PROFILE > validation/h200-vllm-0.25.1/s/tracking-rules.md
  python3 validation/h200-vllm-0.25.1/s/tracking_rules_i_t.py itl PROFILE > validation/h200-vllm-0.25.1/s/itl-speed.md"""
import sys
from pathlib import Path

V = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(V / "n"))
sys.path.insert(0, str(V / "p"))
sys.path.insert(0, str(V / "r"))
import itl_speed  # noqa: E402  (p/: the ITL speed's rules)
import tracking_rules  # noqa: E402  (n/: the fill speed's rules)
from tracking_rules_i_r import SERVERS as SERVERS_I_R  # noqa: E402


def session(d: str, servers: tuple, bench_file: str = "bench-start.txt") -> tuple:
    """(name, sweeps, probe, bench, backend, cores) for each (name, sweep names, backend, cores) of folder d."""
    path = f"{tracking_rules.V}/{d}"
    return tuple((name, [f"{path}/{s}.jsonl" for s in sweeps], f"{path}/probe",
                  tracking_rules.bench(f"{path}/{bench_file}"), backend, cores)
                 for name, sweeps, backend, cores in servers)


SERVERS = SERVERS_I_R + session("s", tuple(
    (f"S{i}" + ("" if cores == 14 else "-4cores"), [f"s{i}-{cores}-open", f"s{i}-{cores}"], "xgrammar", cores)
    for i, cores in ((1, 14), (2, 4), (3, 14), (4, 4), (5, 14), (6, 4)))) + session(
    "t", (("T-guidance", ["g14-open", "g14"], "guidance", 14),))

if __name__ == "__main__":
    which = sys.argv.pop(1)
    {"fill": tracking_rules.main, "itl": itl_speed.main}[which](SERVERS)
