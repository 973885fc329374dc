"""Post hoc: llguidance's in-engine fill factor as calibrate --backend-url reads it (each speed point's k, solved at
the xgrammar server's speed at the point of the same load: the serial points' median, the pool points' apart)
against two readings: POOLED, the median of all four points' k for both regimes; REGIME, each point's k solved at
the profile's own speed for its regime (no pairing with the other server's point). main's model; the speed as
the profile carries it; check.py score on a copy of each run. Usage: python guidance_k.py MODE OUTDIR run8 ..."""
import json, re, shutil, statistics, subprocess, sys
from dataclasses import replace
from pathlib import Path
from maskcost.profile import load_profile, save_profile
from maskcost.records import read_summaries
from maskcost.model.config import EngineConfig
from maskcost.validate.server_fits import fit_backend_fill
from maskcost.validate.engine_base import fill_scaled

SHAPE = Path("validation/h200-vllm-0.25.1/shape")
mode, out, runs = sys.argv[1], Path(sys.argv[2]), sys.argv[3:]
cfg = EngineConfig(engine="vllm", engine_version="0.25.1", backend="xgrammar", max_num_seqs=256, usable_cores=16,
                   cpu_count=16)
for run in runs:
    src = SHAPE / run
    p = load_profile(src / "xg/host.json.gz")
    note = next(n for n in p.provenance["notes"] if n.startswith("guidance: in-engine fill x"))
    ks = [(float(k), bool(pool)) for k, pool in re.findall(r"c\d+: x([\d.]+)( \(pool\))?", note)]
    serial = statistics.median([k for k, pl in ks if not pl] or [k for k, _ in ks])
    pool = statistics.median([k for k, pl in ks if pl] or [k for k, _ in ks])
    if mode == "POOLED":
        allk = statistics.median(k for k, _ in ks)
        ef = p.backends["guidance"].engine_fill
        q = replace(p, backends={**p.backends, "guidance": replace(p.backends["guidance"], engine_fill=fill_scaled(
            ef, allk / serial, allk / pool))})
        what = f"serial x{serial:.3f}, pool x{pool:.3f} -> both x{allk:.3f}"
    else:  # REGIME
        q0 = replace(p, measured_speed=replace(p.measured_speed, points=()))
        gd = read_summaries(src / "xg/host.speed-sweep-guidance.jsonl")
        q = fit_backend_fill(q0, cfg, "guidance", gd, "http://127.0.0.1:8001")
        q = replace(q, measured_speed=p.measured_speed)
        new = q.provenance["notes"][-1]
        what = f"serial x{serial:.3f}, pool x{pool:.3f} -> refit at the regime's speed: {new[new.find('x'):][:60]}"
    dst = out / run
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst)
    save_profile(q, dst / "xg/host-k.json.gz")
    subprocess.run([sys.executable, str(SHAPE / "check.py"), "score", str(dst), str(dst / "xg/host-k.json.gz")],
                   check=True, capture_output=True)
    rows = json.loads((dst / "score.json").read_text())["rows"]
    gd_itl = [abs(r["itl_error_pct"]) for r in rows if r["backend"] == "guidance" and r.get("itl_error_pct") is not None]
    nf = [r["error_pct"] for r in rows if r["backend"] == "guidance" and r["schema"] == "nested" and r["error_pct"] is not None]
    print(f"{run}: {what}; guidance median |ITL error| {statistics.median(gd_itl):.1f}% over {len(gd_itl)}; "
          f"nested/flat {' '.join(f'{e:+.0f}' for e in nf)}", flush=True)
