"""Predicted vs measured: the model run on the very points a sweep measured, signed errors, MAPE,
the engine's own run-to-run spread beside each error, a Markdown report, a PNG and the JSON."""
from __future__ import annotations

import json
import statistics
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from ..point import OffArm, Point
from ..profile import Profile
from ..model.config import DEFAULT_ENGINE, EngineConfig
from ..model.engines import ENGINES, ServerMetrics
from ..model.measured import measured_workload, profile_schema_ids
from ..model.predict import run_point_band
from ..records import CLIENT_BUSY_PCT, SweepSummary, busy_client_pct, itl_ms


# an output shape this far from the profile's traces is flagged: their per-token costs replay other streams
LENGTH_FLAG = 0.10  # relative difference in mean output tokens
STRADDLE_FLAG_PTS = 2.0  # straddle rate, percentage points
STRADDLE_TEXTS = 200  # the sweep's outputs read for the straddle rate (a sample, for speed)


def output_shape(profile: Profile, backend: str, sweeps: list[str]) -> list[dict[str, Any]]:
    """Per schema, the sweep's valid schema-on outputs against the profile's traces of it: mean output
    tokens (the engine's usage count; a trace's tokens include the EOS) and the straddle rate of the
    tokens the engine streamed (Vocab.streamed_tokens; re-tokenized text for a record without its chunks,
    which is not the engine's stream and is not flagged). The straddle fields are None where the
    profile's vocabulary cannot be loaded here."""
    from ..calibrate.tokenizer import TokenizerError, profile_vocab
    from ..records import raw_records_path, read_raw_records
    got: dict[str, list[dict[str, Any]]] = {}
    for sw in sweeps:
        raw = raw_records_path(sw)
        if raw.exists():
            for d in read_raw_records(raw):
                if d.get("check") == "valid" and d.get("schema_id") and d.get("completion_tokens"):
                    got.setdefault(d["schema_id"], []).append(d)
    traces: dict[str, list] = {}
    for t in profile.backends[backend].traces if backend in profile.backends else ():
        traces.setdefault(t.schema_id, []).append(t)
    shared = sorted(set(got) & set(traces))
    vocab = None
    if shared:
        try:
            vocab = profile_vocab(profile.tokenizer, profile.vocab_size, profile.tokenizer_sha256)
        except (TokenizerError, ImportError):  # not here (a folder elsewhere, no bundled vocabulary): no rate
            vocab = None
    out = []
    for sid in shared:
        recs, ts = got[sid], traces[sid]
        tok = sum(len(t.straddle) for t in ts)
        row = {"schema_id": sid, "outputs": len(recs),
               "tokens_mean": statistics.mean(d["completion_tokens"] for d in recs),
               "profile_traces": len(ts), "profile_tokens_mean": tok / len(ts),
               "straddle_pct": None, "straddle_from": None,
               "profile_straddle_pct": 100.0 * sum(sum(t.straddle) for t in ts) / tok,
               "source": dict(profile.backends[backend].output_sources).get(sid)}
        if vocab is not None:
            sample = recs[:STRADDLE_TEXTS]
            streams = [vocab.streamed_tokens(d) for d in sample]
            engine = all(x is not None for x in streams)
            if not engine:  # some records without their chunks: all re-tokenized, one kind of stream
                streams = [vocab.encode(d["text"]) for d in sample]
            n = sum(len(x) for x in streams)
            row["straddle_pct"] = 100.0 * sum(i in vocab.straddle_ids for x in streams for i in x) / n if n else None
            row["straddle_from"] = "engine tokens" if engine else "re-tokenized text"
        row["length_diff"] = row["tokens_mean"] / row["profile_tokens_mean"] - 1
        row["flagged"] = abs(row["length_diff"]) > LENGTH_FLAG or (
            row["straddle_from"] == "engine tokens" and row["straddle_pct"] is not None
            and abs(row["straddle_pct"] - row["profile_straddle_pct"]) > STRADDLE_FLAG_PTS)
        out.append(row)
    return out


def output_shape_lines(shape: list[dict[str, Any]]) -> list[str]:
    def one(r: dict[str, Any]) -> str:
        st = "" if r["straddle_pct"] is None else \
            f", straddle {r['straddle_pct']:.1f}% of {r['straddle_from']} (the profile's {r['profile_straddle_pct']:.1f}%)"
        return (f"{r['schema_id']} {r['tokens_mean']:.0f} tokens over {r['outputs']} outputs (the profile's traces "
                f"{r['profile_tokens_mean']:.0f}, {100 * r['length_diff']:+.0f}%){st}")
    if not shape:
        return []
    flagged = [r for r in shape if r["flagged"]]
    head = ("- **Outputs unlike the profile's traces** (length off by more than "
            f"{100 * LENGTH_FLAG:.0f}% or straddle rate by more than {STRADDLE_FLAG_PTS:.0f} points: the model "
            "replays other token streams; `calibrate --base-url` traces the server's own outputs): "
            if flagged else "- Outputs against the profile's traces: ")
    return [head + "; ".join(one(r) for r in shape)]


def _series(s: SweepSummary) -> ServerMetrics:
    """The /metrics names of the engine a point's window was read from (records before the field: vLLM's)."""
    return ENGINES[s.engine.engine or DEFAULT_ENGINE].metrics


def _histogram_ms(ss: list[SweepSummary], field: str) -> float | None:
    """Mean per request over the points' windows of one of the engine's histograms (a ServerMetrics field), ms;
    None where the engine exports none or a window lacks it."""
    keyed = [(s.engine.counters, key) for s in ss
             if s.engine.counters is not None and (key := getattr(_series(s), field))]
    tot = [c.get(f"{key}_sum") for c, key in keyed]
    cnt = [c.get(f"{key}_count") for c, key in keyed]
    return 1e3 * sum(tot) / sum(cnt) if tot and None not in tot and None not in cnt and sum(cnt) else None


def server_ttft_ms(s: SweepSummary) -> float | None:
    """The engine's own mean TTFT over a point's window (its histogram, vLLM's: from the request's arrival
    in the API server to its first token there), without the client's share of the TTFT."""
    return _histogram_ms([s], "ttft_histogram")


METRICS = (  # (name in the report, measured getter, predicted key)
    ("ITL ms", itl_ms, "itl_ms_mean"),  # the engine's histogram; the client's where it has none (llama.cpp)
    ("client ITL ms", lambda s: s.itl_ms_mean, "itl_ms_mean"),
    ("TTFT p50 ms", lambda s: s.ttft_ms_p50, "ttft_ms_p50"),
    ("server TTFT ms", server_ttft_ms, "ttft_ms_mean"),  # None in prediction files made before it existed
    ("out tok/s", lambda s: s.out_tok_per_s, "out_tok_per_s"),
    ("running", lambda s: s.engine.running_mean, "running_mean"),
    # the GPU's busy fraction: NVML on the server's GPU (validate/gpubusy.py) against the forward's share
    # of the window in the model (a host-bound step: the GPU idles)
    ("GPU busy", lambda s: (s.engine.gpu_busy or {}).get("fraction"), "gpu_busy_fraction"),
    # the CPUs the server's processes kept busy (validate/servercpu.py, a sweep run on the server's machine)
    # against the engine's demand in the model (model/host_share.py: what replicas and quotas act on)
    ("server CPUs", lambda s: (s.engine.server_cpu or {}).get("cpus"), "cpu_demand"),
)


def _err(pred: float | None, meas: float | None) -> float | None:
    if pred is None or not meas:
        return None
    return 100.0 * (pred - meas) / meas


def committed_predictions(points: list[Point], cfg: EngineConfig) -> dict[int, dict[float, Point]]:
    """The points of a `maskcost predict --json` file made for this engine config, by concurrency,
    then by the CPU speed they were made at (a file may hold a grid of speeds). A field the file's
    config lacks was not a model input when it was written: it does not count."""
    want = {k: v for k, v in asdict(cfg).items() if k != "cpu_speed"}
    out: dict[int, dict[float, Point]] = {}
    for p in points:
        eng = p.config["engine"]
        if all(eng[k] == v for k, v in want.items() if k in eng):
            out.setdefault(p.concurrency, {})[eng.get("cpu_speed", 1.0)] = p
    if not out:
        have = sorted({json.dumps(p.config["engine"], sort_keys=True) for p in points})
        raise ValueError(f"--predicted: no point made for {json.dumps(want, sort_keys=True)} (the file has "
                         f"{len(have)} engine configs, e.g. {have[0] if have else 'none'})")
    return out


def at_speed(by_speed: dict[float, Point], speed: float) -> Point:
    """The prediction at `speed` from predictions made at several: the point made at it, or the
    scored metrics interpolated linearly in 1 / speed (CPU time scales with it) between the two
    speeds around it, the breakdown of the nearer one."""
    if speed in by_speed:
        return by_speed[speed]
    have = sorted(by_speed)
    if not have[0] < speed < have[-1]:
        raise ValueError(f"--predicted: no prediction at cpu speed {speed:.3f} (the file has "
                         f"{', '.join(f'{s:.3f}' for s in have)}; a speed between two of them is interpolated)")
    hi = next(s for s in have if s > speed)
    lo = have[have.index(hi) - 1]
    w = (1 / speed - 1 / lo) / (1 / hi - 1 / lo)

    def mix(a, b):  # (two Points, or two OffArms)
        keys = {key for _, _, key in METRICS if hasattr(a, key)}
        return replace(a if w < 0.5 else b, **{k: (1 - w) * getattr(a, k) + w * getattr(b, k) for k in keys
                                                if getattr(a, k) is not None and getattr(b, k) is not None})
    return replace(mix(by_speed[lo], by_speed[hi]), off=mix(by_speed[lo].off, by_speed[hi].off))


def compare(profile: Profile, cfg: EngineConfig, measured: list[SweepSummary],
            requests_factor: int = 4, predicted: list[Point] | None = None,
            score_off: bool = False, speed_of=None) -> list[dict[str, Any]]:
    """Measured points against the model: run now on the same points, or (`predicted`) the points of
    a prediction file committed before the measurement, unchanged. Schema-off points calibrate the
    forward curve and are not scored, unless `score_off` (a held-out prompt or load the forward
    curve never saw: longer prompts, unique prompts). `speed_of(windows)`: each point at the CPU
    speed measured during its own windows (hostmeter.speed_of) in place of cfg.cpu_speed. With
    `predicted`, a speed the file was not made at is interpolated between two it was (at_speed)."""
    before = committed_predictions(predicted, cfg) if predicted is not None else None
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for s in measured:
        key = (s.arm, s.concurrency, bool(s.config.get("unique_schemas")),
               tuple(s.config.get("schemas") or ()), s.config.get("prompt_pad", 0),
               bool(s.config.get("unique_prompts")))
        groups.setdefault(key, []).append(s)
    rows = []
    cache: dict = {}
    known = set(profile.schema_ids(cfg.backend))
    for (arm, conc, unique, schemas, pad, unique_prompts), ss in sorted(
            groups.items(), key=lambda kv: (kv[0][0], kv[0][4], kv[0][5], kv[0][1])):
        ids = profile_schema_ids(ss[0], known, cfg.backend)
        # the sweep windows (join the in-server probe and the host meter: validate/inengine.py,
        # validate/hostmeter.py)
        windows = [(s.engine.window_start_unix_s, s.engine.window_start_unix_s + s.engine.window_s)
                   for s in ss if s.engine.window_start_unix_s is not None]
        speed = speed_of(windows) if speed_of is not None else cfg.cpu_speed
        if before is not None:
            if conc not in before:
                if arm == "on":
                    raise ValueError(f"--predicted: no prediction at concurrency {conc} (it has {sorted(before)})")
                continue  # a schema-off point only measured (it calibrates, it is never scored)
            p = at_speed(before[conc], speed)
            pred = p if arm == "on" else p.off
        else:
            wl = measured_workload(ss, ids, max(200, requests_factor * conc))
            pred = run_point_band(profile, cfg if speed_of is None else replace(cfg, cpu_speed=speed,
                                                                                cpu_speed_pool=None), wl, cache)
        rows.append(_row(ss, pred, windows, speed, fitted=arm == "off" and not score_off))
    return rows


def _row(ss: list[SweepSummary], pred: Point | OffArm, windows: list, speed: float, fitted: bool) -> dict[str, Any]:
    """One report row: a group of measured points of one arm and config (their repeats), each metric measured
    against the model's `pred` (a schema-off row: the point's off arm, which has no breakdown, band or
    interval), with the windows, the speed it ran at and the server's own timings."""
    got = lambda key: getattr(pred, key, None)  # noqa: E731  (an off arm has no breakdown, band, interval)
    c = ss[0].config
    row: dict[str, Any] = {"arm": ss[0].arm, "concurrency": ss[0].concurrency,
                           "unique_schemas": bool(c.get("unique_schemas")), "repeats": len(ss),
                           "prompt_pad": c.get("prompt_pad", 0), "unique_prompts": bool(c.get("unique_prompts")),
                           "prompt_tokens": statistics.mean(s.prompt_tokens_mean for s in ss)
                           if all(s.prompt_tokens_mean for s in ss) else None,
                           "fitted": fitted,  # calibration points: not scored
                           "checks": ss[0].checks, "metrics": {},
                           "spec_acceptance": [s.engine.spec_acceptance for s in ss
                                               if s.engine.counters is not None] or None,
                           "spec_draft_rate": [s.engine.spec_draft_rate for s in ss
                                               if s.engine.counters is not None] or None}
    for name, get, pkey in METRICS:
        vals = [v for v in (get(s) for s in ss) if v is not None]
        meas = statistics.mean(vals) if vals else None
        spread = 100.0 * (max(vals) - min(vals)) / meas if len(vals) > 1 and meas else None
        row["metrics"][name] = {"measured": meas, "predicted": got(pkey),
                                "error_pct": _err(got(pkey), meas), "spread_pct": spread}
    row["windows"] = windows
    busy = [s.client_cpu_pct for s in ss if s.client_cpu_pct is not None]  # sweeps before it have none
    row["client_cpu_pct"] = max(busy) if busy else None
    ran = got("cpu_speed_ran")
    row["cpu_speed"] = speed if ran is None else ran  # a point in the pool regime: the pool's speed
    # the server's own per-request timings: TTFT from its arrival, queue and prefill inside the engine (ms)
    row["server_ms"] = _server_timings(ss)
    row["predicted_breakdown"] = asdict(got("breakdown")) if got("breakdown") is not None else None
    row["predicted_structured_rows"] = got("structured_rows_mean")
    row["predicted_overhead_pct"] = got("overhead_pct")
    # the engine as fast / as slow as on the servers of the profile's host type (profile.engine_speeds)
    band = got("band")
    row["itl_band_ms"] = list(band.itl_ms_mean) if row["arm"] == "on" and band is not None else None
    # the 80% interval of the model's measured errors (maskcost/interval.py), where the prediction has it
    pi = got("itl_ms_pi80")
    row["itl_pi80_ms"] = list(pi) if row["arm"] == "on" and pi is not None else None
    return row


def _server_timings(ss: list[SweepSummary]) -> dict[str, float]:
    """Mean per request over the points' windows, from the engine's histograms (ms; vLLM's): TTFT as the API
    server measures it (from its arrival), the engine's queue time and prefill time."""
    means = {name: _histogram_ms(ss, field) for name, field in
             (("ttft", "ttft_histogram"), ("queue", "queue_histogram"), ("prefill", "prefill_histogram"))}
    return {name: v for name, v in means.items() if v is not None}


def score(rows: list[dict[str, Any]], metric: str = "ITL ms") -> dict[str, Any]:
    errs = [r["metrics"][metric]["error_pct"] for r in rows
            if not r["fitted"] and r["metrics"][metric]["error_pct"] is not None]
    if not errs:
        return {"metric": metric, "points": 0}
    out = {"metric": metric, "points": len(errs), "median_abs_error_pct": statistics.median(abs(e) for e in errs),
           "mape_pct": statistics.mean(abs(e) for e in errs), "worst_error_pct": max(errs, key=abs)}
    banded = [r for r in rows if not r["fitted"] and r.get("itl_band_ms") and r["metrics"]["ITL ms"]["measured"]]
    if metric == "ITL ms" and banded:
        out["band_points"] = len(banded)
        out["inside_band"] = sum(lo <= r["metrics"]["ITL ms"]["measured"] <= hi
                                 for r in banded for lo, hi in [r["itl_band_ms"]])
    within = [r for r in rows if not r["fitted"] and r.get("itl_pi80_ms") and r["metrics"]["ITL ms"]["measured"]]
    if metric == "ITL ms" and within:
        out["interval_points"] = len(within)
        out["inside_interval"] = sum(lo <= r["metrics"]["ITL ms"]["measured"] <= hi
                                     for r in within for lo, hi in [r["itl_pi80_ms"]])
    return out


def _plot(rows: list[dict[str, Any]], path: Path, title: str) -> None:
    from ..plotting import batch_axis, save, subplots
    fig, ax = subplots(figsize=(7, 4.5))
    for arm, unique, color in (("on", False, "C0"), ("on", True, "C2"), ("off", False, "C1")):
        rs = sorted([r for r in rows if r["arm"] == arm and r["unique_schemas"] == unique], key=lambda r: r["concurrency"])
        if not rs:
            continue
        label = {"on": "schema on", "off": "schema off (fitted)"}[arm] + (" unique" if unique else "")
        m = rs and [r["metrics"]["ITL ms"] for r in rs]
        ax.plot([r["concurrency"] for r in rs], [x["measured"] for x in m], "o-", color=color, label=f"{label}: measured")
        ax.plot([r["concurrency"] for r in rs], [x["predicted"] for x in m], "x--", color=color, label=f"{label}: predicted")
        if all(r.get("itl_band_ms") for r in rs):
            ax.fill_between([r["concurrency"] for r in rs], *zip(*(r["itl_band_ms"] for r in rs)), color=color,
                            alpha=0.15, lw=0, label=f"{label}: band (servers measured)")
    batch_axis(ax, "offered concurrency")
    ax.set_yscale("log")
    ax.set_ylabel("ITL mean (ms): engine's own, or client's")
    ax.legend(fontsize=7)
    ax.set_title(title, fontsize=9)
    save(fig, path)


def _f(v: Any, nd: int = 1) -> str:
    return "-" if v is None else f"{v:.{nd}f}"


def _prompt(r: dict[str, Any]) -> str:
    if r.get("prompt_tokens") is None:
        return "-"
    return f"{r['prompt_tokens']:.0f}" + (" unique" if r.get("unique_prompts") else "")


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v:+.0f}"


# where a report's per-point speeds came from (compare's speed_of), in its CPU speed line
_EARLIER = ("the median of the speeds at which the model's {} equalled the engine's on the points that ran before "
            "it (the tracking rule, backtested: a point's own measurement is not used for it; the first point at "
            "--cpu-speed)")
SPEED_OF_TEXTS = {"meter": "the host meter's speed during it",
                  "regime": "the speed read for its fill: serial, or on the engine's fill pool (the profile's two)",
                  "probe": "the speed at which the model's fill equals the fill the probe timed in the engine (a "
                           "diagnostic, not a prediction: it reads the measurement)",
                  "earlier-fill": _EARLIER.format("fill"), "earlier-itl": _EARLIER.format("ITL")}


def _speeds(rows: list[dict[str, Any]], cfg: EngineConfig, source: str) -> str:
    sp = sorted({round(r["cpu_speed"], 3) for r in rows})
    if sp == [round(cfg.cpu_speed, 3)]:
        return f"{cfg.cpu_speed:.3f} of the profile host's at every point"
    if source == "meter" and not any(r.get("meter") for r in rows):
        source = "regime"  # no meter ran: the points differ by the fill they made (cfg.cpu_speed_pool)
    return f"each point at {SPEED_OF_TEXTS[source]}, {sp[0]:.3f}-{sp[-1]:.3f} of the profile host's"


def write_report(rows: list[dict[str, Any]], out: Path, profile: Profile, cfg: EngineConfig,
                 sweeps: list[str], title: str, predicted_from: str | None = None,
                 speed_source: str = "meter") -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    sc = {m: score(rows, m) for m, _, _ in METRICS}
    shape = output_shape(profile, cfg.backend, sweeps)
    doc = {"title": title, "profile": {"name": profile.name, "created_utc": profile.created_utc,
                                       "host": asdict(profile.host), "provenance": profile.provenance,
                                       "forward_source": profile.forward.source},
           "engine_config": asdict(cfg), "sweeps": sweeps, "predicted_from": predicted_from, "score": sc,
           "output_shape": shape, "rows": rows}
    (out / "report.json").write_text(json.dumps(doc, indent=1))
    _plot(rows, out / "itl_measured_vs_predicted.png", title)
    head = _head_lines(title, profile, cfg, sweeps, predicted_from, _speeds(rows, cfg, speed_source))
    lines = head + _table_lines(rows) + ["", "## Score (held-out points only)", ""] + _score_lines(sc)
    lines += output_shape_lines(shape) + _measured_lines(rows, out) + ["", "![ITL](itl_measured_vs_predicted.png)", ""]
    if any(r.get("inengine") for r in rows):
        from .inengine import report_lines
        lines += report_lines(rows)
    if any(r.get("meter") for r in rows):
        from . import hostmeter
        lines += hostmeter.report_lines(rows)
    (out / "report.md").write_text("\n".join(lines))
    print("\n".join(lines[:2] + lines[len(head):]))
    return doc


def _head_lines(title: str, profile: Profile, cfg: EngineConfig, sweeps: list[str], predicted_from: str | None,
                speeds: str) -> list[str]:
    """The report's title and what it compares: the profile, the engine config, the sweeps, the speed."""
    return [f"# {title}", "",
            f"Profile `{profile.name}` ({profile.created_utc}; calibration host {profile.host.cpu_model}, "
            f"nproc {profile.host.nproc}). Engine config predicted: `{cfg.engine}` backend `{cfg.backend}`, "
            f"max_num_seqs {cfg.max_num_seqs}, cores {cfg.usable_cores}, cpu_count {cfg.cpu_count}, "
            f"async scheduling {cfg.effective_async}, spec tokens {cfg.spec_tokens}.", "",
            f"Measured: {', '.join(sweeps)}. Forward curve: {profile.forward.source}", "",
            (f"Predicted: the points of `{predicted_from}`, written before the measurement and used unchanged."
             if predicted_from else "Predicted: the model run now on the measured points."),
            f"CPU speed: {speeds}.", "",
            "ITL: the engine's own histogram mean (vLLM, SGLang); the client's per-token ITL where the engine "
            "has none (llama.cpp). Signed error = (predicted - measured) / measured. Schema-off points are "
            "marked *fitted* and not scored where the forward curve was calibrated from them. Prompt: the "
            "server's prompt token count (`unique`: a nonce first, no prefix-cache hit). TTFT p50: the client's; TTFT "
            "server: the engine's own histogram mean (vLLM), from the request's arrival in the API server, without "
            "the client's share. ITL band: the model with "
            "the engine as fast and as slow as on the fastest and slowest server of the profile's host type "
            "measured, against their bench (the profile's engine_speeds; empty where it has none)."]


def _table_lines(rows: list[dict[str, Any]]) -> list[str]:
    """One line a point: measured, predicted and error of each metric."""
    lines = ["", "| arm | conc | unique | prompt | n | ITL ms meas | pred | err % | spread % | TTFT p50 meas | pred | err % "
             "| TTFT server meas | pred | err % | tok/s meas | pred | err % | running meas | pred | ITL band |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        m = r["metrics"]
        e, t, ts, o, ru = m["ITL ms"], m["TTFT p50 ms"], m["server TTFT ms"], m["out tok/s"], m["running"]
        lines.append(f"| {r['arm']}{' (fitted)' if r['fitted'] else ''} | {r['concurrency']} | "
                     f"{'yes' if r['unique_schemas'] else ''} | {_prompt(r)} | {r['repeats']} | {_f(e['measured'], 2)} | "
                     f"{_f(e['predicted'], 2)} | {_pct(e['error_pct'])} | {_f(e['spread_pct'])} | "
                     f"{_f(t['measured'])} | {_f(t['predicted'])} | {_pct(t['error_pct'])} | {_f(ts['measured'])} | "
                     f"{_f(ts['predicted'])} | {_pct(ts['error_pct'])} | {_f(o['measured'], 0)} | "
                     f"{_f(o['predicted'], 0)} | {_pct(o['error_pct'])} | {_f(ru['measured'])} | {_f(ru['predicted'])} | "
                     f"{'-'.join(_f(x) for x in r['itl_band_ms']) if r.get('itl_band_ms') else ''} |")
    return lines


def _score_lines(sc: dict[str, dict[str, Any]]) -> list[str]:
    """Each metric's score over the held-out points, with the band's and the interval's counts."""
    lines = []
    for m, s in sc.items():
        if s["points"]:
            lines.append(f"- {m}: {s['points']} points, median |error| {s['median_abs_error_pct']:.1f}%, "
                         f"MAPE {s['mape_pct']:.1f}%, worst {s['worst_error_pct']:+.1f}%")
            if "band_points" in s:
                lines.append(f"- ITL band (the engine as fast / as slow as on the servers of the profile's host type "
                             f"measured): {s['inside_band']} of {s['band_points']} points inside")
            if "interval_points" in s:
                lines.append(f"- 80% interval of the predictions (maskcost/interval.py): {s['inside_interval']} of "
                             f"{s['interval_points']} points inside")
    return lines


def _beside(rows: list[dict[str, Any]], name: str, words: str, metric: str | None = None) -> list[str]:
    """One line with a metric measured / predicted at each row that measured it (none where no row did)."""
    m = metric or name
    got = [r for r in rows if r["metrics"][m]["measured"] is not None]
    return [f"- {name} ({words}): " + ", ".join(
        f"{r['arm']} {r['concurrency']} {_f(r['metrics'][m]['measured'], 2)} / {_f(r['metrics'][m]['predicted'], 2)}"
        for r in got)] if got else []


def _measured_lines(rows: list[dict[str, Any]], out: Path) -> list[str]:
    """What the points say beside the score: the host speed read from the engine's ITL, the GPU's busy share,
    a client too busy to trust its TTFT."""
    lines = []
    itl_speeds = [r["itl_speed"] for r in rows if r.get("itl_speed")]
    if itl_speeds:
        lines.append(f"- Host speed read from the engine's ITL (the speed at which the model's ITL equals the "
                     f"measured one, against the profile's host): {min(itl_speeds):.3f}-{max(itl_speeds):.3f}, "
                     f"median {statistics.median(itl_speeds):.3f}, over {len(itl_speeds)} schema-on points: "
                     f"`maskcost predict --cpu-speed-from-report {out / 'report.json'}` predicts other loads on this "
                     f"server at the median")
    lines += _beside(rows, "GPU busy", "the share of the window its GPU ran a kernel, NVML, against the model's: its "
                     "kernels' share where the profile's calibration read NVML, else the forward's share, an upper "
                     "bound that holds the host's work in the server's step; a host-bound step leaves the GPU idle")
    lines += _beside(rows, "Server CPUs", "its processes' CPU time over the window, read from /proc, against the "
                     "engine's demand in the model: engine thread, API server, pools and, with xgrammar on vLLM, the "
                     "OpenMP threads that spin after each step's bitmask copy", metric="server CPUs")
    busy = [r for r in rows if busy_client_pct(r["client_cpu_pct"])]
    if busy:
        lines.append(f"- The client was over {CLIENT_BUSY_PCT:.0f}% busy per process at "
                     + ", ".join(f"{r['arm']} {r['concurrency']} ({r['client_cpu_pct']:.0f}%)" for r in busy)
                     + ": its TTFT p50 there holds its own queueing (TTFT server does not)")
    return lines
