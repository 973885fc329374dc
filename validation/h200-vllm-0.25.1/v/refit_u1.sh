#!/bin/bash
# Post hoc (after V was scored): does the profile's engine step refitted from one U server's probe fix the
# bias v/shape.md found (at 8 the model too fast, at 128 too slow)? The embedded default's xgrammar engine
# fill and engine CPU were fitted on session J's server; here `report --probe --fit-engine-fill` on u1 (at
# u1's median ITL speed, 0.89: v/u-v.png), then v/shape.py with each profile on the xgrammar servers with
# many points other than u1 (I, K, L, N, P, u3, v1, v3).
# usage (from the repository root): bash validation/h200-vllm-0.25.1/v/refit_u1.sh > validation/h200-vllm-0.25.1/v/refit-u1.md
set -eu
echo "# The engine step refitted on u1 (post hoc; v/refit_u1.sh)"; echo
V=validation/h200-vllm-0.25.1; TMP=$(mktemp -d)
maskcost report --sweep $V/u/u1-open.jsonl $V/u/u1.jsonl --probe $V/u/probe --backend xgrammar --max-num-seqs 256 \
  --cores 14 --cpu-count 16 --cpu-speed 0.89 --fit-engine-fill $TMP/ijm-u1.json --out $TMP/r 2>&1 | grep "^wrote $TMP/ijm-u1.json" \
  | sed "s#$TMP/##"
SERVERS="I K L N P U3-xgrammar V1-xgrammar V3-xgrammar"
echo; echo "## The embedded default (engine step fitted on J)"; echo
python3 $V/v/shape.py maskcost/profiles/default.json.gz $SERVERS
echo; echo "## Refitted on u1"; echo
python3 $V/v/shape.py $TMP/ijm-u1.json $SERVERS
rm -rf "$TMP"
