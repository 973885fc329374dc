"""The compiles the shipped SGLang profile lacks: the built-in tiers' (flat, nested, deep, bounded), which
`predict --schema` divides a user's compile by (calibrate/local.py _compile_scale), measured on a device host
with SGLang 0.5.17's own grammar libraries (xgrammar 0.2.1, llguidance 1.9.1) beside the profile's own three
schemas (contact, order, review), each `REPEATS` times the way calibrate measures a compile (fill._compile_costs:
cold, warm, a near-identical variant), so merge.py can carry the tiers to the profile's host by the three
schemas' ratio. Runs where those libraries import: on the device, the wheels of xgrammar 0.2.1, apache-tvm-ffi
0.1.11, llguidance 1.9.1, pydantic and what maskcost imports installed with --target into a folder on PYTHONPATH
(README.md here), from the repository root:
  python3 validation/h200-sglang-0.5.17/tiers/measure.py validation/h200-sglang-0.5.17/schemas OUT.json"""
import json
import os
import platform
import statistics
import sys
import time
from importlib.metadata import version
from pathlib import Path

from maskcost.calibrate.backends import make_backend
from maskcost.calibrate.fill import _compile_costs
from maskcost.calibrate.host import bench_us
from maskcost.calibrate.schemas import TIERS, load_schema_file
from maskcost.calibrate.tokenizer import load_vocab

REPEATS = 5
OWN = ("contact", "order", "review")


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def main(schema_dir: str, out: str) -> None:
    vocab = load_vocab("llama3")
    entries = [load_schema_file(Path(schema_dir) / f"{s}.json") for s in OWN] + [TIERS[t] for t in TIERS]
    got = {"what": "cold compiles of the tiers and the SGLang profile's own schemas (validation/h200-sglang-0.5.17/"
                   "tiers/measure.py)", "nproc": os.cpu_count(), "cpu_model": cpu_model(),
           "xgrammar": version("xgrammar"), "llguidance": version("llguidance"), "repeats": REPEATS,
           "tokenizer_sha256": vocab.sha256, "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "bench_us_before": bench_us(vocab), "backends": {}}
    for name in ("xgrammar", "guidance"):
        rows = {}
        for e in entries:
            runs = []
            for _ in range(REPEATS):
                be = make_backend(name, vocab)  # a fresh compiler each time: every cold compile cold
                c = _compile_costs(be, e)[1]
                runs.append({"cold_ms": c.cold_ms, "warm_ms": c.warm_ms, "variant_ms": c.variant_ms,
                             "memory_bytes": c.memory_bytes})
            rows[e.schema_id] = {"runs": runs, **{k: statistics.median(r[k] for r in runs)
                                                  for k in ("cold_ms", "warm_ms", "variant_ms", "memory_bytes")}}
            print(name, e.schema_id, f"cold {rows[e.schema_id]['cold_ms']:.2f} ms", flush=True)
        got["backends"][name] = rows
    got["bench_us_after"] = bench_us(vocab)
    Path(out).write_text(json.dumps(got, indent=1))


if __name__ == "__main__":
    main(*sys.argv[1:])
