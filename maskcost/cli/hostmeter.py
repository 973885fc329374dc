"""`maskcost hostmeter` and `maskcost probe-site`: the tools that run beside a live server."""
from __future__ import annotations

from pathlib import Path


def cmd_hostmeter(args) -> int:
    from ..calibrate.tokenizer import load_vocab
    from ..validate.hostmeter import run_meter
    if not args.interval_s > 0:
        raise ValueError(f"--interval-s {args.interval_s}: must be > 0")
    print(f"hostmeter: appending to {args.out} every {args.interval_s} s (stop with Ctrl-C or kill)", flush=True)
    try:
        run_meter(Path(args.out), load_vocab(args.tokenizer), args.match, args.interval_s, args.duration_s)
    except KeyboardInterrupt:
        pass
    return 0


def cmd_probe_site(args) -> int:
    from ..model.engines import engine_policy
    from ..validate.probe import ENV_DIR, write_site
    from .common import UsageError
    policy = engine_policy(args.engine, args.engine_version)
    if not policy.probe_targets:
        raise UsageError(f"probe-site --engine {args.engine}: no in-server probe for {policy.name} {policy.version} "
                         f"(its class in model/engines.py names no probe_targets)")
    path = write_site(args.dir, policy.probe_targets)
    print(f"wrote {path}: put {args.dir} first on the server's PYTHONPATH and set {ENV_DIR}=FOLDER; "
          f"then `maskcost report --probe FOLDER` sets the engine's own timings beside the model's")
    return 0


def add_parser(sub) -> None:
    m = sub.add_parser("hostmeter", help="beside a live server: the host's speed, CPU steal and the server's "
                                         "threads, once an interval, as JSON lines (Linux)")
    m.add_argument("--out", required=True, metavar="FILE.jsonl", help="where the readings are appended")
    m.add_argument("--tokenizer", default="llama3", help="bundled vocabulary or tokenizer folder (default llama3)")
    m.add_argument("--match", default="vllm", help="server processes: command line or name holds this")
    m.add_argument("--interval-s", type=float, default=1.0, help="seconds between readings")
    m.add_argument("--duration-s", type=float, help="stop after this long (default: run until killed)")
    m.set_defaults(func=cmd_hostmeter)

    s = sub.add_parser("probe-site", help="write the in-server timing probe as DIR/sitecustomize.py")
    s.add_argument("dir", metavar="DIR", help="the folder to write sitecustomize.py into (put it on the "
                   "server's PYTHONPATH)")
    from ..model.config import DEFAULT_ENGINE
    from ..model.engines import ENGINES
    s.add_argument("--engine", choices=sorted(ENGINES), default=DEFAULT_ENGINE, help="the server's engine, whose "
                   "methods the probe times")
    s.add_argument("--engine-version", metavar="V", help="its version (default: the one modelled first)")
    s.set_defaults(func=cmd_probe_site)
