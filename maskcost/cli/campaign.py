"""`maskcost campaign`: a pre-registered live check from a campaign file (validate/campaign.py):
`register` writes the registration before anything runs, `run` runs the three GPU-host commands
against the live server and scores them by the registered rule, `score` scores a finished run again."""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Callable

STEPS = ("calibrate", "check", "predict", "speed", "validate", "score")  # what campaign run runs, in order


def _base_urls(given: list[str], arms) -> dict[str, str]:
    """--base-url URL (a campaign of one server) or NAME=URL for every arm."""
    from .common import UsageError
    names = [a.name for a in arms]
    if len(given) == 1 and "=" not in given[0] and len(arms) == 1:
        return {names[0]: given[0]}
    urls = dict(g.split("=", 1) for g in given if "=" in g)
    if len(urls) != len(given) or sorted(urls) != sorted(names):
        raise UsageError(f"campaign run: give --base-url NAME=URL for each arm ({', '.join(names)})"
                         + (" or one URL" if len(arms) == 1 else ""))
    return urls


def _registered(path: Path, unregistered: bool) -> Path | None:
    """The campaign's registration; a campaign changed since it is refused, and one with none beside it unless
    `unregistered` (--unregistered: then said, and the score says so)."""
    from ..validate.campaign import CampaignError, check_registration, find_registration
    reg = find_registration(path)
    if reg is None:
        how = (f"maskcost campaign register {path} --out REGISTRATION.md, committed before the run, is what binds "
               f"it")
        if not unregistered:
            raise CampaignError(f"{path}: no registration found beside it ({how}; --unregistered runs it without "
                                f"one, not as a pre-registered check)")
        print(f"campaign {path}: no registration found beside it, run as --unregistered ({how})", file=sys.stderr)
    check_registration(path, reg)
    return reg


Step = tuple[str, "Path | None", "list[str] | Callable[[], list[str]]"]  # (STEPS name, its output, its argv)


def _run_steps(args) -> int:
    from ..calibrate.schemas import load_schema_file
    from ..calibrate.tools import tool_entry
    from ..validate.campaign import load_campaign
    path = Path(args.campaign)
    c = load_campaign(path)
    reg = _registered(path, args.unregistered)
    _check_engine_args(c, args.argv_problem)
    arms = c.arm_list()
    urls = _base_urls(args.base_url, arms)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    schemas, tools = c.files(path.parent)
    given = (["--schema", *schemas] if schemas else []) + (["--tools", *tools, "--tool-choice", c.tool_choice]
                                                          if tools else [])
    ids = [load_schema_file(f).schema_id for f in schemas] + [tool_entry(f, c.tool_choice, arms[0].server.engine).schema_id
                                                               for f in tools]
    host = _host_profile(c, path, out)
    # what predict is given: a calibrated profile holds the schemas' traces; a profile made elsewhere takes
    # the files as a user gives them (its own traces where a file is the schema it holds, else traced here)
    requests = given if c.profile else ["--schema-id", *ids]
    if c.profile:
        _profile_holds(c, path, host)
    steps = _calibrate_steps(c, out, urls, given, host)
    steps += [("check", None, ["calibrate", "--check", str(p)])
              for p in dict.fromkeys(_arm_profile(c, out, a, host) for a in arms)]
    for a in arms:  # every arm's predictions before any held-out point of any arm
        d, engine = _arm_dir(c, out, a), _engine_flags(a)
        steps.append(("predict", d / "predicted.json",
                      ["predict", "--profile", str(_arm_profile(c, out, a, host)), *engine, *requests,
                       "--concurrency", *map(str, a.held_out), *a.predict_args, "--json", str(d / "predicted.json")]))
    if c.speed_loads:
        steps += _speed_steps(c, out, host, urls[arms[0].name], given, requests)
    steps += _held_out_steps(c, out, urls, given, host)
    steps.sort(key=lambda s: STEPS.index(s[0]))  # stable: each step for every arm, in STEPS order
    if args.stop_after:
        steps = [s for s in steps if STEPS.index(s[0]) <= STEPS.index(args.stop_after)]
    rc = _execute(c, path, out, steps, lambda argv: _run_step(args, argv), reg)
    if rc:
        return rc
    if args.stop_after and args.stop_after != STEPS[-1]:
        print(f"campaign {c.name}: stopped after {args.stop_after} (--stop-after); run again to go on")
        return 0
    return _score_run(c, out, reg)


def _calibrate_steps(c, out: Path, urls: dict[str, str], given: list[str], host: Path) -> list[Step]:
    """The first arm's server calibrated into the run (where the campaign names no profile), and each arm
    that has its own engine side (a sync arm's schema-off sweep, an arm's fit loads) swept and fitted."""
    steps: list[Step] = []
    for i, a in enumerate(c.arm_list()):
        d, sv, url = _arm_dir(c, out, a), a.server, urls[a.name]
        server = ["--server-engine", sv.engine, "--server-engine-version", sv.engine_version,
                  "--server-backend", sv.backend, "--max-num-seqs", str(sv.max_num_seqs)]
        if i == 0 and not c.profile:
            steps.append(("calibrate", host, ["calibrate", "--base-url", url, "--tokenizer", c.tokenizer, *given,
                                              *server, *c.calibrate_args, "--out", str(host)]))
        if a.profile == "sync" or a.fit_loads:  # this arm's own engine side (its sweeps resume)
            engine_only = ["calibrate", "--engine-only", "--engine-from", str(host)]
            for arm, loads, f in (("off", a.sweep_loads, "sync"), ("on", a.fit_loads, "fit")):
                if loads:
                    steps.append(("calibrate", None, ["sweep", "--base-url", url, "--arms", arm, *given, "--concurrency",
                                                      *map(str, loads), "--label", f"{a.name}-{f}",
                                                      "--out", str(d / f"{f}.jsonl")]))
                    engine_only += ["--sync-sweep" if f == "sync" else "--fit-rows", str(d / f"{f}.jsonl")]
            if a.fit_loads:
                engine_only += server
            mine = _arm_profile(c, out, a, host)
            steps.append(("calibrate", mine, [*engine_only, "--out", str(mine)]))
    return steps


def _held_out_steps(c, out: Path, urls: dict[str, str], given: list[str], host: Path) -> list[Step]:
    """Each arm's held-out points (validate) and their scores against the predictions made before them
    (with the speed read too, where the campaign reads one: built when that read exists)."""
    steps: list[Step] = []
    for a in c.arm_list():
        d, engine = _arm_dir(c, out, a), _engine_flags(a)
        prof = str(_arm_profile(c, out, a, host))
        if c.speed_loads:
            steps.append(("score", d / "val-read" / "report.json",
                          lambda d=d, engine=engine, prof=prof: [
                              "report", "--profile", prof, *engine, "--cpu-speed", repr(_read_speed(d)), "--sweep",
                              str(d / "val" / "sweep.jsonl"), "--predicted", str(d / "predicted-read.json"),
                              "--out", str(d / "val-read")]))
        steps.append(("validate", d / "val" / "report.json",
                      ["validate", "--profile", prof, "--base-url", urls[a.name], *engine, *given, "--concurrency",
                       *map(str, a.held_out), "--repeats", str(c.repeats), "--out", str(d / "val")]))
        steps.append(("score", d / "val-predicted" / "report.json",
                      ["report", "--profile", prof, *engine, "--sweep", str(d / "val" / "sweep.jsonl"),
                       "--predicted", str(d / "predicted.json"), "--out", str(d / "val-predicted")]))
    return steps


def _run_step(args, argv: list[str]) -> int:
    """One step, given as the command a user would type: its command line parsed and resolved into that command's
    request, which runs as the command runs it (_STEP_RUNS); its rc, an error one line."""
    return args.guarded(argv[0], lambda: _STEP_RUNS[argv[0]](args.parse_command(argv), ["maskcost", *argv]))


def _calibrate(ns, command: list[str]) -> int:
    """A calibrate step: a calibration (validate/calibration.py), or --check of a profile it made."""
    from .calibrate import calibration_request, check_profile, run_calibration
    return check_profile(ns.check) if ns.check else run_calibration(calibration_request(ns, command=command))


def _sweep(ns, command: list[str]) -> int:
    """A sweep step (validate/sweep.SweepRequest: it appends and resumes)."""
    from .common import _entries, sweep_request
    from .sweep import run_sweep_request
    return run_sweep_request(sweep_request(ns, Path(ns.out), _entries(ns)))


def _predict(ns, command: list[str]) -> int:
    """A predict step (cli/predict.PredictRequest: its --json names the step's command)."""
    from .predict import predict_request, run_prediction
    return run_prediction(predict_request(ns, command))


def _report(ns, command: list[str]) -> int:
    """A report (score) step (cli/report.ReportRequest)."""
    from .report import report_request, run_report
    return run_report(report_request(ns))


def _validate(ns, command: list[str]) -> int:
    """A validate step: its sweep, then the report on it (cli/validate.py)."""
    from .validate import cmd_validate
    return cmd_validate(ns)


_STEP_RUNS: dict[str, Callable[..., int]] = {"calibrate": _calibrate, "sweep": _sweep, "predict": _predict,
                                            "report": _report, "validate": _validate}


def _execute(c, path: Path, out: Path, steps: list[Step], run: Callable[[list[str]], int],
             reg: Path | None) -> int:
    """Run the steps in order with `run` (_run_step: a step is the command a user would type), each logged to
    out/steps.txt with its rc and wall time; a step whose output exists is not run again (a run resumes).
    The first failing step's rc, else 0."""
    from .. import __version__
    from ..validate.campaign import digest
    log = out / "steps.txt"
    with log.open("a") as f:
        f.write(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} campaign {c.name} digest {digest(path)} "
                f"maskcost {__version__} registration {reg or 'none (--unregistered)'}\n")
    for name, done, argv in steps:
        if done is not None and done.exists():
            print(f"campaign {c.name}: {name}: {done} exists, not run again")
            continue
        argv = argv() if callable(argv) else argv  # built when its inputs exist (the speed read)
        print(f"campaign {c.name}: {name}: maskcost {' '.join(argv)}", flush=True)
        t0 = time.monotonic()
        rc = run(argv)
        with log.open("a") as f:
            f.write(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {name} rc {rc} "
                    f"{time.monotonic() - t0:.1f} s: maskcost {' '.join(argv)}\n")
        if rc:
            print(f"maskcost campaign: error: step {name} failed (rc {rc}); what finished is in {out}; run again to "
                  f"resume", file=sys.stderr)
            return rc
    return 0


def _host_profile(c, path: Path, out: Path) -> Path:
    """The profile the arms are predicted from: the one calibrated into the run folder, the shipped one
    of the first arm's engine, or a file beside the campaign."""
    if not c.profile:
        return out / "host.json.gz"
    if c.profile == "shipped":
        from ..model.engines import shipped_profile_path
        server = c.arm_list()[0].server
        return shipped_profile_path([server.engine], server.engine_version)
    if not (path.parent / c.profile).is_file():
        from .common import UsageError
        raise UsageError(f"campaign run: {path}: profile {c.profile}: no such file beside the campaign (a profile "
                         f"an earlier campaign calibrates: run that one first)")
    return path.parent / c.profile


def _profile_holds(c, path: Path, host: Path) -> None:
    """A campaign from a profile made elsewhere scores with validate and report, which price the profile's
    own schemas: every schema file must be one the profile holds (same id, same content)."""
    from ..calibrate.schemas import load_schema_file
    from ..profile import load_profile, schema_sha256
    from .common import UsageError
    p = load_profile(host)
    for f in c.files(path.parent)[0]:
        e = load_schema_file(f)
        if p.schema_sha256.get(e.schema_id) != schema_sha256(e.schema):
            raise UsageError(f"campaign run: {f}: not a schema profile {p.name} holds (id {e.schema_id!r}, the same "
                             f"content): validate and report price the profile's own schemas; calibrate it first")


def _speed_steps(c, out: Path, host: Path, url: str, given: list[str], requests: list[str]) -> list:
    """The README's way to read the host's speed: a short sweep of the first server, its report against
    the profile, and every arm's held-out loads predicted at the median speed it gives."""
    first = c.arm_list()[0]
    sweep, rep = out / "speed" / "sweep.jsonl", out / "speed" / "report.json"
    steps: list = [("speed", None, ["sweep", "--base-url", url, *given, "--concurrency", *map(str, c.speed_loads),
                                    "--label", "speed", "--out", str(sweep)]),
                   ("speed", rep, ["report", "--profile", str(_arm_profile(c, out, first, host)), *_engine_flags(first),
                                   "--sweep", str(sweep), "--out", str(rep.parent)])]
    for a in c.arm_list():
        d = _arm_dir(c, out, a)
        steps.append(("speed", d / "predicted-read.json",
                      ["predict", "--profile", str(_arm_profile(c, out, a, host)), *_engine_flags(a), *requests,
                       "--concurrency", *map(str, a.held_out), *a.predict_args, "--cpu-speed-from-report", str(rep),
                       "--json", str(d / "predicted-read.json")]))
    return steps


def _read_speed(d: Path) -> float:
    """The CPU speed predicted-read.json was made at (what report --predicted must run at to match it)."""
    return float(json.loads((d / "predicted-read.json").read_text())["cpu_speed_from_report"]["median"])


# what each command an arm's engine flags go to needs besides them, to parse (_check_engine_args)
_REQUIRED = {"predict": [], "validate": ["--base-url", "URL", "--out", "DIR"], "report": ["--sweep", "S", "--out", "D"]}


def _check_engine_args(c, argv_problem: Callable[[list[str]], str]) -> None:
    """Each arm's engine flags are ones predict, validate and report all take, and its predict flags ones predict
    takes (`argv_problem`: the CLI parser's word on a command line): checked when the campaign is registered and
    before it runs, not met as a failed step after the device time spent before it."""
    from .common import UsageError
    for a in c.arm_list():
        for cmd, more in _REQUIRED.items():
            flags = _engine_flags(a) + (list(a.predict_args) if cmd == "predict" else [])
            if problem := argv_problem([cmd, *flags, *more]):
                raise UsageError(f"campaign {c.name}: arm {a.name}: maskcost {cmd} refuses its flags "
                                 f"{' '.join(flags)}: {problem}")


def _engine_flags(a) -> list[str]:
    """The engine an arm's predict, validate and report model: its server's, and its own flags."""
    sv = a.server
    return ["--engine", sv.engine, "--engine-version", sv.engine_version, "--backend", sv.backend,
            "--max-num-seqs", str(sv.max_num_seqs), *a.engine_args]


def _arm_dir(c, out: Path, a) -> Path:
    """Where an arm's files go: the run's folder for a campaign of one server, else its own folder."""
    return out if not c.arms else out / a.name


def _arm_profile(c, out: Path, a, host: Path) -> Path:
    """An arm's profile: its own (a sync curve or fitted rows on top of `host`), or `host` as it is."""
    return _arm_dir(c, out, a) / "profile.json.gz" if (a.profile == "sync" or a.fit_loads) else host


def _score_run(c, out: Path, reg: Path | None) -> int:
    """The registered rule on a run folder's reports (each arm's val/, and val-predicted/ where it exists):
    score.json, with the registration it was scored under (None: run --unregistered)."""
    from ..validate.campaign import score
    reports = {}
    for a in c.arm_list():
        d = _arm_dir(c, out, a)
        try:
            rep = json.loads((d / "val" / "report.json").read_text())
        except OSError:
            raise ValueError(f"campaign score: no {d / 'val' / 'report.json'} (run the campaign first)") from None
        pr, rd = d / "val-predicted" / "report.json", d / "val-read" / "report.json"
        reports[a.name] = (rep, json.loads(pr.read_text()) if pr.exists() else None,
                           json.loads(rd.read_text()) if rd.exists() else None)
    doc = {**score(c, reports), "registration": None if reg is None else str(reg)}
    (out / "score.json").write_text(json.dumps(doc, indent=1))
    _print_score(doc)
    return 0


def _print_score(doc) -> None:
    sec = doc["secondary_median_abs_error_pct"]
    print(f"campaign {doc['campaign']}: median |{doc['metric']} error| {doc['primary_median_abs_error_pct']:.1f}% over "
          f"{doc['points']} held-out points, bar {doc['bar_pct']:g}%: {'met' if doc['met'] else 'MISSED'}"
          + (f"; against predicted.json {sec:.1f}%" if sec is not None else "")
          + ("" if doc.get("registration") else " (unregistered: not a pre-registered check)"))
    iv, rd = doc.get("interval"), doc.get("read")
    if iv:
        bar = "" if iv["min_inside"] is None else f", bar {iv['min_inside']}: {'met' if iv['met'] else 'MISSED'}"
        print(f"  80% interval of predicted.json: {iv['inside']} of {iv['points']} points inside{bar}")
    if rd:
        bar = "" if rd["bar_pct"] is None else f", bar {rd['bar_pct']:g}%: {'met' if rd['met'] else 'MISSED'}"
        print(f"  with the speed read (predicted-read.json): median |error| {rd['median_abs_error_pct']:.1f}% over "
              f"{rd['points']} points{bar}")
    if len(doc["arms"]) > 1:
        for name, a in doc["arms"].items():
            m = a["median_abs_error_pct"]
            print(f"  arm {name}: {a['points']} points, median |error| " + (f"{m:.1f}%" if m is not None else "-"))


def cmd_campaign(args) -> int:
    from .. import __version__
    from ..validate.campaign import digest, load_campaign, registration
    if args.action == "register":
        _check_engine_args(load_campaign(args.campaign), args.argv_problem)
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
    c = load_campaign(args.campaign)
    return _score_run(c, Path(args.out or "."), _registered(Path(args.campaign), args.unregistered))


def add_parser(sub) -> None:
    p = sub.add_parser("campaign", help="a pre-registered live check from a campaign file: register it, run it "
                                        "against a live server, score it",
                       epilog="A campaign file is JSON: name, schemas (files beside it) or tools, tokenizer, server "
                              "{engine, engine_version, backend, max_num_seqs, flags, env}, held_out (the loads "
                              "scored), metric, bar_pct, repeats, calibrate_args; or arms (several servers, each with "
                              "its own name, server and held_out); profile (shipped or a file: calibrate nothing) "
                              "with speed_loads, read_bar_pct, interval_min_inside. Examples: "
                              "validation/*/campaign*.json; every field: maskcost/validate/campaign.py.")
    p.add_argument("action", choices=["register", "run", "score"],
                   help="register: write the registration; run: the three GPU-host commands and the score; "
                        "score: score a finished run again")
    p.add_argument("campaign", metavar="CAMPAIGN.json", help="the campaign file (validate/campaign.py)")
    p.add_argument("--base-url", nargs="+", metavar="URL|NAME=URL",
                   help="run: the live server; a campaign of several servers (arms): NAME=URL for each")
    p.add_argument("--stop-after", choices=STEPS, help="run: stop after this step (a later run resumes; "
                                                       "default: every step and the score)")
    p.add_argument("--out", metavar="PATH", help="register: the registration file (default: print it); run and "
                                                 "score: the run's folder")
    p.add_argument("--unregistered", action="store_true",
                   help="run and score: go on without a registration beside the campaign (the run's steps.txt and "
                        "score.json say so); default: refuse it")
    p.set_defaults(func=cmd_campaign)
