"""`maskcost validate`: sweep a live server, then report predicted vs measured."""
from __future__ import annotations

import argparse
from pathlib import Path

from .common import Options, _add_schema_args, add_sweep_args
from .engine_args import _add_engine_args, add_host_args, one_server
from .report import add_parser as add_report_parser, cmd_report

DEFAULT_TIERS = ("flat", "bounded")  # the schemas validate sweeps when given none


def cmd_validate(args) -> int:
    from .common import _entries, sweep_request
    one_server(args)  # before anything is sent
    if not (args.schema or args.tools or args.tier or args.corpus):
        args = Options(**{**vars(args), "tier": list(DEFAULT_TIERS)})
    entries = _entries(args)
    out = Path(args.out)  # (made by the sweep once the server answers: no empty folder for a wrong URL)
    sweep_request(args, out / "sweep.jsonl", entries).run()
    # the report on it: report's own options at their defaults, validate's where it has them
    ap = argparse.ArgumentParser()
    add_report_parser(ap.add_subparsers(dest="cmd"))
    report_args = ap.parse_args(["report", "--sweep", str(out / "sweep.jsonl"), "--out", str(out)])
    return cmd_report(Options(**{**vars(report_args), **vars(args), "cpu_speed_from_sweep": args.host_bench}))


def add_parser(sub) -> None:
    v = sub.add_parser("validate", help="sweep a live server, then report predicted vs measured")
    _add_engine_args(v)
    add_host_args(v)
    _add_schema_args(v, None, f"built-in schema tiers (default, where no --schema, --tools or --corpus is "
                              f"given: {' '.join(DEFAULT_TIERS)})")
    add_sweep_args(v, "DIR", [1, 8, 32], repeats=2, off_tokens=96)
    v.add_argument("--probe", metavar="DIR", help="in-server probe records (maskcost probe-site) of the server: "
                                                  "the engine's own step timings beside the model's")
    v.add_argument("--title", default="maskcost validate: predicted vs measured", help="the report's title")
    v.add_argument("--requests-factor", type=int, default=4, help="requests of each simulated point, per client")
    v.set_defaults(func=cmd_validate)
