#!/bin/bash
# The embedded default after sessions I and J (defaults.sh: make_default): xgrammar's EngineFill
# fitted on all of session J's points (one server, bench 57.5 -> 58.4 ms over the session) at J's
# bench speed, guidance's on session I's guidance points.
# usage: bash validation/h200-vllm-0.25.1/j/make_default.sh OUT.json.gz
set -eu
source validation/h200-vllm-0.25.1/defaults.sh
J=$V/j
make_default "$1" h200-vllm-0.25.1-ij "validation/h200-vllm-0.25.1/j/make_default.sh: xgrammar from session J's probe \
(all points), guidance from session I's guidance points" "$(awk '/speed/ {print $6}' $J/bench-start.txt)" $J/probe \
  $J/j1-calib.jsonl $J/j2-on-short.jsonl
