"""Post hoc on run 5 (docs/validation.md finding 21): calibrate's speed read and llguidance's factor fit again
from the run's own records, (A) as calibrated, (B) with no API-server queue (the fits that read one saw a busy
client) and every speed point and held-out point whose client was busy (> 60% a process) modelled at the
engine's running count instead of the clients offered; the 16 held-out points scored through report's compare.
  python validation/h200-vllm-0.25.1/shape/posthoc/client_cap.py [RUN]  -> stdout (posthoc/client_cap.txt)"""
import json, statistics, sys
from dataclasses import replace
from pathlib import Path
HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))
import check
from maskcost.model.config import EngineConfig
from maskcost.profile import load_profile
from maskcost.records import read_summaries, client_busy
from maskcost.validate.report import compare
from maskcost.validate.server_calibration import fit_backend_fill, read_speed, _fill_scaled

RUN = sys.argv[1] if len(sys.argv) > 1 else "run5"
P = load_profile(HERE / RUN / "xg" / "host.json.gz")
cfg = EngineConfig(engine="vllm", engine_version="0.25.1", backend="xgrammar", max_num_seqs=256, usable_cores=16,
                   cpu_count=16)

def at_running(ss, only_busy=True):
    return [replace(s, concurrency=max(1, round(s.engine.running_mean))) if (client_busy(s) or not only_busy) else s for s in ss]

def chain(mode):
    if mode == "A":
        return P
    fw = P.forward
    q = replace(P, forward=replace(fw, frontend_token_us=0.0, frontend_request_ms=0.0, frontend_structured_ms=0.0,
                                   ttft_fixed_ms=fw.ttft_fixed_ms))
    # the carried llguidance factor back (the run's fit undone), then fitted again
    ef = q.backends["guidance"].engine_fill
    f = float(ef.method.split("then x")[1].split(" serial")[0]) if "then x" in ef.method else 1.0
    q = replace(q, backends={**q.backends, "guidance": replace(q.backends["guidance"], engine_fill=_fill_scaled(ef, 1 / f, 1 / f))})
    on = at_running(read_summaries(HERE / RUN / "xg" / "host.speed-sweep.jsonl"))
    q = replace(q, measured_speed=read_speed(q, cfg, on, "speed"))
    raw_g = read_summaries(HERE / RUN / "xg" / "host.speed-sweep-guidance.jsonl")
    ong = at_running(raw_g)
    # each llguidance point pairs with the xgrammar point of the same offered load (calibrate's pairing)
    by_offered = {x.concurrency: y.concurrency for x, y in zip(read_summaries(HERE / RUN / "xg" / "host.speed-sweep.jsonl"), on)}
    g_new = {x.concurrency: y.concurrency for x, y in zip(raw_g, ong)}
    spd = {by_offered_c: v for by_offered_c, v in q.measured_speed.points}
    inv = {v: k for k, v in by_offered.items()}
    q = replace(q, measured_speed=replace(q.measured_speed, points=tuple((g_new[inv[c]], v) for c, v in spd.items() if c in inv)))
    q = fit_backend_fill(q, cfg, "guidance", ong, "http://127.0.0.1:8001")
    return q

def score(p, mode):
    ms = p.measured_speed
    errs = {}
    for sub, cores in (("", 16), ("6", 6)):
        for srv, backend in check.SERVERS.items():
            for schema in ("flat", "nested"):
                f = HERE / RUN / f"{srv}{sub}" / f"{schema}.jsonl"
                ss = [s for s in read_summaries(f) if s.arm == "on"]
                if mode != "A":
                    ss = at_running(ss)
                c = EngineConfig(engine="vllm", engine_version="0.25.1", backend=backend, max_num_seqs=256,
                                 usable_cores=cores, cpu_count=16, cpu_speed=ms.cpu_speed, cpu_speed_pool=ms.pool_speed)
                for r in compare(p, c, ss):
                    m = r["metrics"]
                    k = (backend, schema, cores)
                    errs.setdefault(k, []).append((r["concurrency"], 100 * (m["ITL ms"]["predicted"] / m["ITL ms"]["measured"] - 1)))
    return errs

for mode in ("A", "B"):
    p = chain(mode)
    e = score(p, mode)
    ef = p.backends["guidance"].engine_fill
    flat = [x for v in e.values() for _, x in v]
    print(mode, "speed", round(p.measured_speed.cpu_speed, 3), round(p.measured_speed.pool_speed or 0, 3), "guidance serial", round(ef.serial_factor, 3), "pool", round(ef.pool_factor, 3),
          "median |err|", round(statistics.median(abs(x) for x in flat), 1), "over", len(flat))
    for k, v in sorted(e.items()):
        print("  ", k, [(c, f"{x:+.0f}%") for c, x in v])
