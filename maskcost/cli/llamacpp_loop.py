"""`maskcost llamacpp-loop`: calibrate -> predict -> validate against a real llama.cpp server on this CPU."""
from __future__ import annotations

from pathlib import Path

def cmd_llamacpp_loop(args) -> int:
    from ..llamacpp.loop import LoopPlan, run_loop
    run_loop(Path(args.out), LoopPlan(repeats=args.repeats, threads=args.threads))
    return 0


def add_parser(sub) -> None:
    lp = sub.add_parser("llamacpp-loop", help="calibrate -> predict -> validate against a real llama.cpp server "
                                              "on this CPU (tiny random-weight Llama-3 model)")
    lp.add_argument("--out", required=True, metavar="DIR", help="where the profile, sweeps and reports go")
    lp.add_argument("--repeats", type=int, default=2, help="runs of each held-out point")
    lp.add_argument("--threads", type=int, default=2, help="llama-server -t")
    lp.set_defaults(func=cmd_llamacpp_loop)
