#!/bin/bash
# Session W's prediction grids, made before the session with the model on main and the profiles of
# make_profile.sh, at CPU speeds 0.40-1.60 in steps of 0.05, at every concurrency W runs (U and V's settings):
# predicted-{xgrammar,guidance}.json with profile-u1loop.json.gz (the primary), predicted-rows-xgrammar.json
# with profile-u1rows.json.gz (its guidance is u1loop's: the two differ in xgrammar only).
# usage (from the repository root): bash validation/h200-vllm-0.25.1/w/predict_w.sh
set -eu
D=validation/h200-vllm-0.25.1/w
GRID=$(python3 -c "print(' '.join(f'{0.40 + 0.05 * i:.2f}' for i in range(25)))")   # 0.40 ... 1.60
S="--schema-id tier/flat tier/bounded --prompt-tokens 122 --prompt-cached-tokens 112 --max-num-seqs 256 --cores 14 --cpu-speed $GRID"
C="--concurrency 8 32 64 96 128 160 192 224 256"
pred() { local name=$1 profile=$2; shift 2
  python3 -m maskcost.cli predict --profile "$D/profile-$profile.json.gz" $S $C --json "$D/predicted-$name.json" "$@" \
    > "$D/predict-$name.log" 2>&1
  echo "$(date -u +%FT%TZ) wrote $D/predicted-$name.json"; }
pred xgrammar u1loop &
pred guidance u1loop --backend guidance &
wait
pred rows-xgrammar u1rows
