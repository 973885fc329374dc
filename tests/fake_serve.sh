#!/bin/bash
# A stand-in for serve_sglang.sh on a CPU machine (validation/h200-sglang-0.5.17/campaign.sh's dry run):
# starts tests/fake_server.py's server on $PORT, writes the log lines campaign.sh waits for, as serve_sglang.sh does (log /tmp/sglang-$PORT.log, pid /tmp/sglang-$PORT.pid).
set -u
BACKEND=$1; MNS=$2; PORT=${PORT:-8000}; LOG=/tmp/sglang-$PORT.log
[ -f "/tmp/sglang-$PORT.pid" ] && { kill "$(cat "/tmp/sglang-$PORT.pid")" 2>/dev/null; sleep 1; }
cd "$(dirname "$0")" || exit 1
setsid nohup "${PY:-python3}" -c "
import sys, time; sys.path.insert(0, '.')
from fake_server import FakeEngine, FakeServer
e = FakeEngine('{\"name\": \"Al\", \"ok\": true}', base_step_ms=2.0, per_request_ms=0.05); e.grammar_ms_per_row = 1.5
srv = FakeServer(e, port=$PORT).__enter__(); print('Memory pool end', flush=True); time.sleep(3600)
" > "$LOG" 2>&1 < /dev/null &
echo $! > "/tmp/sglang-$PORT.pid"
for i in $(seq 1 40); do grep -q "Memory pool end" "$LOG" 2>/dev/null && { echo "fake ($BACKEND, :$PORT) up after $i s"; exit 0; }; sleep 0.5; done
echo "fake not up"; cat "$LOG"; exit 1
