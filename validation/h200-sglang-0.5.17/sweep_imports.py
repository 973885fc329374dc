import sys, runpy, importlib, pkgutil, collections
sys.argv = ["check.py"]
exec(open("/tmp/sg/check.py").read().split("mods = sys.argv[1:]")[0])
import sglang.srt as srt
roots = ["sglang.srt.managers", "sglang.srt.model_executor", "sglang.srt.model_loader", "sglang.srt.configs",
         "sglang.srt.entrypoints", "sglang.srt.constrained", "sglang.srt.sampling", "sglang.srt.mem_cache",
         "sglang.srt.layers", "sglang.srt.function_call", "sglang.srt.parser", "sglang.srt.utils",
         "sglang.srt.observability", "sglang.srt.distributed", "sglang.srt.tokenizer", "sglang.srt.server"]
missing = collections.Counter(); where = {}
for r in roots:
    try:
        pkg = importlib.import_module(r)
    except ModuleNotFoundError as e:
        missing[e.name] += 1; where.setdefault(e.name, r); continue
    except Exception as e:
        print("FAIL", r, type(e).__name__, str(e)[:100]); continue
    if not hasattr(pkg, "__path__"): continue
    for m in pkgutil.iter_modules(pkg.__path__, r + "."):
        if any(x in m.name for x in ("npu", "hip", "rocm", "xpu", "musa", "mlx", "amd", "aiter", "cpu_", "hpu", "ascend", "deepep", "mooncake", "nixl", "test")):
            continue
        try:
            importlib.import_module(m.name)
        except ModuleNotFoundError as e:
            missing[str(e.name).split(".")[0]] += 1; where.setdefault(str(e.name).split(".")[0], m.name)
        except BaseException as e:
            pass
for k, v in missing.most_common(): print("MISSING", k, v, where[k])
