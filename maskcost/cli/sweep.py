"""`maskcost sweep`: a live sweep of a server (the client only)."""
from __future__ import annotations

from pathlib import Path

from .common import _add_schema_args, _entries, add_sweep_args, sweep_request

def cmd_sweep(args) -> int:
    return run_sweep_request(sweep_request(args, Path(args.out), _entries(args)))


def run_sweep_request(req) -> int:
    """Run a sweep request (validate/sweep.SweepRequest) and say its points, a line each (the command's, and
    `campaign`'s sweep steps')."""
    lines = said(req.run())
    if lines:
        print(lines)
    return 0


def said(res: list) -> str:
    """A sweep's points, a line each (the command's output; `campaign` logs them too)."""
    return "\n".join(f"{s.point:>14}  running {s.engine.running_mean or 0:6.1f}  itl {s.itl_ms_mean or 0:7.2f} ms"
                     f"  engine itl {s.engine.itl_ms or 0:7.2f} ms  step {s.engine.step_ms or 0:7.2f} ms"
                     f"  ttft p50 {s.ttft_ms_p50 or 0:8.1f} ms  {s.out_tok_per_s or 0:8.0f} tok/s  {s.checks}"
                     + (f"  server {s.engine.server_cpu['cpus']:.2f} CPUs" if s.engine.server_cpu else "")
                     for s in res)


def add_parser(sub) -> None:
    s = sub.add_parser("sweep", help="run a live sweep (client only)")
    add_sweep_args(s, "SWEEP.jsonl", [1, 8, 32], repeats=1, off_tokens=128)
    s.add_argument("--label", help="a name for the sweep, recorded in each point's config")
    _add_schema_args(s, None)
    s.set_defaults(func=cmd_sweep)
