"""The shipped SGLang profile with the built-in tiers' compiles (what `predict --schema` carries a user's compile
by: calibrate/local.py _compile_scale), from measure.py's device.json: each tier's compile on the device, times
the median over the profile's own three schemas (contact, order, review) of the profile's compile over the
device's, so the tiers stand at the profile's host as its own schemas do. Writes the profile in place and says
what it added.
  python validation/h200-sglang-0.5.17/tiers/merge.py validation/h200-sglang-0.5.17/tiers/device.json"""
import json
import statistics
import sys
from dataclasses import replace
from pathlib import Path

from maskcost.profile import CompileCost, load_profile, save_profile

PROFILE = Path("maskcost/profiles/sglang-0.5.17-h200.json.gz")
OWN = ("contact", "order", "review")


def main(device_json: str) -> None:
    dev = json.loads(Path(device_json).read_text())
    p = load_profile(PROFILE)
    backends, said = dict(p.backends), []
    for name, costs in p.backends.items():
        got = dev["backends"][name]
        own = {c.schema_id: c for c in costs.compiles}
        scale = statistics.median(own[s].cold_ms / got[s]["cold_ms"] for s in OWN)
        tiers = tuple(CompileCost(s, g["cold_ms"] * scale, g["warm_ms"] * scale, int(g["memory_bytes"]),
                                  g["variant_ms"] * scale) for s, g in got.items() if s.startswith("tier/"))
        keep = tuple(c for c in costs.compiles if not c.schema_id.startswith("tier/"))
        backends[name] = replace(costs, compiles=keep + tiers)
        said.append(f"{name} x{scale:.3f} (" + ", ".join(f"{c.schema_id} {c.cold_ms:.1f} ms" for c in tiers) + ")")
    note = (f"tier compiles added 2026-12-06 (validation/h200-sglang-0.5.17/tiers/): measured on a device host "
            f"({dev['cpu_model']}, nproc {dev['nproc']}, xgrammar {dev['xgrammar']}, llguidance {dev['llguidance']}, "
            f"the median of {dev['repeats']} cold compiles each), carried to this profile's host by the median of its "
            f"own three schemas' compiles over the device's: " + "; ".join(said))
    kept = [n for n in p.provenance.get("notes", []) if not n.startswith("tier compiles added")]  # (a re-run: once)
    prov = {**p.provenance, "notes": [*kept, note]}
    save_profile(replace(p, backends=backends, provenance=prov), PROFILE)
    print(note)


if __name__ == "__main__":
    main(sys.argv[1])
