"""Timing probes inside a live vLLM 0.25.1 server: what the engine-core thread, the fill pool and
the API server spend per call, so a step's measured time can be split the way the model splits it
(fill, pool wait, advance, scheduler, launch) and TTFT can be split at the API server.

The probe half runs inside the server's processes and uses the standard library only: `maskcost
probe-site DIR` writes this file as DIR/sitecustomize.py with the engine's methods to time (PROBES, from
its class's probe_targets in model/engines.py); put DIR on the server's PYTHONPATH and set
MASKCOST_PROBE_DIR. Every process that then imports a probed module wraps the methods in PROBES and
appends one tab-separated line per call to MASKCOST_PROBE_DIR/probe-PID.tsv: name, thread name, start
(Unix ns), duration (ns), n (rows, requests or outputs, see _count). Nothing else changes; without the
variable nothing is patched.

validate/inengine.py reads those files and sets them beside the model's step breakdown."""
from __future__ import annotations

import atexit
import functools
import importlib.abc
import inspect
import os
import sys
import threading
import time

ENV_DIR = "MASKCOST_PROBE_DIR"

# (module, class, method, what n counts: _count's kinds): the engine's methods to time, from its class in
# model/engines.py (Engine.probe_targets), written into the sitecustomize.py by write_site; () here.
PROBES: tuple[tuple[str, str, str, str], ...] = ()
# Besides the methods: each garbage collection in a process that records, as "gc.collect" with
# n = the generation collected (gc.callbacks), on the thread that triggered it.


def _count(kind: str, args: tuple, result) -> int:
    if kind == "rows":
        return len(args[2])  # grammar_bitmask(self, requests, structured_output_request_ids, spec_tokens)
    if kind == "pool_chunk":
        return len(args[1])  # _fill_bitmasks(self, batch): a list (pool task) or a 1-tuple (serial)
    if kind == "scheduled":  # schedule() returns the SchedulerOutput
        return len(result.num_scheduled_tokens)
    if kind == "updated":  # update_from_output(self, scheduler_output, model_runner_output)
        return len(args[1].num_scheduled_tokens)
    if kind == "outputs":
        return len(args[1])
    if kind == "model_executed":
        return int(bool(result[1]))
    return 0


class _Recorder:
    """One file per process; a forked child (same patched classes) opens its own on first use."""

    def __init__(self, folder: str):
        self.folder = folder
        self.pid = -1  # opened on the first record: processes that never record get no file, no thread
        self.gc_start: tuple[int, int] | None = None
        atexit.register(self.flush)

    def _open(self) -> None:
        self.pid = os.getpid()
        self.lock = threading.Lock()  # new in a forked child: the parent's may have been held at fork
        self.path = os.path.join(self.folder, f"probe-{self.pid}.tsv")
        self.buf: list[str] = []
        with open(self.path, "a") as f:
            f.write(f"# pid {self.pid} argv {' '.join(sys.argv)[:300]}\n")
        threading.Thread(target=self._flush_every_second, name="maskcost-probe", daemon=True).start()

    def _flush_every_second(self) -> None:  # an idle server still gets its last calls written
        while True:
            time.sleep(1.0)
            self.flush()

    def on_gc(self, phase: str, info: dict) -> None:
        if phase == "start":
            self.gc_start = (time.time_ns(), time.perf_counter_ns())
        elif self.pid == os.getpid() and self.gc_start is not None:  # a process that records
            t0, p0 = self.gc_start
            self.buf.append(f"gc.collect\t{threading.current_thread().name}\t{t0}\t"
                            f"{time.perf_counter_ns() - p0}\t{info.get('generation', -1)}\n")

    def add(self, name: str, start_ns: int, dur_ns: int, n: int) -> None:
        if os.getpid() != self.pid:
            self._open()
        self.buf.append(f"{name}\t{threading.current_thread().name}\t{start_ns}\t{dur_ns}\t{n}\n")
        if len(self.buf) >= 4096:
            self.flush()

    def flush(self) -> None:
        if self.pid != os.getpid():
            return
        with self.lock:
            lines, self.buf = self.buf, []
            if lines:
                with open(self.path, "a") as f:
                    f.writelines(lines)


def _wrap(rec: _Recorder, fn, name: str, kind: str):
    def n_of(args, result) -> int:
        try:
            return _count(kind, args, result)
        except Exception:  # a probe must never break the server it measures
            return -1
    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def awrapped(*args, **kwargs):
            t0, p0 = time.time_ns(), time.perf_counter_ns()
            result = await fn(*args, **kwargs)
            rec.add(name, t0, time.perf_counter_ns() - p0, n_of(args, result))
            return result
        return awrapped

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        t0, p0 = time.time_ns(), time.perf_counter_ns()
        result = fn(*args, **kwargs)
        n = n_of(args, result)
        if kind != "pool_chunk" or n > 1:
            rec.add(name, t0, time.perf_counter_ns() - p0, n)
        return result
    return wrapped


class _PatchOnImport(importlib.abc.MetaPathFinder):
    """Lets the normal finders load a probed module, then wraps its methods once it has run."""

    def __init__(self, rec: _Recorder):
        self.rec = rec
        self.todo: dict[str, list[tuple[str, str, str]]] = {}
        for mod, cls, meth, kind in PROBES:
            self.todo.setdefault(mod, []).append((cls, meth, kind))

    def find_spec(self, fullname, path, target=None):
        if fullname not in self.todo:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                break
        else:
            return None
        run = spec.loader.exec_module

        def exec_module(module, run=run, probes=self.todo.pop(fullname)):
            run(module)
            for cls, meth, kind in probes:
                if cls not in module.__dict__ or meth not in vars(module.__dict__[cls]):
                    sys.stderr.write(f"maskcost probe: {fullname}.{cls}.{meth} not found; not probed\n")
                    continue
                owner = module.__dict__[cls]
                setattr(owner, meth, _wrap(self.rec, vars(owner)[meth], f"{cls}.{meth}", kind))
        spec.loader.exec_module = exec_module
        return spec


def install() -> bool:
    folder = os.environ.get(ENV_DIR)
    if not folder:
        return False
    os.makedirs(folder, exist_ok=True)
    rec = _Recorder(folder)
    sys.meta_path.insert(0, _PatchOnImport(rec))
    import gc
    gc.callbacks.append(rec.on_gc)
    return True


def write_site(folder: str, probes: tuple[tuple[str, str, str, str], ...]) -> str:
    """Put this file in `folder` as sitecustomize.py, with the engine's `probes` (Engine.probe_targets) and a
    call to install(); returns its path."""
    os.makedirs(folder, exist_ok=True)
    src = open(__file__).read()
    path = os.path.join(folder, "sitecustomize.py")
    with open(path, "w") as f:
        f.write(src + f"\n\nPROBES = {probes!r}\n\ninstall()\n")
    return path
