"""How often the band holds the measured engine ITL, on the servers whose speeds made it (in sample)
and with each server left out of its own band (the band from the other servers' ratios): every
xgrammar max-num-seqs 256 schema-on point of sessions A, E, H, I, J, K, L, each at its bench speed.
usage: python validation/h200-vllm-0.25.1/l/band_check.py PROFILE_WITH_SPEEDS"""
import sys
from dataclasses import replace

from maskcost.calibrate.profile import EngineSpeeds, load_profile
from maskcost.model.config import EngineConfig
from maskcost.validate.report import compare
from maskcost.validate.sweep import read_summaries

sys.path.insert(0, "validation/h200-vllm-0.25.1/l")
from engine_speeds import BENCH, SERVERS  # noqa: E402

p = load_profile(sys.argv[1])
es = p.engine_speeds
print("| server | points | inside its band (all servers) | inside the band of the others | band of the others |")
print("|---|---|---|---|---|")
tot = [0, 0, 0]
for name, (sweeps, cores) in SERVERS.items():
    measured = [s for f in sweeps for s in read_summaries(f)]
    cfg = EngineConfig(max_num_seqs=256, cpu_count=16, usable_cores=cores, cpu_speed=BENCH.get(name, 1.0))
    others = EngineSpeeds(es.source, tuple(s for s in es.servers if s.name != name))
    counts = []
    for prof in (p, replace(p, engine_speeds=others)):
        rows = [r for r in compare(prof, cfg, measured) if r["arm"] == "on"]
        counts.append(sum(lo <= r["metrics"]["ITL ms"]["measured"] <= hi for r in rows for lo, hi in [r["itl_band_ms"]]))
    tot = [tot[0] + len(rows), tot[1] + counts[0], tot[2] + counts[1]]
    print(f"| {name} | {len(rows)} | {counts[0]} | {counts[1]} | {others.low:.2f}-{others.high:.2f} |", flush=True)
print(f"| all | {tot[0]} | {tot[1]} ({100 * tot[1] / tot[0]:.0f}%) | {tot[2]} ({100 * tot[2] / tot[0]:.0f}%) | |")
