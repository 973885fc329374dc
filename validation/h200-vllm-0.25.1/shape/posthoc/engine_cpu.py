"""Post hoc (issue 39): each shape point's server CPU (engine.server_cpu) against the model's demand
(model/host_share.py demand) at the same point, the profile calibrate made on run 1's machine.
  python validation/h200-vllm-0.25.1/shape/posthoc/engine_cpu.py validation/h200-vllm-0.25.1/shape/run1"""
import json, statistics as st, sys
from dataclasses import replace
from maskcost.profile import load_profile
from maskcost.model.config import EngineConfig, Workload
from maskcost.model.costs import Costs
from maskcost.model.engine import Simulation
from maskcost.model.host_share import demand
from maskcost.model.predict import default_requests
run = sys.argv[1]
P = load_profile('validation/h200-vllm-0.25.1/shape/run1/xg/host.json.gz')
ms = P.measured_speed
for srv, b in (('xg', 'xgrammar'), ('gd', 'guidance')):
    costs = Costs(P, b)
    for s in ('flat', 'nested', 'deep'):
        try: rs = [json.loads(l) for l in open(f'{run}/{srv}/{s}.jsonl')]
        except FileNotFoundError: continue
        for c in (32, 128, 256):
            pts = [r for r in rs if r['concurrency'] == c]
            meas = st.fmean(r['engine']['server_cpu']['cpus'] for r in pts)
            step = st.fmean(r['engine']['step_ms'] for r in pts)
            cfg = EngineConfig(engine='vllm', engine_version='0.25.1', backend=b, max_num_seqs=256, cpu_count=16, usable_cores=16,
                               cpu_speed=ms.cpu_speed, cpu_speed_pool=ms.pool_speed)
            sim = Simulation(costs.at_speed(ms.cpu_speed), cfg, Workload(concurrency=c, requests=default_requests(c), schemas=(s,))).run()
            d = demand(sim)
            print(f'{srv} {s:6} {c:3} meas {meas:.2f} model {d.cpus:.2f} (eng {d.engine_thread:.2f} api {d.api_server:.2f} pool {d.fill_pool:.2f}) step {step:.0f} extra ms/step {(meas-d.cpus)*step:.0f}')
