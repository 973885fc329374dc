#!/bin/bash
# The corpus-wide profile for bench_corpus_grid.py, on a many-core host (the device: 16 Xeon cores):
# every schema of the corpus in SHARDS one-core shards side by side (calibrate --corpus, resumable),
# then the fill pool alone on the idle host (the four built-in tiers, the full --pool-rows), then one
# merged profile, cut into parts of 15 MB under $OUT (cat them together). A shard stopped at LIMIT_S
# keeps its traces in its .partial.jsonl (partials.tar.gz in $OUT, with the finished shards' profiles),
# merged as they are; the same command with CARRY=that tar resumes.
# Run from the project root. Needs: the calibrate extra importable (PYTHONPATH), CORPUS (a folder of
# gzip JSON lines), OUT.
set -uo pipefail
SHARDS=${SHARDS:-15}
LIMIT_S=${LIMIT_S:-420}
REPEATS=${REPEATS:-3}  # calibrate --repeats-fill
BACKENDS=${BACKENDS:-xgrammar guidance}  # calibrate --backend
PY=${PY:-python3}
W=${W:-/tmp/corpus-cal}
mkdir -p "$W" "$OUT"
[ -n "${CARRY:-}" ] && tar -C "$W" -xzf "$CARRY"
$PY benchmarks/corpus_profile.py split "$CORPUS" "$W/in" "$SHARDS"
DEF=$($PY -c "from maskcost.profile import default_profile_path; print(default_profile_path())")
NCPU=$(nproc)
t0=$(date +%s)
for i in $(seq 0 $((SHARDS - 1))); do
  s=$(printf %02d "$i")
  [ -f "$W/p$s.json.gz" ] && continue  # finished in an earlier call
  taskset -c $(( (i + 1) % NCPU )) timeout "$LIMIT_S" $PY -m maskcost.cli calibrate --corpus "$W/in/shard$s" \
    --engine-from "$DEF" --out "$W/p$s.json.gz" --pool-rows 16 --repeats-fill "$REPEATS" --backend $BACKENDS --name "corpus-shard$s" > "$W/log$s.txt" 2>&1 &
done
wait
echo "shards: $(( $(date +%s) - t0 )) s; profiles: $(ls "$W"/p[0-9]*.json.gz 2>/dev/null | wc -l) of $SHARDS"
for f in "$W"/log*.txt; do tail -1 "$f" | cut -c1-200; done
tar -C "$W" -czf "$OUT/partials.tar.gz" $(cd "$W" && ls *.partial.jsonl p[0-9]*.json.gz 2>/dev/null) 2>/dev/null || true
[ "$(ls "$W"/p[0-9]*.json.gz | wc -l)" -eq "$SHARDS" ] || echo "not all shards finished: their traced schemas are merged (or run again with CARRY)"
$PY -m maskcost.cli calibrate --tier flat nested deep bounded --engine-from "$DEF" --out "$W/pool.json.gz" \
  --backend $BACKENDS --name corpus-pool > "$W/pool-log.txt" 2>&1 || { tail -5 "$W/pool-log.txt"; exit 4; }
$PY benchmarks/corpus_profile.py merge "$W/corpus.json.gz" "$W/pool.json.gz" \
  $(for i in $(seq 0 $((SHARDS - 1))); do s=$(printf %02d "$i"); [ -f "$W/p$s.json.gz" ] && echo "$W/p$s.json.gz" || echo "$W/p$s.json.gz.partial.jsonl"; done)
sha256sum "$W/corpus.json.gz" > "$OUT/corpus.json.gz.sha256"
split -b 15M -d "$W/corpus.json.gz" "$OUT/corpus.json.gz.part"
cat "$W"/log*.txt | grep -v "it/s\|schema/s\|s/it" | tail -40 > "$OUT/logs.txt"
ls -la "$OUT"
