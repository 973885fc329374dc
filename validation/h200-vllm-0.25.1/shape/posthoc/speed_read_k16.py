"""Post hoc on shape runs 10-13 (docs/validation.md finding 58): calibrate's chain as api_token_only.py runs it (the fit
as shipped), with the speed read's model points run on max(200, 16 x clients) requests where calibrate runs 4 x.
  python validation/h200-vllm-0.25.1/shape/posthoc/speed_read_k16.py [RUN ...]  (repository root) -> speed_read_k16.txt"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import api_cpu  # noqa: E402
import maskcost.validate.server_calibration as sc  # noqa: E402

_attach = sc.attach_itl_speeds
sc.attach_itl_speeds = lambda rows, p, cfg, on, requests_factor=4, **k: _attach(rows, p, cfg, on, requests_factor=16,
                                                                                  progress=False)

if __name__ == "__main__":
    for run in sys.argv[1:] or ["run10", "run11", "run12", "run13"]:
        api_cpu.main([run])
        sys.stdout.flush()
