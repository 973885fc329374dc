"""l/band_check.py over the servers of sessions A-M (m/engine_speeds.py adds M's three).
usage: python validation/h200-vllm-0.25.1/m/band_check.py PROFILE_WITH_SPEEDS"""
import runpy

runpy.run_path("validation/h200-vllm-0.25.1/m/engine_speeds.py")  # not as __main__: adds M to l's tables
runpy.run_path("validation/h200-vllm-0.25.1/l/band_check.py", run_name="__main__")
