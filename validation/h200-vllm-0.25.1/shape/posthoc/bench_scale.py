"""Post hoc (docs/validation.md finding 68): shape runs 8-16's profiles with the in-engine CPU terms (EngineFill's cpu_points
and pool_excess_points) scaled from the embedded profile's host by the ratio the run's own traces imply (their mean cost a
token over the same 96 outputs replayed on the development VM: trace_sample.txt; the VM's bench ~ the embedded host's)
instead of calibrate's one-moment bench, the speed read again from the same speed sweep, the guidance factor fitted
again; then check.py score on a copy of each run. BASELINE=1: the same with the scale kept (main's model on the profile as made: bench_scale-baseline.txt).
Usage, from the repository root: python bench_scale.py OUTDIR run8 ... run16 > bench_scale.txt"""
import json, re, shutil, subprocess, sys, statistics
from dataclasses import replace
from pathlib import Path
from maskcost.profile import load_profile, save_profile, load_default_profile
from maskcost.records import read_summaries
from maskcost.model.config import EngineConfig
from maskcost.validate.server_fits import read_speed, fit_backend_fill

SHAPE = Path("validation/h200-vllm-0.25.1/shape")
OUT = Path(sys.argv[1]); runs = sys.argv[2:]
vm = {}  # posthoc/trace_sample.txt: the same 96 outputs replayed on the development VM, us a token
for line in (SHAPE / "posthoc/trace_sample.txt").read_text().splitlines():
    run = line.split()[0]
    vm[run] = {s: float(x) for s, x in re.findall(r"(\w+): 96 (\d+)", line)}
base_bench = load_default_profile().host.bench_us
for run in runs:
    src = SHAPE / run
    p = load_profile(src / "xg/host.json.gz")
    r_old = p.host.bench_us / base_bench
    dev = {}
    for sid in ("flat", "nested", "deep"):
        ts = [t for t in p.backends["xgrammar"].traces if t.schema_id == sid]
        dev[sid] = sum(sum(t.fill_us) for t in ts) / sum(len(t.fill_us) for t in ts)
    r_new = statistics.median(dev[s] / vm[run][s] for s in dev)  # the VM's bench ~ the embedded host's
    k = 1.0 if "BASELINE" in __import__("os").environ else r_new / r_old
    def scaled(ef):
        return replace(ef, cpu_points=tuple(replace(c, ms=c.ms * k) for c in ef.cpu_points),
                       pool_excess_points=tuple(replace(c, ms=c.ms * k) for c in ef.pool_excess_points))
    q = replace(p, backends={b: replace(bc, engine_fill=scaled(bc.engine_fill)) if bc.engine_fill else bc
                             for b, bc in p.backends.items()})
    cfg = EngineConfig(engine="vllm", engine_version="0.25.1", backend="xgrammar", max_num_seqs=256,
                       usable_cores=16, cpu_count=16)
    on = read_summaries(src / "xg/host.speed-sweep.jsonl")
    q = replace(q, measured_speed=read_speed(q, cfg, on, "host.speed-sweep.jsonl"))
    gd = read_summaries(src / "xg/host.speed-sweep-guidance.jsonl")
    q = fit_backend_fill(q, cfg, "guidance", gd, "http://127.0.0.1:8001")
    dst = OUT / run
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst)
    save_profile(q, dst / "xg/host-rescaled.json.gz")
    subprocess.run([sys.executable, str(SHAPE / "check.py"), "score", str(dst), str(dst / "xg/host-rescaled.json.gz")],
                   check=True, capture_output=True)
    old = json.loads((src / "score.json").read_text())["rows"]
    new = json.loads((dst / "score.json").read_text())["rows"]
    fmt = lambda rows, s, b: " ".join("na" if r["error_pct"] is None else f"{r['error_pct']:+.0f}"
                                      for r in rows if r["schema"] == s and r["backend"] == b)
    print(f"{run}: bench x{r_old:.2f}, traces x{r_new:.2f}; speed {p.measured_speed.cpu_speed:.3f}/"
          f"{p.measured_speed.pool_speed} -> {q.measured_speed.cpu_speed:.3f}/{q.measured_speed.pool_speed}", flush=True)
    itl = lambda rows: statistics.median(abs(r["itl_error_pct"]) for r in rows if r.get("itl_error_pct") is not None)
    print(f"   median |ITL error| of the schema points: as run {itl(old):.1f}%, rescaled {itl(new):.1f}%")
    for b in ("xgrammar", "guidance"):
        for s in ("nested", "deep"):
            print(f"   {b[:2]} {s}/flat error % (32 128 256): as run {fmt(old, s, b):14} rescaled {fmt(new, s, b)}",
                  flush=True)
