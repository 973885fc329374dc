# Session E's held-out sets, reported by report.sh (pre-registered) and report_posthoc.sh (post hoc):
# source after defining rep NAME TITLE [--score-off] and OUTDIR (where rep writes NAME/report.md).
rep h1-off-unique1000 "schema off, unique 1000-token prompts (every prompt computed)" --score-off
rep h2-off-shared3000 "schema off, a shared 3000-token prompt (prefix-cached)" --score-off
rep h3-on-shared1000 "xgrammar flat + bounded, a shared 1000-token prompt"
rep h4-on-unique "xgrammar, unique schemas (variant compile)"
rep h5-on-short "xgrammar flat + bounded, session A's configuration again, 8 rounds, 2 repeats"
for n in h1-off-unique1000 h2-off-shared3000 h3-on-shared1000 h4-on-unique h5-on-short; do
  echo "== $n"; sed -n '/^| arm/,$p' $OUTDIR/$n/report.md | grep -v "^!\[" | grep -v "^$"
done
