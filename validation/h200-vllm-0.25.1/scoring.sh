# The report scripts' shell helpers from session S on (s/, t/, u/report.sh; source after setting V):
# a server's row of the table of the median-itl rule, the table's header, and its summary line.
itl_row() {  # itl_row DIR BENCH_SPEED OUT NAME GRID SERVER: tracking_report.py --rule median-itl (with $PROFILE where set) on
  # DIR/SERVER-open.jsonl and DIR/SERVER.jsonl (the probe in DIR/probe), its JSON line appended to OUT
  local dir=$1 bench=$2 out=$3 name=$4 grid=$5 s=$6
  ls "$dir/$s-open.jsonl" "$dir/$s.jsonl" > /dev/null 2>&1 || { echo "| $name | not measured |"; return 0; }
  python3 $V/tracking_report.py --rule median-itl ${PROFILE:+--profile "$PROFILE"} "$name" "$grid" "$bench" "$dir/probe" "$dir/$s-open.jsonl" \
    "$dir/$s.jsonl" 2>> "$out"; }
itl_header() {
  echo "| server | bench speed | points | median of earlier ITL speeds | bench, same points | bench, all | at a grid edge | per point (conc: bench / median of earlier (speed)) |"
  echo "|---|---|---|---|---|---|---|---|"; }
itl_summary() {  # itl_summary OUT LABEL [BENCH_LABEL]: scoring.summary over OUT's JSON lines
  python3 -c "import sys; sys.path.insert(0, '$V'); from scoring import summary; summary(*sys.argv[1:])" "$@"; }
