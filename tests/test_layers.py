"""The package's layers import downward only (README, Layout): the profile contract and the readers of
records at the bottom, then the model, calibration, validation, the llama.cpp loop, the CLI. Every
import in every module counts, those inside functions too; a module of a higher layer imported from a
lower one fails, naming both."""
import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "maskcost"
RANK = {"profile": 0, "inputs": 0, "records": 0, "record": 0, "point": 0, "plotting": 0, "profiles": 0, "interval": 0,
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


def _module_name(path: Path) -> str:
    parts = path.relative_to(PKG).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _runtime_imports(path: Path, modules: set[str]) -> set[str]:
    """The package's modules `path` imports when it runs (at the top or in a function); an import under
    `if TYPE_CHECKING:` is for annotations only and runs never."""
    mod = _module_name(path)
    is_pkg = path.name == "__init__.py"
    tree = ast.parse(path.read_text())
    typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                   and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
                   for n in ast.walk(node)}
    out = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        targets: list[str] = []
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = mod.split(".") if is_pkg else mod.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
                pkg = ".".join(base + (node.module.split(".") if node.module else []))
            elif node.module and node.module.split(".")[0] == "maskcost":
                pkg = ".".join(node.module.split(".")[1:])
            else:
                continue
            for a in node.names:  # `from . import x`: the submodule x where there is one, else the package
                sub = f"{pkg}.{a.name}" if pkg else a.name
                targets.append(sub if sub in modules else pkg)
        elif isinstance(node, ast.Import):
            targets = [a.name.split(".", 1)[1] for a in node.names if a.name.startswith("maskcost.")]
        out |= {t for t in targets if t in modules and t != mod}
    return out


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


# none left (`campaign run` is given the CLI's parser to resolve its steps with, it does not import it)
KNOWN_CYCLES: list[list[str]] = []


def test_no_module_imports_itself_through_others():
    """No import cycle among the package's modules, counting every import that runs (annotation-only
    imports under TYPE_CHECKING do not), but the known one."""
    paths = sorted(PKG.rglob("*.py"))
    modules = {_module_name(p) for p in paths}
    graph = {_module_name(p): _runtime_imports(p, modules) for p in paths}
    assert graph["model.metrics"] == {"model.step"}  # the walk resolves relative imports
    assert "cli.campaign" in graph["cli"] and "cli" not in graph["cli.campaign"]
    assert _cycles(graph) == KNOWN_CYCLES
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]  # the search finds one


MAX_FUNCTION_LINES = 59  # issue 37: every function of the package under 60 lines, its docstring included


def test_no_function_runs_to_60_lines():
    """A function grown past MAX_FUNCTION_LINES fails here, named with its file and line."""
    long = []
    for path in sorted(PKG.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(PKG)}:{node.lineno} {node.name} ({n} lines)")
    assert not long, "functions over 59 lines: " + "; ".join(long)


def _option_writes(tree: ast.AST) -> list[int]:
    """Lines that change a command's options in place: `args.x = ...`, `args.x += ...`, `setattr(args, ...)`."""
    lines = []
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
            if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        if any(isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "args" for t in targets):
            lines.append(node.lineno)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" \
                and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == "args":
            lines.append(node.lineno)
    return lines


def test_a_commands_options_are_resolved_once_and_read_only():
    """main hands each command its options read-only (cli.common.Options); no module writes to them."""
    from maskcost.cli.common import Options
    o = Options(backend=["xgrammar"], cores=None)
    with pytest.raises(AttributeError, match="options.cores: a command's options are read-only"):
        o.cores = [8]
    assert o.replace(cores=[8]).cores == [8] and o.cores is None
    assert _option_writes(ast.parse("args.x = 1\nargs.y += 2\nsetattr(args, 'z', 3)\nother.x = 1")) == [1, 2, 3]
    writes = [f"{path.relative_to(PKG)}:{n}" for path in sorted(PKG.rglob("*.py"))
              for n in _option_writes(ast.parse(path.read_text()))]
    assert not writes, "options changed in place: " + "; ".join(writes)
