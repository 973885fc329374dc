#!/bin/bash
# Device session G: why session F's schema-on ITL was 30-55% above session E's on the same
# configuration. A/B on one server: the client on core 15 alone (as in sessions A-E) vs spread over
# cores 12-15 in 2 processes (as in F), and the host's single-thread xgrammar benchmark (bench_us,
# the number that scales fill traces between hosts) before the server starts.
#   bash validation/h200-vllm-0.25.1/session_g.sh
set -u
DEADLINE_S=${DEADLINE_S:-585}
[ -d /tmp/mc ] || pip install -q --no-index --no-deps --target /tmp/mc .device-wheels/*.whl > /dev/null 2>&1
export PYTHONPATH=/tmp/site:/tmp/mc:$PWD
MC="python3 -m maskcost.cli"; U=http://127.0.0.1:8000
R=$OUT/g; mkdir -p "$R"
pack() { gzip -c /tmp/vllm.log > "$R/vllm.log.gz" 2>/dev/null; tar -C "$OUT" -czf "$OUT/g.tar.gz" g; }
run() { local log=$1; shift; echo "$(date -u +%FT%T.%3NZ) [$SECONDS s] $log: $*" >> "$R/steps.txt"
        timeout 150 "$@" > "$R/$log.log" 2>&1; echo "rc $?" >> "$R/steps.txt"; pack; }
bench() { python3 -c "
from maskcost.calibrate.tokenizer import load_vocab; from maskcost.calibrate.host import bench_us
v = load_vocab('llama3'); print('bench_us', round(bench_us(v), 1), round(bench_us(v), 1), round(bench_us(v), 1))"; }
run bench-idle bench
run serve bash .device-stage/b/serve_vllm.sh xgrammar 256 --structured-outputs-config.disable_any_whitespace true
run bench-server-idle bench
S="sweep --base-url $U --arms on --tier flat bounded --concurrency 8 64 --rounds 6 --min-requests 32"
run g1-core15 taskset -c 15 $MC $S --out $R/g1-core15.jsonl --label "client core 15, 1 process"
run g2-cores12-15 taskset -c 12-15 $MC $S --out $R/g2-cores12-15.jsonl --label "client cores 12-15, 2 processes" --client-procs 2
run g3-core15 taskset -c 15 $MC $S --out $R/g3-core15.jsonl --label "client core 15, 1 process, again"
pack
