"""`maskcost report` (predicted vs measured for finished sweeps) and `maskcost fit` (the campaign
tools on them: in-engine and API-server fits, the speed-reading backtests)."""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from .engine_args import (Speeds, _add_engine_args, _add_speed_source, _engine_configs, _profile, add_host_args,
                          given_or_own_speeds, one_server, with_async_off_costs)


@dataclass(frozen=True)
class FitTools:
    """`maskcost fit`'s campaign tools on finished sweeps (its flags of the same names; all off: `report`)."""
    fit_engine_fill: str | None = None
    fit_frontend: str | None = None
    fit_serial_by_rows: bool = False
    fit_with_loop: bool = False
    speed_from_meter: bool = False
    speed_from_probe: bool = False
    speed_from_earlier: bool = False
    speed_source: str = "itl"


@dataclass(frozen=True)
class ReportRequest:
    """A report resolved once from report's (or fit's) flags (report_request): the sweeps' points, the profile and the
    server's engine config the model runs them with and at what CPU speed, and what it writes; run_report runs it."""
    profile: Any
    cfg: Any  # model.config.EngineConfig: one server's (one_server)
    measured: tuple  # records.SweepSummary: every point of the sweeps
    speed: float  # the CPU speed the points run at (_report_speed)
    sweep: tuple[str, ...]  # the sweep files, as given
    out: str
    title: str
    requests_factor: int  # requests of each simulated point, per client
    predicted: str | None = None  # a `predict --json` file made before the sweep
    predicted_points: tuple | None = None  # its points, checked
    score_off: bool = False
    probe: str | None = None
    hostmeter: str | None = None
    probed: tuple[str, ...] = ()  # the --speed-from-* re-runs given (_fit_flags)
    fit: FitTools = FitTools()  # the campaign tools: off for `report`

    def __post_init__(self) -> None:
        if self.fit.speed_from_meter and not self.hostmeter:
            raise ValueError("--speed-from-meter: give --hostmeter FILE (the meter that ran beside the sweeps)")


# what `report` runs with: the campaign tools (`fit`) off
FIT_OFF = asdict(FitTools())


def _add_report_args(r: argparse.ArgumentParser) -> None:
    _add_engine_args(r)
    add_host_args(r)
    r.add_argument("--sweep", nargs="+", required=True, metavar="SWEEP.jsonl",
                   help="the measured points (maskcost sweep or validate)")
    r.add_argument("--out", required=True, metavar="DIR", help="where report.md, report.json and the plot go")
    r.add_argument("--title", default="maskcost: predicted vs measured", help="the report's title")
    r.add_argument("--requests-factor", type=int, default=4, help="requests per simulated point, per client")
    r.add_argument("--predicted", metavar="PREDICT.json", help="compare with the points of a `maskcost predict "
                                                               "--json` file made before the sweep, not a new run")
    r.add_argument("--cpu-speed-from-sweep", action="store_true", help="--cpu-speed = the profile's bench_us / "
                   "the sweep's (recorded by sweep --host-bench on the server's machine)")
    r.add_argument("--score-off", action="store_true", help="score the schema-off points too (held out: prompts "
                                                            "or loads the forward curve was not calibrated on)")
    r.add_argument("--probe", metavar="DIR", help="in-server probe records (maskcost probe-site) of the sweeps' "
                                                  "server: the engine's own step timings beside the model's")
    r.add_argument("--hostmeter", metavar="FILE", help="the `maskcost hostmeter` file that ran beside the sweeps: "
                                                       "the host's speed, steal and the server's threads per point")


def _fit_flags(args) -> list[str]:
    """The --speed-from-* flags given (the probed re-run), after refusing the fit flags that do not go
    together and a grid flag given several values (a ValueError naming the flag)."""
    one_server(args)
    probed = [f for f, on in (("--speed-from-probe", args.speed_from_probe),
                              ("--speed-from-earlier", args.speed_from_earlier)) if on]
    needs_probe = args.speed_from_probe or (args.speed_from_earlier and args.speed_source == "fill")
    if probed and (len(probed) > 1 or (needs_probe and not args.probe) or args.speed_from_meter
                   or args.fit_engine_fill):
        raise ValueError(f"{probed[0]}: give --probe DIR{' (or --speed-source itl)' if args.speed_from_earlier else ''}, "
                         f"and none of --speed-from-meter, --fit-engine-fill, the other --speed-from-*")
    if args.fit_frontend and (args.fit_engine_fill or args.predicted or probed or args.speed_from_meter):
        raise ValueError("--fit-frontend: one calibration at a time, the model run now at --cpu-speed: none of "
                         "--fit-engine-fill, --predicted, --speed-from-*")
    for flag, on in (("--fit-with-loop", args.fit_with_loop), ("--fit-serial-by-rows", args.fit_serial_by_rows)):
        if on and not args.fit_engine_fill:
            raise ValueError(f"{flag}: only with --fit-engine-fill OUT_PROFILE (it changes how the fit reads the probe)")
    return probed


def _report_speed(args, profile, measured: list[dict]) -> Speeds:
    """The speed the model runs the points at: --cpu-speed, else the sweep's bench against the profile's
    (--cpu-speed-from-sweep), else the profile's measured speed (and its pool speed), else 1."""
    if not args.cpu_speed_from_sweep:
        return given_or_own_speeds(args, profile)
    import statistics
    benches = [s.provenance["client_host"]["bench_us"] for s in measured
               if "bench_us" in s.provenance["client_host"]]
    if not benches:
        raise ValueError(f"--cpu-speed-from-sweep: no point of {', '.join(args.sweep)} carries bench_us "
                         f"(sweep with --host-bench)")
    speed = profile.host.bench_us / statistics.median(benches)
    print(f"cpu speed vs the profile's host: {speed:.3f} (bench_us {statistics.median(benches):.0f} "
          f"here, {profile.host.bench_us:.0f} there)")
    return Speeds((speed,))


def _fit_frontend(req: ReportRequest, profile):
    """report --fit-frontend OUT: the structured request's API-server cost fitted on the schema-on points,
    written to OUT; returns the profile with it."""
    from ..calibrate.engine import fit_frontend_structured
    from ..profile import save_profile
    fw0 = profile.forward
    cfg, speed = req.cfg, req.speed
    fw = fit_frontend_structured(profile, cfg, list(req.measured), log=lambda m: print(m, file=sys.stderr))
    note = (f"{fw.frontend_structured_ms:.2f} ms more per structured request (was {fw0.frontend_structured_ms:.2f}; "
            f"{fw.frontend_request_ms:.2f} ms per request), fitted on the schema-on TTFT and running counts of "
            f"{' '.join(req.sweep)} ({cfg.backend}, --cpu-speed {speed:.3f}; calibrate.engine.fit_frontend_structured)")
    profile = replace(profile, forward=replace(fw, source=f"{fw.source} API server, structured requests: {note}."),
                      provenance={**profile.provenance, "frontend": note})
    save_profile(profile, req.fit.fit_frontend)
    print(f"wrote {req.fit.fit_frontend}: API server {note}")
    return profile


def _at_read_speeds(req: ReportRequest, rows, profile, probe):
    """The rows again, each schema-on point at the speed read from the measurements (--speed-from-probe:
    its own in-engine fill speed; --speed-from-earlier: the median of the points before it), each keeping
    its ITL speed (which does not depend on the speed it was read at)."""
    from ..validate.hostspeed import earlier_median_speeds
    from ..validate.report import compare
    speed = req.speed
    if req.fit.speed_from_probe:
        fills = {json.dumps(r["windows"]): r["fill_speed"] for r in rows}
        for r in rows:
            if r["arm"] == "on" and r["fill_speed"] is None:
                print(f"--speed-from-probe: no in-engine fill in the windows of on {r['concurrency']}: "
                      f"it stays at --cpu-speed {speed:.3f}")
    else:
        fills = earlier_median_speeds(rows, speed, req.fit.speed_source)
    itl = {json.dumps(r.get("windows")): r["itl_speed"] for r in rows}
    rows = compare(profile, req.cfg, list(req.measured), requests_factor=req.requests_factor,
                   predicted=_listed(req.predicted_points), score_off=req.score_off,
                   speed_of=lambda w: fills.get(json.dumps(w)) or speed)
    if probe is not None:
        from ..validate.inengine import attach
        attach(rows, probe)
    for r in rows:
        r["itl_speed"] = itl.get(json.dumps(r.get("windows")))
    return rows


def _fit_engine_fill(req: ReportRequest, profile, rows, probe) -> None:
    """report --fit-engine-fill OUT: the in-engine fill factors fitted on the probe's timings, written to OUT."""
    from ..profile import save_profile
    from ..validate.inengine import describe, fit_engine_fill
    cfg = req.cfg
    at = "the meter speed of each point" if req.fit.speed_from_meter else f"--cpu-speed {req.speed:.3f}"
    fitted = fit_engine_fill(profile, cfg.backend, rows, f"in-engine grammar_bitmask (maskcost probe {req.probe}) "
                             f"over the model's fill at {at}, sweeps {' '.join(req.sweep)}", probe,
                             cfg.policy.fill_pool_lanes(cfg), req.fit.fit_with_loop,  # the probed server's pool
                             req.fit.fit_serial_by_rows)
    save_profile(fitted, req.fit.fit_engine_fill)
    print(f"wrote {req.fit.fit_engine_fill}: {cfg.backend} {describe(fitted.backends[cfg.backend].engine_fill)}")


def _predicted_points(path: str) -> list:
    """The points of a `maskcost predict --json` file, checked (maskcost.point.Point.from_json): a one-line error
    where it is not one."""
    from ..inputs import read_json
    from ..point import Point
    doc = read_json(path, "--predicted ")
    points = doc.get("points") if isinstance(doc, dict) else None
    if not isinstance(points, list):
        raise ValueError(f"--predicted {path}: not a `maskcost predict --json` file (no list of points)")
    return [Point.from_json(q, f"--predicted {path}: point {i}") for i, q in enumerate(points)]


def _listed(points: tuple | None) -> list | None:
    return None if points is None else list(points)


def report_request(args) -> ReportRequest:
    """report's (or fit's) flags checked and resolved once into its request: the profile, the sweeps' points (read
    now), the speed the model runs them at and the server's engine config."""
    from ..validate.sweep import read_summaries
    probed = _fit_flags(args)
    profile = _profile(args)
    measured = [s for p in args.sweep for s in read_summaries(p)]
    if not measured:
        raise ValueError(f"--sweep {' '.join(args.sweep)}: no points (a `maskcost sweep` file has one line a "
                         f"finished point)")
    if not any(s.requests > s.errors for s in measured):
        raise ValueError(f"--sweep {' '.join(args.sweep)}: no point has a request that finished: nothing to score")
    speeds = _report_speed(args, profile, measured)
    cfg = _engine_configs(args, profile, speeds)[0]  # (one: one_server)
    profile = with_async_off_costs(profile, [cfg])
    predicted = _predicted_points(args.predicted) if args.predicted else None
    if args.fit_engine_fill and (predicted is not None or not args.probe):
        raise ValueError("--fit-engine-fill: give --probe DIR and no --predicted (the model runs now, "
                         "without the profile's own engine-fill factors)")
    if args.fit_engine_fill and not cfg.policy.probe_targets:
        raise ValueError(f"--fit-engine-fill: {cfg.engine} {cfg.policy.version} has no in-server probe "
                         f"(model/engines.py probe_targets)")
    return ReportRequest(profile, cfg, tuple(measured), speeds.cpu[0], tuple(args.sweep), args.out, args.title,
                         args.requests_factor, args.predicted, None if predicted is None else tuple(predicted),
                         args.score_off, args.probe, args.hostmeter, tuple(probed),
                         FitTools(**{k: getattr(args, k) for k in FIT_OFF}))


def cmd_report(args) -> int:
    return run_report(report_request(args))


def run_report(req: ReportRequest) -> int:
    """The model run on the sweeps' points (or `predicted`'s taken), scored against them and written to `out`
    (report.md, report.json, the plot); with the campaign tools, the profile they fit written too."""
    from ..validate.report import compare, write_report
    profile, cfg, measured = req.profile, req.cfg, list(req.measured)
    from ..validate.hostmeter import read_meter, speed_of
    meter = read_meter(req.hostmeter) if req.hostmeter else None
    if req.fit.fit_frontend:
        profile = _fit_frontend(req, profile)
    if req.fit.fit_engine_fill:
        from ..validate.inengine import without_engine_fill
        profile = without_engine_fill(profile, cfg.backend)
    rows = compare(profile, cfg, measured, requests_factor=req.requests_factor, predicted=_listed(req.predicted_points),
                   score_off=req.score_off, speed_of=speed_of(meter, profile.host.bench_us, "--speed-from-meter")
                   if req.fit.speed_from_meter else None)
    _warn_points(measured, profile, cfg)
    probe = None
    if req.probe:
        from ..validate.inengine import attach, read_probe
        probe = read_probe(req.probe)
        attach(rows, probe)
    if not req.fit.fit_engine_fill:  # (against the profile without its engine fill, a speed would mislead)
        from ..validate.hostspeed import attach_itl_speeds
        attach_itl_speeds(rows, profile, cfg, measured, req.requests_factor)
    if req.probed:  # again, each schema-on point at a speed read from the measurements
        rows = _at_read_speeds(req, rows, profile, probe)
    if meter is not None:
        from ..validate import hostmeter
        hostmeter.attach(rows, meter)
    fit = req.fit
    read_at = "probe" if fit.speed_from_probe else f"earlier-{fit.speed_source}" if fit.speed_from_earlier else "meter"
    write_report(rows, Path(req.out), profile, cfg, list(req.sweep), req.title, req.predicted, read_at)
    if req.fit.fit_engine_fill:
        _fit_engine_fill(req, profile, rows, probe)
    return 0


def _warn_points(measured: list, profile, cfg) -> None:
    """Warnings on the sweep's points: failed requests, schemas the profile lacks."""
    failed = [s for s in measured if s.errors]
    if failed:
        which = ", ".join(f"{s.point}: {s.errors} of {s.requests}" for s in failed[:4])
        print(f"warning: {len(failed)} point(s) of the sweep had failed requests ({which}"
              f"{' ...' if len(failed) > 4 else ''}): their figures are of the requests that finished")
    known = set(profile.schema_ids(cfg.backend))
    unknown = sorted({x for s in measured if s.arm == "on" for x in s.config.get("schemas") or ()} - known)
    if unknown:
        print(f"warning: the sweep's schemas {', '.join(unknown)} are not in the profile for {cfg.backend}: the "
              f"model runs its points without them (calibrate them to score the mix the server ran)")


def add_parser(sub) -> None:
    r = sub.add_parser("report", help="predicted vs measured for finished sweeps")
    _add_report_args(r)
    r.set_defaults(func=cmd_report, **FIT_OFF)

    f = sub.add_parser("fit", help="campaign tools on finished sweeps: fit a profile's in-engine and API-server "
                                   "terms, and backtest the rules that read a server's speed (writes a report too)")
    _add_report_args(f)
    f.add_argument("--fit-engine-fill", metavar="OUT_PROFILE", help="with --probe: write the profile with its "
                   "fill scaled to what the engine's probe timed on these points (calibration, not scoring)")
    f.add_argument("--fit-frontend", metavar="OUT_PROFILE", help="write the profile with the API server's extra "
                   "cost per structured request fitted on the sweeps' schema-on TTFT and running counts "
                   "(calibration, not scoring; the report then shows the fitted profile)")
    f.add_argument("--fit-serial-by-rows", action="store_true", help="with --fit-engine-fill: the serial fill "
                   "factor follows the step's rows (a power law fitted over the points' serial fills), not one median")
    f.add_argument("--fit-with-loop", action="store_true", help="with --fit-engine-fill: the engine thread's "
                   "work per step includes the busy loop's time outside the step function (the probe's "
                   "step_with_batch_queue), not only the schedule, launch, sample and update calls")
    f.add_argument("--speed-from-meter", action="store_true", help="with --hostmeter: each point at the speed "
                   "measured during its own windows (with --predicted: between the speeds of a predict grid)")
    f.add_argument("--speed-from-probe", action="store_true", help="with --probe: each schema-on point at the "
                   "speed at which the model's fill equals the fill the probe timed in the engine (a diagnostic: "
                   "what is left is the model's structure, what goes is the host's speed beyond its bench)")
    f.add_argument("--speed-from-earlier", action="store_true", help="each schema-on point at the median host "
                   "speed (--speed-source) of the points that ran before it (the first at --cpu-speed): how "
                   "`predict --cpu-speed-from-report` would have done on these sweeps")
    _add_speed_source(f)
    f.set_defaults(func=cmd_report)
