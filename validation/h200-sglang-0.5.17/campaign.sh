#!/bin/bash
# A registered SGLang campaign on a fresh device machine: start every arm's server as the campaign file
# says (serve_sglang.sh, side by side on the one GPU: arm i on port 8000 + 100 i, each started once the
# one before has its KV pool), then `maskcost campaign run` against them, from the staged wheel. It
# replaces run.sh's per-phase copies for future runs. From the repository root, carrying .device-stage-sg:
#   bash validation/h200-sglang-0.5.17/campaign.sh CAMPAIGN.json [STOP_AFTER]   (results: $OUT/<name>.tar.gz)
# Register first, on this machine, and commit: maskcost campaign register CAMPAIGN.json --out REGISTRATION.md
# SERVE (default serve_sglang.sh beside this file) and PY (default python3) are replaceable, and MASKCOST_LOCAL=1
# uses the maskcost installed here, so the pipeline runs on a CPU machine against stand-in servers first:
#   MASKCOST_LOCAL=1 PY=.venv/bin/python SERVE=tests/fake_serve.sh OUT=/tmp/dry bash .../campaign.sh DRY.json
set -u
C=$(realpath "$1"); STOP=${2:-}; ROOT=$PWD; D=$(dirname "$(realpath "$0")")
SERVE=${SERVE:-$D/serve_sglang.sh}; PY=${PY:-python3}; MC="$PY -m maskcost.cli"
export STAGE=${STAGE:-$ROOT/.device-stage-sg}
if [ -z "${MASKCOST_LOCAL:-}" ]; then
  [ -d /tmp/mc ] || python3 -m pip install -q --no-index --no-deps --target /tmp/mc "$STAGE"/w/*.whl || exit 1
  export PYTHONPATH=/tmp/sgsite:/tmp/mc   # SGLang's packages (xgrammar 0.2.1, llguidance 1.9.1), maskcost's wheel
fi
# one line per arm: name backend max_num_seqs flags (the arm's server), first the campaign's name
mapfile -t ARMS < <($PY - "$C" <<'EOF_PY'
import sys
from maskcost.validate.campaign import load_campaign
c = load_campaign(sys.argv[1])
print(c.name)
for a in c.arm_list():  # SGLang's name for the guidance backend is llguidance
    print(a.name, {"guidance": "llguidance"}.get(a.server.backend, a.server.backend), a.server.max_num_seqs,
          " ".join(a.server.flags))
EOF_PY
) || exit 1
[ "${#ARMS[@]}" -ge 2 ] || exit 1
NAME=${ARMS[0]}; R=$OUT/$NAME; mkdir -p "$R"
note() { echo "$(date -u +%FT%T.%3NZ) [$SECONDS s] $*" >> "$R/device.txt"; }
{ nproc; lscpu | grep -E "Model name|^CPU\(s\)|MHz"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv;
  ls "$STAGE"/w; } > "$R/host.txt" 2>&1
N=$((${#ARMS[@]} - 1)); URLS=()
for i in $(seq 1 "$N"); do
  read -r ARM BACKEND MNS FLAGS <<< "${ARMS[$i]}"
  PORT=$((8000 + 100 * (i - 1)))
  MEM=0.85; [ "$N" -gt 1 ] && MEM=$([ "$i" -eq 1 ] && echo 0.45 || echo 0.7)   # of the memory each finds free
  rm -f "/tmp/sglang-$PORT.log"  # the wait below reads this server's own log, not an earlier one's
  note "serve $ARM ($BACKEND, max-running $MNS, $FLAGS) on :$PORT, mem $MEM"
  # shellcheck disable=SC2086
  (PORT=$PORT MEM=$MEM bash "$SERVE" "$BACKEND" "$MNS" $FLAGS > "$R/serve-$ARM.log" 2>&1) &
  if [ "$i" -lt "$N" ]; then  # the next one sizes its KV pool from what this one leaves
    for _ in $(seq 1 120); do grep -q "Memory pool end" "/tmp/sglang-$PORT.log" 2>/dev/null && break; sleep 3; done
  fi
  URLS+=("$ARM=http://127.0.0.1:$PORT")
done
wait; note "$(cat "$R"/serve-*.log | grep -h "up after\|died\|not up" | tr '\n' ' ')"
grep -q "not up\|died" "$R"/serve-*.log && { tail -n 5 "$R"/serve-*.log; exit 1; }
$MC campaign run "$C" --base-url "${URLS[@]}" --out "$R" ${STOP:+--stop-after "$STOP"} > "$R/campaign.log" 2>&1
rc=$?; note "campaign rc $rc"
for l in /tmp/sglang-*.log; do [ -f "$l" ] && gzip -c "$l" > "$R/$(basename "$l" .log).log.gz"; done
tar -C "$OUT" -czf "$OUT/$NAME.tar.gz" "$NAME"
tail -n 4 "$R/campaign.log"; exit $rc
