"""On the device, against a live vLLM at 127.0.0.1:8000: the request sequences of README.md at concurrency 1,
each request's TTFT (the first streamed content), one JSON line each.  python3 seq.py SERVER_LABEL OUT.jsonl"""
import http.client
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEQUENCES = {"repeat": ["cycle_a"] * 10, "alternate": ["cycle_c", "cycle_d"] * 5}
WARM = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}


def one(schema):
    body = {"model": "llama3-8b", "messages": [{"role": "user", "content": "Write a JSON object."}],
            "max_tokens": 8, "temperature": 1.0, "stream": True}
    if schema is not None:
        body["response_format"] = {"type": "json_schema", "json_schema": {"name": "out", "schema": schema, "strict": True}}
    conn = http.client.HTTPConnection("127.0.0.1", 8000, timeout=120)
    t0 = time.perf_counter()
    conn.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
    r = conn.getresponse()
    ttft, status = None, r.status
    while True:
        line = r.readline()
        if not line:
            break
        line = line.decode().strip()
        if ttft is None and line.startswith("data: ") and line[6:] != "[DONE]":
            ev = json.loads(line[6:])
            if any((c.get("delta") or {}).get("content") for c in ev.get("choices") or []):
                ttft = (time.perf_counter() - t0) * 1e3
    conn.close()
    return ttft, status


def main():
    label, out = sys.argv[1], Path(sys.argv[2])
    schemas = {n: json.loads((HERE / "schemas" / f"{n}.json").read_text()) for n in ("cycle_a", "cycle_c", "cycle_d")}
    for _ in range(2):  # the server's first requests, and its structured-output path, warmed on other grammars
        one(None), one(WARM)
    schemas["warm"] = WARM
    with out.open("a") as f:  # first the reference: a tiny grammar, whose compile (if any) is negligible
        for seq, names in {"reference": ["warm"] * 5, **SEQUENCES}.items():
            for i, n in enumerate(names, 1):
                ttft, status = one(schemas[n])
                f.write(json.dumps({"server": label, "sequence": seq, "i": i, "schema": n, "ttft_ms": ttft,
                                    "status": status, "t_unix": time.time()}) + "\n")
                f.flush()
                print(label, seq, i, n, status, None if ttft is None else round(ttft, 1), flush=True)


if __name__ == "__main__":
    main()
