"""The package's layers import downward only (README, Layout): the profile contract and the readers of
records at the bottom, then the model, calibration, validation, the llama.cpp loop, the CLI. Every
import in every module counts, those inside functions too; a module of a higher layer imported from a
lower one fails, naming both."""
import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "maskcost"
RANK = {"profile": 0, "inputs": 0, "records": 0, "plotting": 0, "profiles": 0, "interval": 0,
        "model": 1, "calibrate": 2, "validate": 3, "llamacpp": 4, "cli": 5}


def _layer(parts: tuple[str, ...]) -> str:
    return parts[0].removesuffix(".py") if parts else "__init__"


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, the maskcost layer it names) of each import in the module."""
    mod = path.relative_to(PKG).with_suffix("").parts
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the module's package
                base = list(mod[:-1])[:len(mod) - node.level]
                target = base + (node.module.split(".") if node.module else [])
                names = [target + [a.name] for a in node.names] if not node.module else [target]
            elif node.module and node.module.split(".")[0] == "maskcost":
                names = [node.module.split(".")[1:]]
            else:
                continue
            out += [(node.lineno, n[0]) for n in names if n]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name.split(".")[1]) for a in node.names
                    if a.name.startswith("maskcost.") and "." in a.name]
    return out


def test_every_import_goes_down_a_layer_or_stays_in_its_own():
    bad = []
    for path in sorted(PKG.rglob("*.py")):
        here = _layer(path.relative_to(PKG).parts)
        if here not in RANK:
            continue  # the package's __init__
        for line, there in _imports(path):
            if there in RANK and RANK[there] > RANK[here]:
                bad.append(f"{path.relative_to(PKG.parent)}:{line} ({here}) imports {there}")
    assert not bad, "\n".join(bad)
    assert len(list(PKG.rglob("*.py"))) > 40  # the walk saw the package
