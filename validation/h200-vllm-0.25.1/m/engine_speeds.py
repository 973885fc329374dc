"""l/engine_speeds.py with session M's three xgrammar servers added (M1 and M1b: machine 1, first and
second server, bench 1.003; M2: machine 2, bench 0.830; m/bench-start.txt, m/bench-fresh.txt).
usage: python validation/h200-vllm-0.25.1/m/engine_speeds.py PROFILE OUT.json"""
import sys

sys.path.insert(0, "validation/h200-vllm-0.25.1/l")
import engine_speeds as es  # noqa: E402  (l/engine_speeds.py: the method and sessions A-L)


def bench(name: str) -> float:
    return float(open(f"{es.V}/m/{name}").read().split("speed")[-1])


es.BENCH.update({"M1": bench("bench-start.txt"), "M1b": bench("bench-start.txt"), "M2": bench("bench-fresh.txt")})
es.SERVERS.update({"M1": ([f"{es.V}/m/m1-xgrammar.jsonl"], 14), "M1b": ([f"{es.V}/m/m5-xgrammar-2.jsonl"], 14),
                   "M2": ([f"{es.V}/m/m7-xgrammar-3.jsonl"], 14)})
if __name__ == "__main__":
    es.main()
