"""`maskcost predict`, `maskcost report` and `maskcost validate`."""
from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from .profile import Profile, default_profile_path, load_profile


def _profile(args) -> Profile:
    p = load_profile(args.profile or default_profile_path())
    for b in args.backend:
        if b not in p.backends:
            raise ValueError(f"--backend {b}: the profile '{p.name}' has no {b} costs (it has "
                             f"{', '.join(p.backends)}; llama.cpp profiles: --engine llamacpp --backend gbnf)")
    return p


def default_speed(profile: Profile) -> float:
    """The CPU speed a run takes without --cpu-speed: the server's own, read at calibration, where the
    profile has it (profile.measured_speed); else the profile host's (1.0)."""
    return profile.measured_speed.cpu_speed if profile.measured_speed is not None else 1.0


def _speed_line(profile: Profile) -> str:
    m = profile.measured_speed
    return (f"cpu speed: {m.words()}, the calibrated server's own, read from its engine's ITL at "
            f"{len(m.points)} points ({m.backend}; profile measured_speed)")


def _engine_configs(args, profile: Profile):
    from .model.config import EngineConfig
    cores_list = args.cores or [profile.host.nproc]
    out = []
    for engine in args.engine:
        for backend in args.backend:
            for mns in args.max_num_seqs:
                for cores in cores_list:
                    for cpu_count in (args.cpu_count or [profile.host.os_cpu_count]):
                        for k in args.spec_tokens:
                            for speed in args.cpu_speed or [default_speed(profile)]:
                                pool = getattr(args, "cpu_speed_pool", None)  # set where the profile's own ran
                                out.append(EngineConfig(engine=engine, backend=backend, max_num_seqs=mns,
                                                        cpu_count=cpu_count, usable_cores=cores,
                                                        async_scheduling=args.async_scheduling, spec_tokens=k,
                                                        spec_acceptance=args.spec_acceptance,
                                                        spec_draft_rate=args.spec_draft_rate,
                                                        spec_method=args.spec_method, cpu_speed=speed,
                                                        cpu_speed_pool=pool,
                                                        max_num_batched_tokens=args.max_num_batched_tokens))
    return out


def _workloads(args, schema_ids: tuple[str, ...]):
    from .model.config import Workload
    from .model.predict import default_requests
    loads = [("c", c) for c in (args.concurrency or [])] + [("r", r) for r in (args.rate or [])]
    if not loads:
        loads = [("c", c) for c in (1, 8, 32, 64, 128, 160, 192, 256)]
    return [Workload(concurrency=v if kind == "c" else None, rate_per_s=v if kind == "r" else None,
                     requests=args.requests or default_requests(v if kind == "c" else None),
                     prompt_tokens=args.prompt_tokens, prompt_cached_tokens=args.prompt_cached_tokens,
                     prompt_lengths=args.prompt_lengths,
                     output_tokens=args.output_tokens,
                     unstructured_lengths=args.unstructured_lengths,
                     structured_fraction=args.structured_fraction, schemas=schema_ids,
                     unique_schemas=args.unique_schemas, seed=args.seed) for kind, v in loads]


def _fmt(v: Any, nd: int = 1) -> str:
    return "-" if v is None else f"{v:.{nd}f}"


def print_table(points: list[dict[str, Any]]) -> None:
    band = any("band" in p for p in points)
    hdr = (f"{'engine':9}{'backend':9}{'mns':>5}{'cores':>6}{'conc':>6}{'running':>8}{'ITL on':>9}"
           + (f"{'band':>14}" if band else "") + f"{'p50':>8}"
           f"{'p99':>8}{'ITL off':>9}{'overhd%':>9}{'tok/s on':>10}{'tok/s off':>10}{'TTFT p50':>9}"
           f"{'fill/step':>10}{'pool':>6}")
    print(hdr)
    for p in points:
        b = p["breakdown"]
        print(f"{p['engine']:9}{p['backend']:9}{p['max_num_seqs']:>5}{p['cores']:>6}"
              f"{p['concurrency'] if p['concurrency'] is not None else 'r' + str(p['rate_per_s']):>6}"
              f"{_fmt(p['running_mean']):>8}{_fmt(p['itl_ms_mean'], 2):>9}" + (f"{_band(p):>14}" if band else "") +
              f"{_fmt(p['itl_ms_p50'], 2):>8}"
              f"{_fmt(p['itl_ms_p99'], 2):>8}{_fmt(p['off']['itl_ms_mean'], 2):>9}{_fmt(p['overhead_pct']):>9}"
              f"{_fmt(p['out_tok_per_s'], 0):>10}{_fmt(p['off']['out_tok_per_s'], 0):>10}"
              f"{_fmt(p['ttft_ms_p50']):>9}{_fmt(b['fill_ms'], 2):>10}{_fmt(100 * b['pool_step_fraction'], 0):>5}%")
    print("ITL in ms (mean/p50/p99, per output token); overhd% = ITL on / ITL off - 1; fill/step = host fill work "
          "per step in ms; pool = share of steps that used vLLM's fill pool" +
          ("; band = ITL on with the engine as fast / as slow as on the fastest / slowest server of the profile's "
           "host type measured, against their bench (profile.engine_speeds)" if band else ""))


def _band(p: dict[str, Any]) -> str:
    lo, hi = p["band"]["itl_ms_mean"] if "band" in p else (None, None)
    return f"{lo:.1f}-{hi:.1f}" if lo is not None and hi is not None else "-"


SOURCE_WORDS = {"itl": "ITL", "fill": "in-engine fill"}  # --speed-source, in what predict prints


def cmd_predict(args) -> int:
    from .model.predict import grid, plot_overhead
    profile = _profile(args)
    speed_from = None
    if args.cpu_speed_from_report:
        if args.cpu_speed:
            raise ValueError("--cpu-speed-from-report: give it or --cpu-speed, not both")
        from .validate.hostspeed import speed_from_reports
        speed, speeds = speed_from_reports(args.cpu_speed_from_report, profile, args.speed_source)
        args.cpu_speed = [speed]
        speed_from = {"reports": args.cpu_speed_from_report, "source": args.speed_source, "speeds": speeds,
                      "median": speed}
        print(f"cpu speed: {speed:.3f}, the median {SOURCE_WORDS[args.speed_source]} speed of {len(speeds)} points "
              f"({min(speeds):.3f}-{max(speeds):.3f}) of {', '.join(args.cpu_speed_from_report)}")
    elif not args.cpu_speed and profile.measured_speed is not None:
        print(_speed_line(profile))
        args.cpu_speed_pool = profile.measured_speed.pool_speed
    schema_ids = tuple(args.schema_id or ())
    local: list = []
    if args.schema:
        from .calibrate.local import add_local_schemas, describe
        profile, ids, local = add_local_schemas(profile, args.schema, args.backend)
        schema_ids += tuple(ids)
        for line in describe(local):
            print(line)
    if not schema_ids:
        schema_ids = tuple(sorted(set(profile.schema_ids(args.backend[0]))))
        # only schemas every requested backend could compile
        for b in args.backend[1:]:
            schema_ids = tuple(s for s in schema_ids if s in set(profile.schema_ids(b)))
    points = grid(profile, _engine_configs(args, profile), _workloads(args, schema_ids),
                  trace_out=Path(args.trace) if args.trace else None, band=args.band)
    print(f"profile: {profile.name} ({profile.host.cpu_model}, nproc {profile.host.nproc}; forward: "
          f"{profile.forward.source[:90]}...)")
    print_table(points)
    result = {"profile": {"name": profile.name, "created_utc": profile.created_utc, "host": profile.host.__dict__,
                          "provenance": profile.provenance},
              "command": "maskcost " + " ".join(os.sys.argv[1:]), "cpu_speed_from_report": speed_from,
              "local_schemas": [asdict(h) for h in local],
              "points": points}
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
        print(f"wrote {args.json}")
    png = args.png or (str(Path(args.json).with_suffix(".png")) if args.json else None)
    if png:
        plot_overhead(points, Path(png), f"maskcost predict, profile {profile.name}")
        print(f"wrote {png}")
    return 0


# ------------------------------------------------------------------ report / validate

def cmd_report(args) -> int:
    from .validate.report import compare, write_report
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
    profile = _profile(args)
    from .validate.sweep import read_summaries
    measured = [s for p in args.sweep for s in read_summaries(p)]
    if args.cpu_speed and len(args.cpu_speed) != 1:
        raise ValueError(f"--cpu-speed {' '.join(map(str, args.cpu_speed))}: report takes one speed (a grid is "
                         f"for predict; --speed-from-meter gives each point its own)")
    speed = args.cpu_speed[0] if args.cpu_speed else default_speed(profile)
    if not args.cpu_speed and not args.cpu_speed_from_sweep and profile.measured_speed is not None:
        print(_speed_line(profile))
        args.cpu_speed_pool = profile.measured_speed.pool_speed
    if args.speed_from_meter and not args.hostmeter:
        raise ValueError("--speed-from-meter: give --hostmeter FILE (the meter that ran beside the sweeps)")
    meter = None
    if args.hostmeter:
        from .validate.hostmeter import read_meter, speed_of
        meter = read_meter(args.hostmeter)
    if args.cpu_speed_from_sweep:
        import statistics
        benches = [s["provenance"]["client_host"]["bench_us"] for s in measured
                   if "bench_us" in s["provenance"]["client_host"]]
        if not benches:
            raise ValueError(f"--cpu-speed-from-sweep: no point of {', '.join(args.sweep)} carries bench_us "
                             f"(sweep with --host-bench)")
        speed = profile.host.bench_us / statistics.median(benches)
        print(f"cpu speed vs the profile's host: {speed:.3f} (bench_us {statistics.median(benches):.0f} "
              f"here, {profile.host.bench_us:.0f} there)")
    args.cpu_speed = [speed]
    cfg = _engine_configs(args, profile)[0]
    predicted = json.loads(Path(args.predicted).read_text())["points"] if args.predicted else None
    if args.fit_frontend:
        from .calibrate.engine import fit_frontend_structured
        from .profile import save_profile
        fw0 = profile.forward
        fw = fit_frontend_structured(profile, cfg, measured, log=lambda m: print(m, file=sys.stderr))
        note = (f"{fw.frontend_structured_ms:.2f} ms more per structured request (was {fw0.frontend_structured_ms:.2f}; "
                f"{fw.frontend_request_ms:.2f} ms per request), fitted on the schema-on TTFT and running counts of "
                f"{' '.join(args.sweep)} ({cfg.backend}, --cpu-speed {speed:.3f}; calibrate.engine.fit_frontend_structured)")
        profile = replace(profile, forward=replace(fw, source=f"{fw.source} API server, structured requests: {note}."),
                          provenance={**profile.provenance, "frontend": note})
        save_profile(profile, args.fit_frontend)
        print(f"wrote {args.fit_frontend}: API server {note}")
    if args.fit_engine_fill:
        if predicted is not None or not args.probe:
            raise ValueError("--fit-engine-fill: give --probe DIR and no --predicted (the model runs now, "
                             "without the profile's own engine-fill factors)")
        from .validate.inengine import without_engine_fill
        profile = without_engine_fill(profile, cfg.backend)
    rows = compare(profile, cfg, measured, requests_factor=args.requests_factor, predicted=predicted,
                   score_off=args.score_off, speed_of=speed_of(meter, profile.host.bench_us, "--speed-from-meter")
                   if args.speed_from_meter else None)
    from .validate.hostspeed import attach_itl_speeds, earlier_median_speeds
    probe = None
    if args.probe:
        from .validate.inengine import attach, read_probe
        probe = read_probe(args.probe)
        attach(rows, probe)
    if not args.fit_engine_fill:  # (against the profile without its engine fill, a speed would mislead)
        attach_itl_speeds(rows, profile, cfg, measured, args.requests_factor)
    if probed:  # again, each schema-on point at a speed read from the measurements
        if args.speed_from_probe:
            fills = {json.dumps(r["windows"]): r["fill_speed"] for r in rows}
            for r in rows:
                if r["arm"] == "on" and r["fill_speed"] is None:
                    print(f"--speed-from-probe: no in-engine fill in the windows of on {r['concurrency']}: "
                          f"it stays at --cpu-speed {speed:.3f}")
        else:
            fills = earlier_median_speeds(rows, speed, args.speed_source)
        itl = {json.dumps(r.get("windows")): r["itl_speed"] for r in rows}
        rows = compare(profile, cfg, measured, requests_factor=args.requests_factor, predicted=predicted,
                       score_off=args.score_off, speed_of=lambda w: fills.get(json.dumps(w)) or speed)
        if probe is not None:
            attach(rows, probe)
        for r in rows:  # a point's ITL speed does not depend on the speed it was read at
            r["itl_speed"] = itl.get(json.dumps(r.get("windows")))
    if meter is not None:
        from .validate import hostmeter
        hostmeter.attach(rows, meter)
    write_report(rows, Path(args.out), profile, cfg, args.sweep, args.title, args.predicted,
                 "probe" if args.speed_from_probe else f"earlier-{args.speed_source}" if args.speed_from_earlier
                 else "meter")
    if args.fit_engine_fill:
        from .profile import save_profile
        from .model.engines import vllm_fill_pool_workers
        from .validate.inengine import describe, fit_engine_fill
        fitted = fit_engine_fill(profile, cfg.backend, rows, f"in-engine grammar_bitmask (maskcost probe {args.probe}) "
                                 f"over the model's fill at "
                                 f"{'the meter speed of each point' if args.speed_from_meter else f'--cpu-speed {speed:.3f}'}, sweeps "
                                 f"{' '.join(args.sweep)}", probe,
                                 min(vllm_fill_pool_workers(cfg.cpu_count), cfg.usable_cores), args.fit_with_loop,
                                 args.fit_serial_by_rows)
        save_profile(fitted, args.fit_engine_fill)
        print(f"wrote {args.fit_engine_fill}: {cfg.backend} {describe(fitted.backends[cfg.backend].engine_fill)}")
    return 0


def cmd_hostmeter(args) -> int:
    from .calibrate.tokenizer import load_vocab
    from .validate.hostmeter import run_meter
    if not args.interval_s > 0:
        raise ValueError(f"--interval-s {args.interval_s}: must be > 0")
    print(f"hostmeter: appending to {args.out} every {args.interval_s} s (stop with Ctrl-C or kill)", flush=True)
    try:
        run_meter(Path(args.out), load_vocab(args.tokenizer), args.match, args.interval_s, args.duration_s)
    except KeyboardInterrupt:
        pass
    return 0


def cmd_probe_site(args) -> int:
    from .validate.probe import ENV_DIR, write_site
    path = write_site(args.dir)
    print(f"wrote {path}: put {args.dir} first on the server's PYTHONPATH and set {ENV_DIR}=FOLDER; "
          f"then `maskcost report --probe FOLDER` sets the engine's own timings beside the model's")
    return 0


def cmd_validate(args) -> int:
    from .cli_common import _entries
    from .validate.sweep import PointSpec, run_sweep
    entries = _entries(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    pts = [PointSpec(a, c, r, max(args.min_requests, args.rounds * c))
           for r in range(args.repeats) for c in (args.concurrency or [1, 8, 32]) for a in ("on", "off")]
    run_sweep(args.base_url, pts, entries, out / "sweep.jsonl", max_tokens=args.max_tokens,
              off_tokens=args.off_tokens, unique=args.unique_schemas, seed=args.seed,
              prompt_pad=args.prompt_pad, unique_prompts=args.unique_prompts, client_procs=args.client_procs,
              host_bench=args.host_bench)
    # the report on it: report's own options at their defaults, validate's where it has them
    ap = argparse.ArgumentParser()
    add_parsers(ap.add_subparsers(dest="cmd"))
    report_args = ap.parse_args(["report", "--sweep", str(out / "sweep.jsonl"), "--out", str(out)])
    merged = argparse.Namespace(**{**vars(report_args), **vars(args)})
    merged.cpu_speed_from_sweep = args.host_bench
    return cmd_report(merged)


def _add_speed_source(p: argparse.ArgumentParser) -> None:
    p.add_argument("--speed-source", choices=("itl", "fill"), default="itl",
                   help="a point's host speed: 'itl', the CPU speed at which the model's ITL equals the engine's "
                        "(every report has it); 'fill', the speed at which the model's fill equals the fill the "
                        "probe timed in the engine (reports made with --probe) (default: itl)")


def _add_engine_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--profile", help="profile file (default: the embedded H200 / vLLM 0.25.1 profile)")
    p.add_argument("--engine", nargs="+", default=["vllm"], choices=["vllm", "sglang", "llamacpp"])
    p.add_argument("--backend", nargs="+", default=["xgrammar"], choices=["xgrammar", "guidance", "gbnf"],
                   help="gbnf: llama.cpp's own grammar sampler (a black-box profile)")
    p.add_argument("--max-num-seqs", type=int, nargs="+", default=[256])
    p.add_argument("--cores", type=int, nargs="+", help="cores the server may use (default: the profile host's)")
    p.add_argument("--cpu-count", type=int, nargs="+", help="cpu_count the engine sees (default: the profile host's)")
    p.add_argument("--cpu-speed", type=float, nargs="+",
                   help="single-thread speed relative to the profile host (default: the server's own speed where "
                        "the profile measured it at calibration, else 1; predict: a grid of speeds is allowed)")
    p.add_argument("--spec-tokens", type=int, nargs="+", default=[0])
    p.add_argument("--spec-acceptance", type=float, default=0.7)
    p.add_argument("--spec-draft-rate", type=float, default=1.0,
                   help="fraction of decode rows with drafts per step (EAGLE 1; ngram: as measured)")
    p.add_argument("--spec-method", default="ngram", choices=["ngram", "eagle"])
    p.add_argument("--async-scheduling", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("--max-num-batched-tokens", type=int, default=8192,
                   help="token budget of one step: decode rows + prefill chunks (vLLM's default on an H200: 8192)")


# what `report` runs with: the campaign tools (`fit`) off
FIT_OFF = {"fit_engine_fill": None, "fit_frontend": None, "fit_serial_by_rows": False, "fit_with_loop": False,
           "speed_from_meter": False, "speed_from_probe": False, "speed_from_earlier": False, "speed_source": "itl"}


def _add_report_args(r: argparse.ArgumentParser) -> None:
    _add_engine_args(r)
    r.add_argument("--sweep", nargs="+", required=True, metavar="SWEEP.jsonl")
    r.add_argument("--out", required=True, metavar="DIR")
    r.add_argument("--title", default="maskcost: predicted vs measured")
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


def add_parsers(sub) -> None:
    p = sub.add_parser("predict", help="what-if grid from a profile (no GPU needed)")
    _add_engine_args(p)
    p.add_argument("--concurrency", type=int, nargs="+", help="closed-loop clients (default 1 8 32 64 128 160 192 256)")
    p.add_argument("--rate", type=float, nargs="+", help="open-loop Poisson arrivals per second")
    p.add_argument("--requests", type=int, help="requests per point (default max(200, 4 x concurrency))")
    p.add_argument("--prompt-tokens", type=int, default=200, help="prompt length of every request (tokens)")
    p.add_argument("--prompt-lengths", default="fixed", metavar="DIST",
                   help="prompt lengths per request: fixed (--prompt-tokens), uniform:LO:HI, lognormal:MEDIAN:SIGMA")
    p.add_argument("--prompt-cached-tokens", type=int, default=0,
                   help="of which found in the prefix cache (a shared system prompt): not computed at prefill")
    p.add_argument("--output-tokens", type=int, help="fixed output length (default: where each JSON output ends)")
    p.add_argument("--unstructured-lengths", default="trace", metavar="DIST",
                   help="output lengths of requests without a schema (and of the schema-off arm): trace, "
                        "fixed:N, uniform:LO:HI, lognormal:MEDIAN:SIGMA")
    p.add_argument("--structured-fraction", type=float, default=1.0)
    p.add_argument("--schema", nargs="+", metavar="FILE", help="your schema files, traced on this host now")
    p.add_argument("--schema-id", nargs="+", metavar="ID", help="schemas of the profile (default: all)")
    p.add_argument("--unique-schemas", action="store_true", help="every request compiles its grammar")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", metavar="OUT.json")
    p.add_argument("--png", metavar="OUT.png", help="default: next to --json")
    p.add_argument("--trace", metavar="OUT.json", help="Chrome/Perfetto trace of the first point")
    p.add_argument("--cpu-speed-from-report", nargs="+", metavar="REPORT.json",
                   help="--cpu-speed = the median host speed (--speed-source) over the points of `maskcost report` "
                        "files of the target server, read against the same profile: predict its other loads at "
                        "the speed its engine really ran at (docs/validation.md says how well this does)")
    _add_speed_source(p)
    p.add_argument("--band", action=argparse.BooleanOptionalAction, default=True,
                   help="each point also with the engine as fast / as slow as on the fastest / slowest server of the "
                        "profile's host type measured (profile engine_speeds; two more schema-on runs a point) "
                        "(default: on)")
    p.set_defaults(func=cmd_predict)

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

    m = sub.add_parser("hostmeter", help="beside a live server: the host's speed, CPU steal and the server's "
                                         "threads, once an interval, as JSON lines (Linux)")
    m.add_argument("--out", required=True, metavar="FILE.jsonl")
    m.add_argument("--tokenizer", default="llama3", help="bundled vocabulary or tokenizer folder (default llama3)")
    m.add_argument("--match", default="vllm", help="server processes: command line or name holds this")
    m.add_argument("--interval-s", type=float, default=1.0)
    m.add_argument("--duration-s", type=float, help="stop after this long (default: run until killed)")
    m.set_defaults(func=cmd_hostmeter)

    s = sub.add_parser("probe-site", help="write the in-server timing probe as DIR/sitecustomize.py")
    s.add_argument("dir", metavar="DIR")
    s.set_defaults(func=cmd_probe_site)

    v = sub.add_parser("validate", help="sweep a live server, then report predicted vs measured")
    _add_engine_args(v)
    from .cli_common import _add_schema_args
    _add_schema_args(v, ["flat", "bounded"])
    v.add_argument("--base-url", required=True)
    v.add_argument("--out", required=True, metavar="DIR")
    v.add_argument("--concurrency", type=int, nargs="+")
    v.add_argument("--repeats", type=int, default=2)
    v.add_argument("--rounds", type=int, default=3)
    v.add_argument("--min-requests", type=int, default=16)
    v.add_argument("--max-tokens", type=int, default=512)
    v.add_argument("--off-tokens", type=int, default=96)
    v.add_argument("--unique-schemas", action="store_true")
    from .cli_common import add_request_args
    add_request_args(v)
    v.add_argument("--probe", metavar="DIR", help="in-server probe records (maskcost probe-site) of the server: "
                                                  "the engine's own step timings beside the model's")
    v.add_argument("--title", default="maskcost validate: predicted vs measured")
    v.add_argument("--requests-factor", type=int, default=4)
    v.set_defaults(func=cmd_validate)
