"""n/tracking_rules.py's backtest (post hoc, not a prediction) over every probed server of sessions
I-P: I-N's 14 servers, O's and P's four, each in the order its points ran (a server's first point
not counted). P's primary score is p/report.sh's, pre-registered; this table puts its points beside
the other rules and sessions.
usage: python validation/h200-vllm-0.25.1/p/tracking_rules_i_p.py PROFILE > validation/h200-vllm-0.25.1/p/tracking-rules.md"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "n"))
from tracking_rules import SERVERS as SERVERS_I_N, V, bench, main  # noqa: E402

O, P = f"{V}/o", f"{V}/p"
SERVERS = SERVERS_I_N + (("O", [f"{O}/o1-open.jsonl", f"{O}/o2-held.jsonl"], f"{O}/probe", bench(f"{O}/bench-start.txt"),
                          "xgrammar", 14),) + tuple(
    (name, [f"{P}/{s}.jsonl" for s in sweeps], f"{P}/probe", bench(f"{P}/bench-start.txt"), backend, cores)
    for name, sweeps, backend, cores in (
        ("P", ["p1-open", "p2-pass1", "p3-pass2"], "xgrammar", 14),
        ("P-4cores", ["p4-taskset4-open", "p5-taskset4"], "xgrammar", 4),
        ("P-guidance", ["p6-guidance-open", "p7-guidance"], "guidance", 14),
        ("P-extra", ["p8-extra-open", "p9-extra"], "xgrammar", 14)))

if __name__ == "__main__":
    main(SERVERS)
