# The embedded default's recipe and the cross-session table, shared by j/ and l/ (source it from
# the repository root). make_default: session E's post-hoc profile (forward curve, prefill, context,
# API server; grammar costs from sessions A-C) plus xgrammar's EngineFill fitted on the given sweeps
# and guidance's on session I's guidance points. cross_row/cross_summary: sweeps against profiles
# with the model as it stands.
V=validation/h200-vllm-0.25.1
make_default() {  # make_default OUT NAME PROVENANCE SPEED PROBE_DIR SWEEP...
  local out=$1 name=$2 prov=$3 speed=$4 probe=$5 T; shift 5; T=$(mktemp -d)
  python3 -m maskcost.cli report --sweep "$@" --probe "$probe" --cpu-speed "$speed" \
    --profile $V/e/profile-e-posthoc.json.gz --fit-engine-fill $T/x.json.gz --out $T/rx --title fit | grep wrote
  python3 -m maskcost.cli report --backend guidance --sweep $V/i/i5-guidance-calib.jsonl $V/i/i5-guidance.jsonl \
    --probe $V/i/probe --cpu-speed "$(cat $V/i/speed.txt)" --profile $T/x.json.gz --fit-engine-fill $T/xg.json.gz \
    --out $T/rg --title fit | grep wrote
  python3 - "$T/xg.json.gz" "$out" "$name" "$prov" <<'PY'
import sys
from dataclasses import replace
from maskcost.calibrate.profile import load_profile, save_profile
p = load_profile(sys.argv[1])
save_profile(replace(p, name=sys.argv[3], provenance={**p.provenance, "engine_fill": sys.argv[4]}), sys.argv[2])
print(f"wrote {sys.argv[2]}")
PY
  rm -rf "$T"
}
cross_row() {  # cross_row OUTDIR "LABEL=PROFILE ..." NAME SPEED "ENGINE ARGS" SWEEP...: one table row per profile
  local o=$1 profs=$2 name=$3 speed=$4 eng=$5 lp prof; shift 5
  for lp in $profs; do
    prof=${lp%%=*}
    python3 -m maskcost.cli report $eng --cpu-speed $speed --profile ${lp#*=} --sweep "$@" --out $o/$name-$prof \
      --title "$name, default $prof" > /dev/null 2>&1 || { echo "| $name | $prof | failed |"; continue; }
    local pts=$(grep -E "^\| on" $o/$name-$prof/report.md | awk -F'|' '{printf "%s:%s ", $3, $9}')
    echo "| $name | $prof | $(grep -m1 -- '- ITL ms' $o/$name-$prof/report.md | sed 's/- ITL ms: //') | $pts |"
  done
}
cross_rows_al() {  # cross_rows_al: every schema-on sweep of sessions A-L, one `row NAME SPEED "ENGINE ARGS"
  # SWEEP...` call each (the caller defines row), at each session's idle bench speed (I 0.926, J 0.877,
  # K 0.907, L 0.94 from the meter's first minute; else 1)
  local SI SJ SK SL=0.94 X="--backend xgrammar" G="--backend guidance" N="--spec-tokens 3 --spec-method ngram --spec-draft-rate 0"
  SI=$(cat $V/i/speed.txt); SJ=$(awk '/speed/ {print $6}' $V/j/bench-start.txt); SK=$(cat $V/k/speed.txt)
  row A-xgrammar 1.0 "$X" $V/a/on.jsonl
  row E-h5-xgrammar 1.0 "$X" $V/e/h5-on-short.jsonl
  row E-h3-shared1000 1.0 "$X" $V/e/h3-on-shared1000.jsonl
  row H-xgrammar 1.0 "$X" $V/h/h-on-short.jsonl
  row I-xgrammar $SI "$X" $V/i/i1-calib.jsonl $V/i/i2-on-short.jsonl
  row J-xgrammar $SJ "$X" $V/j/j1-calib.jsonl $V/j/j2-on-short.jsonl
  row K-xgrammar $SK "$X --cores 14" $V/k/k1-calib.jsonl $V/k/k2-held.jsonl
  row L-xgrammar $SL "$X --cores 14" $V/l/l1-calib.jsonl $V/l/l2-held.jsonl
  row D-guidance 1.0 "$G" $V/d/guidance/on.jsonl
  row I-guidance $SI "$G" $V/i/i5-guidance-calib.jsonl $V/i/i5-guidance.jsonl
  row D-mns128 1.0 "$X --max-num-seqs 128" $V/d/mns128/on.jsonl
  row K-mns128 $SK "$X --cores 14 --max-num-seqs 128" $V/k/k3-mns128.jsonl
  row D-ngram3 1.0 "$X $N" $V/d/ngram3/on.jsonl
  row K-ngram3 $SK "$X --cores 14 $N" $V/k/k4-ngram.jsonl
  row D-taskset4 1.0 "$X --cores 4 --cpu-count 16" $V/d/taskset4/on.jsonl
  row I-taskset4 $SI "$X --cores 4 --cpu-count 16" $V/i/i7-taskset4.jsonl
}
cross_summary() {  # cross_summary OUTDIR "FITTED ROW NAMES" LABEL...: median |ITL error| per profile
  python3 - "$@" <<'PY'
import glob, json, statistics, sys
print()
fitted = sys.argv[2].split()
for prof in sys.argv[3:]:
    every, held = [], []
    for f in sorted(glob.glob(f"{sys.argv[1]}/*-{prof}/report.json")):
        name = f.split("/")[-2].rsplit("-", 1)[0]
        errs = [abs(r["metrics"]["ITL ms"]["error_pct"]) for r in json.load(open(f))["rows"]
                if r["arm"] == "on" and r["metrics"]["ITL ms"]["error_pct"] is not None]
        every += errs
        held += [] if name in fitted else errs
    print(f"- {prof}: {len(every)} points, median |ITL error| {statistics.median(every):.1f}%; "
          f"the {len(held)} points not in {', '.join(fitted)}: {statistics.median(held):.1f}%")
PY
}
