"""Switch the OpenMP team of the processes given (sitecustomize.py here): python3 send.py 1|back PID ... Signals only
the processes that catch the signal (their /proc/PID/status SigCgt), so none is killed by a signal it does not
handle; prints each process it signalled and each it skipped, and exits 1 where it signalled none."""
import os
import signal
import sys

if len(sys.argv) < 2 or sys.argv[1] not in ("1", "back"):
    sys.exit("usage: python3 send.py 1|back PID ...")
sig = signal.SIGRTMIN + (3 if sys.argv[1] == "1" else 4)
signalled = 0
for pid in map(int, sys.argv[2:]):
    try:
        status = open(f"/proc/{pid}/status").read()
    except OSError:
        continue
    caught = int(next(x.split()[1] for x in status.splitlines() if x.startswith("SigCgt:")), 16)
    name = next(x.split(None, 1)[1] for x in status.splitlines() if x.startswith("Name:"))
    if caught >> (sig - 1) & 1:
        os.kill(pid, sig)
        signalled += 1
        print(f"team {sys.argv[1]}: signalled {pid} {name}")
    else:
        print(f"team {sys.argv[1]}: skipped {pid} {name} (no handler)")
if not signalled:  # no process switched: the sweeps after it would be scored as a team they did not run
    sys.exit(f"team {sys.argv[1]}: no process caught the signal")
