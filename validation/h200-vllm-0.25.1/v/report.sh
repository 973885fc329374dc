#!/bin/bash
# Session V report, written before the session (session_v.sh says what is pre-registered): u/report.sh
# on V's servers v1-v3 (U's grids), with a table at each server's own start bench and P-V pooled.
# usage (from the repository root): bash validation/h200-vllm-0.25.1/v/report.sh > validation/h200-vllm-0.25.1/v/score.md
S=v exec bash validation/h200-vllm-0.25.1/u/report.sh
