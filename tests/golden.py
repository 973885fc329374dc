"""The golden grid: the embedded default profile's predictions on a fixed set of points, stored in
tests/data/golden.json so that a change that moves a number fails tests/test_golden.py. Regenerate only
on purpose, when a model change is meant to move them (say which in the commit):

    python tests/golden.py --regenerate
"""
import json
import sys
from pathlib import Path

from maskcost.profile import load_default_profile
from maskcost.model.config import EngineConfig, Workload
from maskcost.model.predict import run_point_band

PATH = Path(__file__).parent / "data" / "golden.json"
SCHEMAS = ("tier/flat", "tier/bounded")
KEYS = ("itl_ms_mean", "itl_ms_p99", "ttft_ms_p50", "out_tok_per_s", "running_mean", "overhead_pct", "straddle_rate")
POINTS = [  # (label, engine config, workload)
    *[(f"vllm xgrammar c{c}", EngineConfig(), Workload(concurrency=c, requests=max(200, 4 * c), schemas=SCHEMAS))
      for c in (1, 8, 64, 128, 160, 256)],
    *[(f"vllm guidance c{c}", EngineConfig(backend="guidance"), Workload(concurrency=c, requests=max(200, 4 * c),
                                                                         schemas=SCHEMAS)) for c in (8, 192)],
    ("vllm xgrammar c192 mns128", EngineConfig(max_num_seqs=128), Workload(concurrency=192, requests=768, schemas=SCHEMAS)),
    ("vllm xgrammar c160 4 cores", EngineConfig(usable_cores=4), Workload(concurrency=160, requests=640, schemas=SCHEMAS)),
    ("vllm xgrammar c64 ngram3", EngineConfig(spec_tokens=3, spec_draft_rate=0.5),
     Workload(concurrency=64, requests=256, schemas=SCHEMAS)),
    ("vllm xgrammar c8 unique", EngineConfig(), Workload(concurrency=8, requests=200, schemas=SCHEMAS, unique_schemas=True)),
    ("vllm xgrammar c64 prompts", EngineConfig(), Workload(concurrency=64, requests=256, schemas=SCHEMAS,
                                                           prompt_tokens=1500, prompt_cached_tokens=1000)),
    ("sglang xgrammar c64", EngineConfig(engine="sglang"), Workload(concurrency=64, requests=256, schemas=SCHEMAS)),
    ("sglang guidance c192", EngineConfig(engine="sglang", backend="guidance"),
     Workload(concurrency=192, requests=768, schemas=SCHEMAS)),
    ("vllm xgrammar rate 200/s", EngineConfig(), Workload(concurrency=None, rate_per_s=200.0, requests=400, schemas=SCHEMAS)),
]


def compute() -> dict:
    profile = load_default_profile()
    out = {}
    for label, cfg, wl in POINTS:
        p = run_point_band(profile, cfg, wl, {})
        out[label] = {**{k: getattr(p, k) for k in KEYS}, "itl_off_ms": p.off.itl_ms_mean,
                      "band": list(p.band.itl_ms_mean) if p.band is not None else None}
    return {"profile": profile.name, "points": out}


if __name__ == "__main__":
    if "--regenerate" not in sys.argv[1:]:
        sys.exit(__doc__)
    PATH.write_text(json.dumps(compute(), indent=1) + "\n")
    print(f"wrote {PATH}")
