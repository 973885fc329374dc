"""The profile with the spread of the engine's speed between the measured servers of its host type
(engine_speeds.py's output) recorded in it, for predict's band.
usage: python validation/h200-vllm-0.25.1/l/add_engine_speeds.py PROFILE ENGINE_SPEEDS.json OUT"""
import json
import sys
from dataclasses import replace

from maskcost.calibrate.profile import EngineSpeeds, ServerSpeed, load_profile, save_profile

p = load_profile(sys.argv[1])
d = json.load(open(sys.argv[2]))
if d["profile"] != p.name:
    sys.exit(f"{sys.argv[2]}: measured with profile {d['profile']}, not {p.name}")
script = d.get("script", "validation/h200-vllm-0.25.1/l/engine_speeds.py")  # absent in l/engine-speeds.json
es = EngineSpeeds(f"{script} on {p.name}: per server, the CPU speed at which "
                  "the model's median ITL error over its xgrammar max-num-seqs 256 schema-on points is zero, over "
                  "its bench speed", tuple(ServerSpeed(s["name"], s["ratio"]) for s in d["servers"]))
save_profile(replace(p, engine_speeds=es), sys.argv[3])
print(f"wrote {sys.argv[3]}: engine speed over bench {es.low:.3f}-{es.high:.3f} "
      f"({', '.join(f'{s.name} {s.ratio:.2f}' for s in es.servers)})")
