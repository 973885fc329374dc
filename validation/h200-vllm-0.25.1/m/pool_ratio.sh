#!/bin/bash
# Post hoc (after session M): the pool against the serial fill, in-engine. Session M's three servers
# (two on machine 1, one on machine 2) each fitted alone like the default (defaults.sh's recipe: the
# probe's fill factors over session E's profile, at the session's idle bench speed), and the ratio of
# their pool-task factor to their serial factor; then a candidate default: the embedded one (ij) with
# its pool-task factor at its serial factor times the median of those ratios, nothing else changed
# (profile-ijm-pool.json.gz, named ...-ijm). cross_session.sh scores it against the default on the other
# sessions; make_default.sh adds the engine speeds of M's servers to it.
# usage (from the repository root): bash validation/h200-vllm-0.25.1/m/pool_ratio.sh > validation/h200-vllm-0.25.1/m/pool-ratio.md
set -eu
V=validation/h200-vllm-0.25.1; M=$V/m; T=$(mktemp -d)
S1=$(awk '/speed/ {print $6}' $M/bench-start.txt); S2=$(awk '/speed/ {print $6}' $M/bench-fresh.txt)
for x in "m1-xgrammar $S1" "m5-xgrammar-2 $S1" "m7-xgrammar-3 $S2"; do set -- $x
  python3 -m maskcost.cli report --sweep $M/$1.jsonl --probe $M/probe --cpu-speed $2 --cores 14 \
    --profile $V/e/profile-e-posthoc.json.gz --fit-engine-fill $T/$1.json.gz --out $T/r-$1 --title fit > /dev/null &
done
wait
python3 - "$T" "$M" <<'PY'
import statistics, sys
from dataclasses import replace
from maskcost.calibrate.profile import load_profile, save_profile
t, m = sys.argv[1:]
print("| server | serial factor | pool-task factor | ratio |\n|---|---|---|---|")
ratios = []
for name in ("m1-xgrammar", "m5-xgrammar-2", "m7-xgrammar-3"):
    ef = load_profile(f"{t}/{name}.json.gz").backends["xgrammar"].engine_fill
    ratios.append(ef.pool_task_factor / ef.serial_factor)
    print(f"| {name} | {ef.serial_factor:.3f} | {ef.pool_task_factor:.3f} | {ratios[-1]:.2f} |")
p = load_profile("validation/h200-vllm-0.25.1/l/profile-ij-speeds.json.gz")  # the embedded default before M
ef = p.backends["xgrammar"].engine_fill
r = statistics.median(ratios)
print(f"| the default before M (ij: session J) | {ef.serial_factor:.3f} | {ef.pool_task_factor:.3f} | "
      f"{ef.pool_task_factor / ef.serial_factor:.2f} |")
new = replace(ef, pool_task_factor=ef.serial_factor * r)
print(f"\ncandidate: pool-task factor {new.pool_task_factor:.3f} (serial {ef.serial_factor:.3f} x median ratio {r:.2f})")
q = replace(p, name=f"{p.name}m", backends={**p.backends, "xgrammar": replace(p.backends["xgrammar"], engine_fill=new)},
            provenance={**p.provenance, "engine_fill": p.provenance["engine_fill"] + f"; pool-task factor set to the "
                        f"serial factor x {r:.2f}, the median pool/serial ratio of session M's three servers "
                        "(validation/h200-vllm-0.25.1/m/pool_ratio.sh)"})
save_profile(q, f"{m}/profile-ijm-pool.json.gz")
print(f"wrote {m}/profile-ijm-pool.json.gz")
PY
rm -rf "$T"
