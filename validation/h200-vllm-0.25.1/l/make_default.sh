#!/bin/bash
# A default after sessions K and L (defaults.sh: make_default): xgrammar's EngineFill fitted on all
# max-num-seqs 256 points of sessions J, K and L at once (a concurrency measured on several servers
# counts once, their mean), at 0.908, the mean of the three sessions' idle bench speeds (J 0.877,
# K 0.907, L 0.94: the meter's median over its first minute, before the server was up; L's own end
# bench ran beside the meter and read 0.571); guidance's on session I's guidance points.
# usage: bash validation/h200-vllm-0.25.1/l/make_default.sh OUT.json.gz
set -eu
source validation/h200-vllm-0.25.1/defaults.sh
P=$(mktemp -d); ln -s $PWD/$V/j/probe/* $PWD/$V/k/probe/* $PWD/$V/l/probe/* $P/
make_default "$1" h200-vllm-0.25.1-ijkl "validation/h200-vllm-0.25.1/l/make_default.sh: xgrammar from the probe of \
sessions J, K and L (all max-num-seqs 256 points, speed 0.908), guidance from session I's guidance points" 0.908 $P \
  $V/j/j1-calib.jsonl $V/j/j2-on-short.jsonl $V/k/k1-calib.jsonl $V/k/k2-held.jsonl $V/l/l1-calib.jsonl $V/l/l2-held.jsonl
rm -rf "$P"
