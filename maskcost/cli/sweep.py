"""`maskcost sweep`: a live sweep of a server (the client only)."""
from __future__ import annotations

from pathlib import Path

from .common import UsageError, _add_schema_args, _entries, add_request_args

def cmd_sweep(args) -> int:
    from ..validate.sweep import PointSpec, run_sweep
    entries = _entries(args)
    if "on" in args.arms and not entries:
        raise UsageError("sweep: the 'on' arm needs schemas (--schema, --tier or --corpus)")
    pts = [PointSpec(a, c, r, max(args.min_requests, args.rounds * c))
           for r in range(args.repeats) for c in args.concurrency for a in args.arms]
    res = run_sweep(args.base_url, pts, entries, Path(args.out), max_tokens=args.max_tokens,
                    off_tokens=args.off_tokens, unique=args.unique_schemas, seed=args.seed,
                    prompt_pad=args.prompt_pad, unique_prompts=args.unique_prompts, client_procs=args.client_procs,
                    host_bench=args.host_bench, config={"label": args.label} if args.label else None)
    for s in res:
        e = s["engine"]
        print(f"{s['point']:>14}  running {e['running_mean'] or 0:6.1f}  itl {s['itl_ms_mean'] or 0:7.2f} ms"
              f"  engine itl {e['itl_ms'] or 0:7.2f} ms  step {e['step_ms'] or 0:7.2f} ms"
              f"  ttft p50 {s['ttft_ms_p50'] or 0:8.1f} ms  {s['out_tok_per_s'] or 0:8.0f} tok/s  {s['checks']}")
    return 0


def add_parser(sub) -> None:
    s = sub.add_parser("sweep", help="run a live sweep (client only)")
    s.add_argument("--base-url", required=True)
    s.add_argument("--out", required=True, metavar="SWEEP.jsonl")
    s.add_argument("--arms", nargs="+", default=["on", "off"], choices=["on", "off"])
    s.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    s.add_argument("--repeats", type=int, default=1)
    s.add_argument("--rounds", type=int, default=3, help="requests per point = max(min, rounds x concurrency)")
    s.add_argument("--min-requests", type=int, default=16)
    s.add_argument("--max-tokens", type=int, default=512)
    s.add_argument("--off-tokens", type=int, default=128, help="schema-off arm output length (ignore_eos)")
    s.add_argument("--unique-schemas", action="store_true")
    add_request_args(s)
    s.add_argument("--label")
    _add_schema_args(s, None)
    s.set_defaults(func=cmd_sweep)
