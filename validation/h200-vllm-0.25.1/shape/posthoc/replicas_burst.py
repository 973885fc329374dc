"""Post hoc on the replicas check's runs 1-4 (docs/validation.md finding 29): every cell predicted again with the
model as main has it now, where a replica's copy spinners spin all at once (model/host_share.py: the others'
bursts in the host factor, their CPUs crowding its own burst, Share.crowd_cpus), each run's cells and the team
of 8 its server had; scored by the registered rule (replicas/check.py). Before (finding 27's model, spinners
spread): runs 1-3 5.2%, 11.0%, 2.2%, directions 8, 6, 8 of 8 (replicas_crowd.txt); run 4's replicas phase 9.6%,
3 of 4 (as registered).
  python validation/h200-vllm-0.25.1/shape/posthoc/replicas_burst.py   (repository root) -> stdout (replicas_burst.txt)"""
from replicas_crowd import rescore

if __name__ == "__main__":
    for run in ("run1", "run2", "run3"):
        print(rescore(run, {"omp_threads": 8}))
    print(rescore("run4"))
