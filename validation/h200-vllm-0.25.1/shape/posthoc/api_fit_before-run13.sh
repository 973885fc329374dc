#!/bin/bash
# Post hoc on shape run 13 (docs/validation.md finding 57): the API-server fit that finding 54 replaced (calibrate.api_cpu
# as at 7be063f: the loop thread's CPU, a structured request's cost fitted apart from its tokens'), through calibrate's
# chain and scored as registered (api_window.py at that commit), with the forward curve as shipped since finding 56
# (model/costs.py from this commit): against api_token_only.txt's run 13 line, the fit shipped.
#   bash validation/h200-vllm-0.25.1/shape/posthoc/api_fit_before-run13.sh   (repository root) -> api_fit_before-run13.txt
set -eu
ROOT=$PWD; AT=$(mktemp -d)/at
git worktree add -q "$AT" 7be063f
trap 'git -C "$ROOT" worktree remove --force "$AT"' EXIT
cp "$ROOT/maskcost/model/costs.py" "$AT/maskcost/model/costs.py"
cp -r "$ROOT/validation/h200-vllm-0.25.1/shape/run13" "$AT/validation/h200-vllm-0.25.1/shape/"
sed -i 's/"run11", "run12")  # (and the GPU bar)/"run11", "run12", "run13")  # (and the GPU bar)/; s/"run11", "run12")$/"run11", "run12", "run13")/' \
  "$AT/validation/h200-vllm-0.25.1/shape/check.py"
cd "$AT" && PYTHONPATH="$AT" python validation/h200-vllm-0.25.1/shape/posthoc/api_window.py run13 2>/dev/null | grep -v "^calibrate:"
