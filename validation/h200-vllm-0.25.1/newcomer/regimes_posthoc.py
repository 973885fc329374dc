"""Post hoc (after runs 1 and 2 were scored): each run's own calibration speed points read apart
on the two sides of vLLM's fill-pool threshold (validate.server_calibration.measured_speed, the rule
calibrate uses from the commit after run 2), then validate's report on the same held-out sweep.
Writes runN/host-regimes.json.gz and runN/val-regimes/. Not a pre-registered score: run 3 is."""
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from maskcost.model.config import EngineConfig
from maskcost.profile import load_profile, save_profile
from maskcost.records import read_summaries
from maskcost.validate.server_calibration import measured_speed

here = Path(__file__).parent
for run in ("run1", "run2"):
    d = here / run
    p = load_profile(d / "host.json.gz")
    m = measured_speed(p.measured_speed.points, read_summaries(d / "host.speed-sweep.jsonl"),
                       EngineConfig(max_num_seqs=256, usable_cores=16, cpu_count=16), "host.speed-sweep.jsonl")
    save_profile(replace(p, measured_speed=m), d / "host-regimes.json.gz")
    print(f"{run}: {m.words()} (was {p.measured_speed.cpu_speed:.3f})")
    subprocess.run([sys.executable, "-m", "maskcost.cli", "report", "--profile", str(d / "host-regimes.json.gz"),
                    "--sweep", str(d / "val" / "sweep.jsonl"), "--out", str(d / "val-regimes")], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print("  " + next(line for line in (d / "val-regimes" / "report.md").read_text().splitlines()
                      if line.startswith("- ITL ms:")))
