"""Post hoc on shape runs 6-11 (docs/validation.md finding 47): the API server's loop costs fitted on the rates over
the window the loop's CPU was read on (the engine's generated tokens over that window, calibrate.api_cpu
window_tokens_per_s) against the client's rates over the point's whole span (the fit of findings 39-45), each
through calibrate's chain and scored as registered (api_split.py, api_cpu.py: a copy of the run under /tmp), both
with the model of finding 46 (traces dealt, each point run to +-2%).
  python validation/h200-vllm-0.25.1/shape/posthoc/api_window.py [RUN ...]   (repository root) -> api_window.txt
  RATES=client: the same with the client's rates (api_window-client.txt)"""
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import api_split  # noqa: E402
import maskcost.calibrate.api_cpu as api_cpu_lib  # noqa: E402

if os.environ.get("RATES") == "client":
    api_cpu_lib.window_tokens_per_s = lambda s: s.out_tok_per_s
else:  # the held-out points' loop CPU read at their window's rates too (api_split.held_out)
    def _window_rates(s):
        tok = api_cpu_lib.window_tokens_per_s(s)
        return tok / s.output_tokens_mean, tok
    api_split.rates = _window_rates

if __name__ == "__main__":
    api_split.main(sys.argv[1:] or ["run6", "run7", "run8", "run9", "run10", "run11"])
