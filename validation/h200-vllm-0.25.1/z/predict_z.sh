#!/bin/bash
# Session Z's prediction grids, made before the session with the model on main and make_profile.sh's profile,
# at CPU speeds 0.40-1.60 in steps of 0.05, at every concurrency Z runs (Y's settings):
# predicted-{xgrammar,guidance}.json with profile-u2fes.json.gz.
# usage (from the repository root): bash validation/h200-vllm-0.25.1/z/predict_z.sh
set -eu
D=validation/h200-vllm-0.25.1/z
GRID=$(python3 -c "print(' '.join(f'{0.40 + 0.05 * i:.2f}' for i in range(25)))")   # 0.40 ... 1.60
S="--schema-id tier/flat tier/bounded --prompt-tokens 122 --prompt-cached-tokens 112 --max-num-seqs 256 --cores 14 --cpu-speed $GRID"
C="--concurrency 8 32 64 96 128 160 192 224 256"
pred() { local name=$1; shift
  python3 -m maskcost.cli predict --profile "$D/profile-u2fes.json.gz" $S $C --json "$D/predicted-$name.json" "$@" \
    > "$D/predict-$name.log" 2>&1
  echo "$(date -u +%FT%TZ) wrote $D/predicted-$name.json"; }
pred xgrammar
pred guidance --backend guidance
