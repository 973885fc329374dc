"""Put on PYTHONPATH by gil/run.sh: where MASKCOST_SWITCH_MS is set, the vLLM API server's process (the one started as
`python -m vllm.entrypoints.cli.main`) runs with that GIL switch interval (sys.setswitchinterval; CPython's default is
5 ms), and every process it forks goes back to the default; a spawned child (`python -c ...`) is left as it is."""
import os
import sys

_ms = os.environ.get("MASKCOST_SWITCH_MS")
if _ms and "vllm.entrypoints.cli.main" in getattr(sys, "orig_argv", []):
    _default = sys.getswitchinterval()
    sys.setswitchinterval(float(_ms) / 1e3)
    os.register_at_fork(after_in_child=lambda: sys.setswitchinterval(_default))
    print(f"maskcost gil/sitecustomize: pid {os.getpid()} switch interval {sys.getswitchinterval()} s", file=sys.stderr)
