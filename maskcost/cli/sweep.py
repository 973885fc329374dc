"""`maskcost sweep`: a live sweep of a server (the client only)."""
from __future__ import annotations

from pathlib import Path

from .common import UsageError, _add_schema_args, _entries, add_sweep_args

def cmd_sweep(args) -> int:
    from ..validate.plan import LivePlan
    from ..validate.sweep import PointSpec, run_sweep
    entries = _entries(args)
    if "on" in args.arms and not entries:
        raise UsageError("sweep: the 'on' arm needs schemas (--schema, --tier or --corpus)")
    pts = [PointSpec(a, c, r, max(args.min_requests, args.rounds * c))
           for r in range(args.repeats) for c in args.concurrency for a in args.arms]
    res = run_sweep(args.base_url, pts, entries, Path(args.out), max_tokens=args.max_tokens,
                    off_tokens=args.off_tokens, unique=args.unique_schemas, seed=args.seed,
                    prompt_pad=args.prompt_pad, unique_prompts=args.unique_prompts,
                    client_procs=LivePlan().client_procs_at if args.client_procs is None else args.client_procs,
                    host_bench=args.host_bench, config={"label": args.label} if args.label else None)
    for s in res:
        e = s.engine
        print(f"{s.point:>14}  running {e.running_mean or 0:6.1f}  itl {s.itl_ms_mean or 0:7.2f} ms"
              f"  engine itl {e.itl_ms or 0:7.2f} ms  step {e.step_ms or 0:7.2f} ms"
              f"  ttft p50 {s.ttft_ms_p50 or 0:8.1f} ms  {s.out_tok_per_s or 0:8.0f} tok/s  {s.checks}"
              + (f"  server {e.server_cpu['cpus']:.2f} CPUs" if e.server_cpu else ""))
    return 0


def add_parser(sub) -> None:
    s = sub.add_parser("sweep", help="run a live sweep (client only)")
    add_sweep_args(s, "SWEEP.jsonl", [1, 8, 32], repeats=1, off_tokens=128)
    s.add_argument("--label", help="a name for the sweep, recorded in each point's config")
    _add_schema_args(s, None)
    s.set_defaults(func=cmd_sweep)
