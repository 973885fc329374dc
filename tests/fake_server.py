"""A small fake OpenAI-compatible server for unit tests of the client, metrics parsing and sweep
bookkeeping (never used by a feature). It streams a canned JSON text a few characters per chunk,
with a step time that grows with the number of running requests, and exposes vLLM-named metrics."""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeEngine:
    def __init__(self, text: str, base_step_ms: float = 2.0, per_request_ms: float = 0.05,
                 chars_per_token: int = 3) -> None:
        self.text = text
        self.base_step_ms = base_step_ms
        self.per_request_ms = per_request_ms
        self.chars_per_token = chars_per_token
        self.lock = threading.Lock()
        self.running = 0
        self.steps = 0
        self.itl_sum = 0.0
        self.itl_count = 0
        self.generated = 0
        self.fail_after: int | None = None  # answer HTTP 500 once this many requests were served
        self.grammar_ms_per_row = 0.0  # each running schema-on request adds this to every step
        self.constrained = 0
        self.served = 0
        self.prompts: list[str] = []
        self.server_info: dict | None = None  # set: answer as SGLang does (no /version; /server_info this)

    def metrics(self) -> str:
        with self.lock:
            return (
                "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n"
                "# TYPE vllm:cache_config_info gauge\n"
                'vllm:cache_config_info{block_size="16",engine="0",gpu_memory_utilization="0.85"} 1.0\n'
                "# HELP vllm:num_requests_running Number of requests in model execution batches.\n"
                "# TYPE vllm:num_requests_running gauge\n"
                f'vllm:num_requests_running{{engine="0",model_name="fake"}} {self.running}\n'
                "# HELP vllm:iteration_tokens_total Histogram of tokens per engine step.\n"
                "# TYPE vllm:iteration_tokens_total histogram\n"
                f'vllm:iteration_tokens_total_bucket{{engine="0",le="+Inf",model_name="fake"}} {self.steps}\n'
                f'vllm:iteration_tokens_total_count{{engine="0",model_name="fake"}} {self.steps}\n'
                f'vllm:iteration_tokens_total_sum{{engine="0",model_name="fake"}} {self.generated}\n'
                "# HELP vllm:inter_token_latency_seconds Histogram of inter-token latency in seconds.\n"
                "# TYPE vllm:inter_token_latency_seconds histogram\n"
                f'vllm:inter_token_latency_seconds_bucket{{engine="0",le="+Inf",model_name="fake"}} {self.itl_count}\n'
                f'vllm:inter_token_latency_seconds_count{{engine="0",model_name="fake"}} {self.itl_count}\n'
                f'vllm:inter_token_latency_seconds_sum{{engine="0",model_name="fake"}} {self.itl_sum}\n'
                "# HELP vllm:generation_tokens_total Number of generation tokens processed.\n"
                "# TYPE vllm:generation_tokens_total counter\n"
                f'vllm:generation_tokens_total{{engine="0",model_name="fake"}} {self.generated}\n')


def make_handler(engine: FakeEngine):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):  # quiet
            pass

        def _json(self, code: int, obj) -> None:
            body = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path == "/v1/models":
                self._json(200, {"data": [{"id": "fake"}]})
            elif self.path == "/version" and engine.server_info is None:
                self._json(200, {"version": "fake-0"})
            elif self.path == "/server_info" and engine.server_info is not None:
                self._json(200, engine.server_info)
            elif self.path == "/metrics":
                body = engine.metrics().encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            else:
                self._json(404, {"error": "no"})

        def do_POST(self):
            req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with engine.lock:
                engine.served += 1
                if engine.fail_after is not None and engine.served > engine.fail_after:
                    self._json(500, {"error": "engine dead"})
                    return
            schema = ((req.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}
            if schema.get("x-fake-refuse") == "stream":  # as SGLang aborts one: an error event after HTTP 200
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                self.wfile.write(b'data: {"error": {"object": "error", "message": "Invalid grammar request", '
                                 b'"type": "BAD_REQUEST", "param": null, "code": 400}}\n\ndata: [DONE]\n\n')
                return
            if schema.get("x-fake-refuse"):  # as vLLM refuses a grammar its backend cannot build
                self._json(400, {"error": {"message": "The provided JSON schema contains features not supported by "
                                           "xgrammar.", "type": "BadRequestError", "code": 400}})
                return
            prompt = req["messages"][0]["content"]
            with engine.lock:
                engine.prompts.append(prompt)
            n_prompt = len(prompt.split())  # a word per token: enough to see padding arrive
            constrained = "response_format" in req or "tools" in req
            tool = None  # a tool request: the text streams as the arguments of one call, as vLLM streams them
            if "tools" in req:
                choice = req.get("tool_choice")
                tool = choice["function"]["name"] if isinstance(choice, dict) else req["tools"][0]["function"]["name"]
            text = engine.text if constrained else "x" * (engine.chars_per_token * req["max_tokens"])
            n = engine.chars_per_token
            pieces = [text[i:i + n] for i in range(0, len(text), n)][: req["max_tokens"]]
            finish = "stop" if len(pieces) * n >= len(text) else "length"
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()

            def send(obj) -> None:
                # raw UTF-8 like llama.cpp (no escapes), so a U+2028 in the text reaches the client as is
                data = f"data: {obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False)}\n\n".encode()
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

            with engine.lock:
                engine.running += 1
                engine.constrained += constrained
            try:
                for i, p in enumerate(pieces):
                    with engine.lock:
                        step = (engine.base_step_ms + engine.per_request_ms * engine.running
                                + engine.grammar_ms_per_row * engine.constrained) / 1e3
                    time.sleep(step)
                    with engine.lock:
                        engine.steps += 1
                        engine.generated += 1
                        if i:
                            engine.itl_sum += step
                            engine.itl_count += 1
                    last = i == len(pieces) - 1
                    delta = {"content": p} if tool is None else {"tool_calls": [
                        {"index": 0, "function": {"arguments": p, **({"name": tool} if i == 0 else {})}}]}
                    send({"choices": [{"index": 0, "delta": delta,
                                       "finish_reason": finish if last else None}],
                          "usage": {"prompt_tokens": n_prompt, "completion_tokens": i + 1}})
                send("[DONE]")
                self.wfile.write(b"0\r\n\r\n")
            finally:
                with engine.lock:
                    engine.running -= 1
                    engine.constrained -= constrained

    return Handler


class FakeServer:
    def __init__(self, engine: FakeEngine, port: int = 0) -> None:
        self.engine = engine
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), make_handler(engine))
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> "FakeServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
