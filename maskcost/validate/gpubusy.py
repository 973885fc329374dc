"""The GPU's busy fraction over a sweep point, where the server's GPU is on this machine: NVML's
utilization.gpu (the share of its sample period in which a kernel ran), sampled every SAMPLE_S over the
point's window through pynvml (nvidia-ml-py; vLLM carries a copy), on the GPUs the server's
processes run on (where NVML names none of them, the machine's one GPU; with more, nothing). The model's figure beside it is
model.metrics.what_the_engine_shows's gpu_busy_fraction (its kernels' time over the window, where the profile's
calibration read this beside its schema-off points, else the whole forward's: an upper bound): a host-bound
step shows as a GPU that idles. calibrate keeps the reading with each forward point (ForwardPoint.gpu_busy). Where NVML is not here (no GPU, no pynvml, a server elsewhere) the point is
recorded without it."""
from __future__ import annotations

import statistics
import threading
from typing import Any

SAMPLE_S = 0.1


class GpuMeter:
    """start() at the window's opening, stop() at its close: {"fraction", "samples", "gpus", "source"} or None."""

    def __init__(self, server_pids: list[int]) -> None:
        self.pids = set(server_pids)
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # a server elsewhere (no process of it here): this machine's GPUs are not its
        self.nvml, self.handles, self.gpus = _open(self.pids) if self.pids else (None, [], [])

    def start(self) -> None:
        if self.nvml is None:
            return
        self._thread = threading.Thread(target=self._run, name="gpu-meter", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.samples.append(statistics.fmean(self.nvml.nvmlDeviceGetUtilizationRates(h).gpu
                                                     for h in self.handles) / 100.0)
            except Exception:  # noqa: BLE001  (a GPU gone mid-point: what was sampled stands)
                return
            self._stop.wait(SAMPLE_S)

    def stop(self) -> dict[str, Any] | None:
        if self._thread is None:
            return None
        self._stop.set()
        self._thread.join()
        if not self.samples:
            return None
        return {"fraction": statistics.fmean(self.samples), "samples": len(self.samples), "gpus": self.gpus,
                "source": "NVML utilization.gpu"}


def _open(pids: set[int]) -> tuple[Any, list[Any], list[int]]:
    """pynvml and the handles of the GPUs the server runs on; (None, [], []) where there is no NVML here."""
    try:
        try:
            import pynvml
        except ImportError:  # vLLM carries its own copy
            from vllm.third_party import pynvml  # type: ignore[no-redef]
        pynvml.nvmlInit()
        n = pynvml.nvmlDeviceGetCount()
    except Exception:  # noqa: BLE001  (not installed, no driver, no GPU)
        return None, [], []
    if n == 0:
        return None, [], []
    try:
        handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(n)]
    except Exception:  # noqa: BLE001
        return None, [], []
    mine = []
    for i, h in enumerate(handles):
        try:
            procs = pynvml.nvmlDeviceGetComputeRunningProcesses(h)
        except Exception:  # noqa: BLE001
            continue
        if any(p.pid in pids for p in procs):
            mine.append(i)
    # NVML names no process of the server (a container's pids are not the host's): only a machine of one
    # GPU says which it is; with more, a mean over all of them would dilute it, so nothing is recorded
    gpus = mine or ([0] if n == 1 else [])
    return (pynvml, [handles[i] for i in gpus], gpus) if gpus else (None, [], [])
