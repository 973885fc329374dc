"""Post hoc (finding 65): does vLLM's API server merge a request's streamed outputs (RequestOutputCollector.put adds a
step's delta to one the request's stream has not yet taken) where its process is full? Over shape runs 10-15's sweeps
(calibrate's forward and speed sweeps, the held-out points), each point's tokens a streamed chunk (the client's
chunk_tokens), its API process's CPU (servercpu's listening process) and the engine's tokens a second; then the
process's CPU a token and a chunk on the schema-off forward sweep. Run from validation/h200-vllm-0.25.1/shape:
python3 posthoc/chunk_merge.py > posthoc/chunk_merge.txt"""
import collections
import gzip
import json
import pathlib
import statistics

RUNS = [f"run{i}" for i in range(10, 16)]


def chunks(raw: pathlib.Path) -> dict[str, list[int]]:
    agg = collections.defaultdict(lambda: [0, 0])
    for line in gzip.open(raw, "rt"):
        r = json.loads(line)
        ct = r.get("chunk_tokens")
        if ct and len(ct) > 1:  # after the first chunk (the first token's): the chunks a decoding stream sends
            agg[r["point"]][0] += len(ct) - 1
            agg[r["point"]][1] += ct[-1] - ct[0]
    return agg


def points(run: str):
    for summ in sorted(pathlib.Path(run).rglob("*.jsonl")):
        raw = summ.with_name(summ.name[:-6] + ".raw.jsonl.gz")
        if ".raw." in summ.name or not raw.exists():
            continue
        ch = chunks(raw)
        for line in open(summ):
            p = json.loads(line)
            e = p.get("engine") or {}
            api = [q for q in (e.get("server_cpu") or {}).get("by_process", []) if q.get("listens")]
            if p["point"] in ch and api and e.get("gen_tokens_per_s"):
                n, t = ch[p["point"]]
                yield (str(summ.relative_to(run)), p["arm"], p["concurrency"], t / n, api[0]["cpus"],
                       e["gen_tokens_per_s"], e["running_mean"])


def main() -> None:
    print(__doc__.split("\n\n")[0].replace("\n", " "), "\n")
    on_max, off = [], collections.defaultdict(list)
    for run in RUNS:
        pts = list(points(run))
        on = [p for p in pts if p[1] == "on"]
        top = max(on, key=lambda p: p[3])
        on_max.append(top[3])
        print(f"{run}: schema-on, {len(on)} points: tokens a chunk median {statistics.median(p[3] for p in on):.3f}, "
              f"most {top[3]:.3f} ({top[0]} {top[2]} clients, its process {top[4]:.2f} CPU); the process at >= 0.95 "
              f"CPU at {sum(p[4] >= 0.95 for p in on)} of them, tokens a chunk there "
              f"{', '.join(f'{p[3]:.3f}' for p in on if p[4] >= 0.95) or '-'}")
        for p in pts:
            if p[1] == "off" and "forward-sweep" in p[0]:
                off[p[2]].append(p)
                print(f"   schema-off forward sweep {p[2]:3d} clients: tokens a chunk {p[3]:.2f}, process {p[4]:.2f} CPU, "
                      f"{p[5]:6.0f} tokens/s, {p[6]:5.1f} rows of {p[2]}; {1e6 * p[4] / p[5]:4.0f} us a token, "
                      f"{1e6 * p[4] * p[3] / p[5]:4.0f} us a chunk")
    print("\nschema-off forward sweeps, runs 10-15, median by clients: tokens a chunk; the process's CPU; us a token; us a chunk")
    for c, ps in sorted(off.items()):
        med = lambda f: statistics.median(f(p) for p in ps)  # noqa: E731
        print(f"   {c:3d}: {med(lambda p: p[3]):.2f}; {med(lambda p: p[4]):.2f}; {med(lambda p: 1e6 * p[4] / p[5]):4.0f}; "
              f"{med(lambda p: 1e6 * p[4] * p[3] / p[5]):4.0f}")
    print(f"\nschema-on: the most merged point of each run {', '.join(f'{x:.3f}' for x in on_max)} tokens a chunk")


if __name__ == "__main__":
    main()
