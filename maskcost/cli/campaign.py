"""`maskcost campaign`: a pre-registered live check from a campaign file (validate/campaign.py):
`register` writes the registration before anything runs, `run` runs the three GPU-host commands
against the live server and scores them by the registered rule, `score` scores a finished run again."""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

STEPS = ("calibrate", "check", "predict", "validate", "score")  # what campaign run runs, in order


def _run_steps(args) -> int:
    from .. import __version__
    from ..validate.campaign import digest, load_campaign
    from . import main
    path = Path(args.campaign)
    c = load_campaign(path)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    schemas, tools = c.files(path.parent)
    given = (["--schema", *schemas] if schemas else []) + (["--tools", *tools, "--tool-choice", c.tool_choice]
                                                          if tools else [])
    held = [str(x) for x in c.held_out]
    from ..calibrate.schemas import load_schema_file
    from ..calibrate.tools import tool_entry
    ids = [load_schema_file(f).schema_id for f in schemas] + [tool_entry(f, c.tool_choice, c.server.engine).schema_id
                                                               for f in tools]
    host, pred, val, valp = out / "host.json.gz", out / "predicted.json", out / "val", out / "val-predicted"
    sv = c.server
    mns = ["--max-num-seqs", str(sv.max_num_seqs)]
    engine = ["--engine", sv.engine, "--engine-version", sv.engine_version, "--backend", sv.backend, *mns]
    steps = [
        ("calibrate", host, ["calibrate", "--base-url", args.base_url, "--tokenizer", c.tokenizer, *given,
                             "--server-engine", sv.engine, "--server-engine-version", sv.engine_version,
                             "--server-backend", sv.backend, *mns, *c.calibrate_args, "--out", str(host)]),
        ("check", None, ["calibrate", "--check", str(host)]),
        ("predict", pred, ["predict", "--profile", str(host), *engine, "--schema-id", *ids,
                           "--concurrency", *held, "--json", str(pred)]),
        ("validate", val / "report.json", ["validate", "--profile", str(host), "--base-url", args.base_url,
                                           *engine, *given, "--concurrency", *held,
                                           "--repeats", str(c.repeats), "--out", str(val)]),
        ("score", valp / "report.json", ["report", "--profile", str(host), *engine,
                                         "--sweep", str(val / "sweep.jsonl"), "--predicted", str(pred),
                                         "--out", str(valp)]),
    ]
    assert [n for n, _, _ in steps] == list(STEPS)
    if args.stop_after:
        steps = steps[:STEPS.index(args.stop_after) + 1]
    log = out / "steps.txt"
    with log.open("a") as f:
        f.write(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} campaign {c.name} digest {digest(path)} "
                f"maskcost {__version__}\n")
    for name, done, argv in steps:
        if done is not None and done.exists():
            print(f"campaign {c.name}: {name}: {done} exists, not run again")
            continue
        print(f"campaign {c.name}: {name}: maskcost {' '.join(argv)}", flush=True)
        t0 = time.monotonic()
        rc = main(argv)
        with log.open("a") as f:
            f.write(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {name} rc {rc} "
                    f"{time.monotonic() - t0:.1f} s: maskcost {' '.join(argv)}\n")
        if rc:
            print(f"maskcost campaign: error: step {name} failed (rc {rc}); what finished is in {out}; run again to "
                  f"resume", file=sys.stderr)
            return rc
    if args.stop_after and args.stop_after != STEPS[-1]:
        print(f"campaign {c.name}: stopped after {args.stop_after} (--stop-after); run again to go on")
        return 0
    return _score_run(c, out)


def _score_run(c, out: Path) -> int:
    """The registered rule on a run folder's reports (val/, and val-predicted/ where it exists): score.json."""
    from ..validate.campaign import score
    try:
        rep = json.loads((out / "val" / "report.json").read_text())
    except OSError:
        raise ValueError(f"campaign score: no {out / 'val' / 'report.json'} (run the campaign first)") from None
    pr = out / "val-predicted" / "report.json"
    doc = score(c, rep, json.loads(pr.read_text()) if pr.exists() else None)
    (out / "score.json").write_text(json.dumps(doc, indent=1))
    _print_score(doc)
    return 0


def _print_score(doc) -> None:
    sec = doc["secondary_median_abs_error_pct"]
    print(f"campaign {doc['campaign']}: median |{doc['metric']} error| {doc['primary_median_abs_error_pct']:.1f}% over "
          f"{doc['points']} held-out points, bar {doc['bar_pct']:g}%: {'met' if doc['met'] else 'MISSED'}"
          + (f"; against predicted.json {sec:.1f}%" if sec is not None else ""))


def cmd_campaign(args) -> int:
    from .. import __version__
    from ..validate.campaign import digest, load_campaign, registration
    if args.action == "register":
        text = registration(args.campaign, __version__)
        if args.out:
            Path(args.out).write_text(text)
            print(f"wrote {args.out}")
        else:
            print(text)
        print(f"campaign digest {digest(args.campaign)}")
        return 0
    if args.action == "run":
        if not args.base_url or not args.out:
            from .common import UsageError
            raise UsageError("campaign run: give --base-url URL (the live server) and --out DIR")
        return _run_steps(args)
    return _score_run(load_campaign(args.campaign), Path(args.out or "."))


def add_parser(sub) -> None:
    p = sub.add_parser("campaign", help="a pre-registered live check from a campaign file: register it, run it "
                                        "against a live server, score it")
    p.add_argument("action", choices=["register", "run", "score"],
                   help="register: write the registration; run: the three GPU-host commands and the score; "
                        "score: score a finished run again")
    p.add_argument("campaign", metavar="CAMPAIGN.json", help="the campaign file (validate/campaign.py)")
    p.add_argument("--base-url", help="run: the live server")
    p.add_argument("--stop-after", choices=STEPS, help="run: stop after this step (a later run resumes; "
                                                       "default: every step and the score)")
    p.add_argument("--out", metavar="PATH", help="register: the registration file (default: print it); run and "
                                                 "score: the run's folder")
    p.set_defaults(func=cmd_campaign)
