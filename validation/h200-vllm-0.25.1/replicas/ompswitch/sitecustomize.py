"""Replicas run 7's team switch (../README.md, run 7): in a Python process started with MASKCOST_OMP_SWITCH=N (run.sh
puts this folder first on PYTHONPATH for server A), the real-time signal SIGRTMIN+3 sets torch's intra-op team to one
thread and SIGRTMIN+4 back to N, so one server's OpenMP team changes between two sweeps without a restart (runs 3-6
restarted the server for it, and a restart alone moved a point by up to 37%). Each switch is logged to
/tmp/ompswitch-PID. Python runs a handler on the main thread between bytecodes: vLLM's EngineCore (TP=1) copies the
bitmask on that thread (docs/engines.md, "The bitmask's pinned copy")."""
import os
import signal

TEAM_OF_ONE, TEAM_BACK = signal.SIGRTMIN + 3, signal.SIGRTMIN + 4


def _switch(threads: int):
    def handler(signum, frame):
        import torch  # imported on the first switch only: a process that never gets one never loads it here
        torch.set_num_threads(threads)
        with open(f"/tmp/ompswitch-{os.getpid()}", "a") as f:
            name = open("/proc/self/comm").read().strip()
            f.write(f"{os.getpid()} {name} asked {threads} has {torch.get_num_threads()}\n")
    return handler


if os.environ.get("MASKCOST_OMP_SWITCH"):
    try:
        signal.signal(TEAM_OF_ONE, _switch(1))
        signal.signal(TEAM_BACK, _switch(int(os.environ["MASKCOST_OMP_SWITCH"])))
    except ValueError:  # not the main thread: no handler, and send.py signals only processes that have one
        pass
