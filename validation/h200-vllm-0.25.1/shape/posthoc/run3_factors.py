"""Run 3 post hoc: the guidance in-engine factors the profile took from the embedded one were fitted against
traces replayed with xgrammar's separators (", ", ": "); run 3's guidance traces replay the llguidance
server's compact outputs. calibrate --base-url now divides those factors by the library's cost of the one
convention over the other on the same outputs (validate.server_calibration.convention_ratios); this applies
that to run 3's profile (the ratio measured on this machine, not the device) and scores run 3 again.
  python posthoc/run3_factors.py   (from the shape folder's parent: validation/h200-vllm-0.25.1/shape)
-> posthoc/run3/ (predicted.json, score.json, score.md, score.png) and the ratio printed."""
from __future__ import annotations

import json
import shutil
import sys
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))
import check  # noqa: E402

from maskcost.calibrate.backends import LLGUIDANCE_SEPARATORS, XGRAMMAR_SEPARATORS  # noqa: E402
from maskcost.calibrate.run import recorded_outputs, replay_cost_ratio  # noqa: E402
from maskcost.calibrate.schemas import SchemaEntry  # noqa: E402
from maskcost.calibrate.tokenizer import load_vocab  # noqa: E402
from maskcost.profile import load_profile, save_profile  # noqa: E402

run, out = HERE / "run3", HERE / "posthoc" / "run3"
vocab = load_vocab("llama3")  # the bundled vocabulary: the same tokens as the device's tokenizer folder
entries = [SchemaEntry(s, "user", json.loads((HERE / "schemas" / f"{s}.json").read_text()), ()) for s in check.SCHEMAS]
outputs = recorded_outputs(run / "xg" / "host.outputs-guidance.raw.jsonl.gz", vocab)
k = replay_cost_ratio(vocab, entries, outputs, LLGUIDANCE_SEPARATORS, XGRAMMAR_SEPARATORS)
p = load_profile(run / "xg" / "host.json.gz")
g = p.backends["guidance"]
ef = g.engine_fill
ef = replace(ef, serial_factor=ef.serial_factor / k, pool_factor=ef.pool_factor / k, pool_task_factor=ef.pool_task_factor / k)
p = replace(p, backends={**p.backends, "guidance": replace(g, engine_fill=ef, separators=LLGUIDANCE_SEPARATORS)})
out.mkdir(parents=True, exist_ok=True)
for srv in check.SERVERS:
    (out / srv).mkdir(exist_ok=True)
    for f in (run / srv).glob("*.jsonl"):
        shutil.copy(f, out / srv / f.name)
save_profile(p, out / "profile.json.gz")
print(f"guidance: compact over spaced library fill a token, the same outputs, this machine: x{k:.3f}; factors "
      f"serial {g.engine_fill.serial_factor:.3f} -> {ef.serial_factor:.3f}, pool task {g.engine_fill.pool_task_factor:.3f} "
      f"-> {ef.pool_task_factor:.3f}")
check.score(out, out / "profile.json.gz")
