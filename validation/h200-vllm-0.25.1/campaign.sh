#!/bin/bash
# A registered campaign on a fresh device machine (../shared/device staging): start vLLM as the campaign's
# "server" says, then `maskcost campaign run` (the three GPU-host commands and the score), from the wheel.
# From the repository root, after `cp .device-stage/a/part00 /tmp/stage-part00` in a first call:
#   bash validation/h200-vllm-0.25.1/campaign.sh CAMPAIGN.json        (results under $OUT/<name>/)
# Register first, on this machine, and commit: maskcost campaign register CAMPAIGN.json --out REGISTRATION.md
set -u
C=$(realpath "$1"); ROOT=$PWD
[ -d /tmp/mc ] || python3 -m pip install -q --no-index --no-deps --target /tmp/mc .device-stage/w/*.whl || exit 1
export PYTHONPATH=/tmp/site:/tmp/mc
read -r NAME ENV BACKEND MNS FLAGS < <(python3 - "$C" <<'PY'
import sys; sys.path[:0] = ["/tmp/mc"]
from maskcost.validate.campaign import load_campaign
c = load_campaign(sys.argv[1]); s = c.server
print(c.name, ",".join(f"{k}={v}" for k, v in s.env.items()) or "-", s.backend, s.max_num_seqs, " ".join(s.flags))
PY
) || exit 1
R=$OUT/$NAME; mkdir -p "$R"
{ nproc; lscpu | grep -E "Model name|^CPU\(s\)"; nvidia-smi --query-gpu=name,driver_version --format=csv;
  ls .device-stage/w; } > "$R/host.txt" 2>&1
[ "$ENV" = "-" ] && ENV=""
# shellcheck disable=SC2086
env ${ENV//,/ } STAGE="$ROOT/.device-stage" bash "$ROOT/.device-stage/b/serve_vllm.sh" "$BACKEND" "$MNS" $FLAGS \
  > "$R/serve.log" 2>&1 || { cat "$R/serve.log"; exit 1; }
python3 -m maskcost.cli campaign run "$C" --base-url http://127.0.0.1:8000 --out "$R" > "$R/campaign.log" 2>&1
rc=$?
gzip -c /tmp/vllm.log > "$R/vllm.log.gz" 2>/dev/null
tar -C "$OUT" -czf "$OUT/$NAME.tar.gz" "$NAME"
tail -3 "$R/campaign.log"; exit $rc
