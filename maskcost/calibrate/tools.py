"""Tool calling as a grammar: the JSON schema an engine builds for a request with an OpenAI `tools`
list and `tool_choice` required or a named function, calibrated like any schema.

What each engine builds on its JSON-schema path (read from the wheels):
- vLLM 0.25.1, `vllm/tool_parsers/utils.py`: `_get_tool_schema_from_name_and_params` (313-324) makes
  one `{"properties": {"name": {"type": "string", "enum": [NAME]}, "parameters": PARAMS},
  "required": ["name", "parameters"]}` per tool (PARAMS `{"type": "object", "properties": {}}` where
  a tool has none); `_get_json_schema_from_tools` (350-375) wraps them as
  `{"type": "array", "minItems": 1, "items": {"type": "object", "anyOf": [...]}}` with the tools'
  `$defs` moved to the top (`_get_tool_schema_defs`, 331-347, pops them). `get_json_schema_from_tools`
  (380-420): required -> that array; a named function -> that tool's `parameters` alone; auto -> no
  grammar. `abstract_tool_parser.py` 119-157 (`ToolParser.adjust_request`) sets it as
  `structured_outputs.json`, so it is compiled and filled as a JSON schema. That runs only with a
  tool parser (`--enable-auto-tool-choice --tool-call-parser NAME`: `parser/parser_manager.py` 35,
  101) and, for a parser with an xgrammar structural tag (llama3_json, hermes, ...), only with
  `VLLM_ENFORCE_STRICT_TOOL_CALLING=0` (`envs.py` 1619: default on; `abstract_tool_parser.py` 174-181,
  `parser/abstract_parser.py` 514-549 build a structural tag instead, not modelled here).
- SGLang 0.5.23, `sglang/srt/function_call/utils.py`: `_get_tool_schema` (293-304) the same per-tool
  object; `get_json_schema_constraint` (432-478): required -> the same array (`maxItems: 1` with
  `parallel_tool_calls` false), a named function -> `{"type": "array", "minItems": 1, "items":
  <that tool's object>}` (not the bare parameters as vLLM); auto -> none. Its `_get_tool_schema_defs`
  (263-290) copies the `$defs` to the top and leaves them in the parameters. It is SGLang's fallback
  where the detector has no structural tag (`function_call_parser.py` 387-420).

A distinct tool set is a distinct grammar: the schema id carries a digest of the tools and the
choice, so the compile cache treats each set apart, as both engines key their caches by the grammar.
"""
from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

from ..inputs import read_json
from ..model.config import DEFAULT_ENGINE
from ..model.engines import ENGINES as POLICIES
from .schemas import SchemaEntry, SchemaInputError, schema_problem

ENGINES = tuple(name for name, e in POLICIES.items() if e.tool_grammar is not None)  # each one's rules: model/engines.py


def load_tools_file(path: str | Path) -> list[dict[str, Any]]:
    """An OpenAI `tools` list (or an object with one under "tools"), checked: function tools with a
    name each, names distinct, parameters a JSON schema where given."""
    path = Path(path)
    d = read_json(path, "--tools ", SchemaInputError)
    tools = d.get("tools") if isinstance(d, dict) else d
    if not isinstance(tools, list) or not tools:
        raise SchemaInputError(f"--tools {path}: expected a non-empty list of tools (OpenAI's `tools`)")
    names: list[str] = []
    for i, t in enumerate(tools):
        fn = t.get("function") if isinstance(t, dict) else None
        if not isinstance(t, dict) or t.get("type", "function") != "function" or not isinstance(fn, dict):
            raise SchemaInputError(f"--tools {path}: tool {i} is not {{\"type\": \"function\", \"function\": {{...}}}}")
        name = fn.get("name")
        if not isinstance(name, str) or not name:
            raise SchemaInputError(f"--tools {path}: tool {i} has no function name")
        params = fn.get("parameters")
        if params is not None:
            problem = schema_problem(params)
            if problem:
                raise SchemaInputError(f"--tools {path}: tool {name!r} parameters: {problem}")
        names.append(name)
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise SchemaInputError(f"--tools {path}: two tools are named {dup[0]!r}")
    return tools


def _tool_object(tool: dict[str, Any]) -> dict[str, Any]:
    fn = tool["function"]
    return {"properties": {"name": {"type": "string", "enum": [fn["name"]]},
                           "parameters": fn.get("parameters") or {"type": "object", "properties": {}}},
            "required": ["name", "parameters"]}


def _defs(tools: list[dict[str, Any]], move: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for t in tools:
        params = t["function"].get("parameters") or {}
        for k, v in ((params.pop if move else params.get)("$defs", None) or {}).items():
            if k in out and out[k] != v:
                raise SchemaInputError(f"--tools: two tools define $defs {k!r} differently (the engine refuses it)")
            out[k] = v
    return out


def tool_grammar(tools: list[dict[str, Any]], tool_choice: str, engine: str = DEFAULT_ENGINE,
                 parallel_tool_calls: bool = True) -> dict[str, Any]:
    """The JSON schema `engine` compiles for this request (module docstring: file and line)."""
    if engine not in ENGINES:
        raise ValueError(f"--engine {engine}: tool grammars are modelled for {', '.join(ENGINES)}")
    rules = POLICIES[engine].tool_grammar
    tools = copy.deepcopy(tools)  # vLLM pops $defs out of the tools' parameters
    if tool_choice == "auto":
        raise SchemaInputError("--tool-choice auto: neither engine builds a grammar for it on its JSON path (vLLM "
                               "tool_parsers/utils.py:420, SGLang function_call/utils.py:478): those requests cost "
                               "what unconstrained ones cost; strict tools under auto go through the model's "
                               "structural tag, which is not modelled")
    if tool_choice == "none":
        raise SchemaInputError("--tool-choice none: no grammar (the requests are unconstrained)")
    if tool_choice != "required":
        match = [t for t in tools if t["function"]["name"] == tool_choice]
        if not match:
            names = ", ".join(t["function"]["name"] for t in tools)
            raise SchemaInputError(f"--tool-choice {tool_choice}: no tool of that name (tools: {names})")
        if rules.named_is_parameters:
            params = match[0]["function"].get("parameters")
            return params if params is not None else {"type": "object", "properties": {}}
        schema = {"type": "array", "minItems": 1, "items": _tool_object(match[0])}
        if rules.bounds_parallel and not parallel_tool_calls:
            schema["maxItems"] = 1
        return schema
    defs = _defs(tools, move=rules.moves_defs)
    schema = {"type": "array", "minItems": 1, "items": {"type": "object", "anyOf": [_tool_object(t) for t in tools]}}
    if rules.bounds_parallel and not parallel_tool_calls:
        schema["maxItems"] = 1
    if defs:
        schema["$defs"] = defs
    return schema


def tool_choice_param(tool_choice: str) -> str | dict[str, Any]:
    """The request's `tool_choice` field as the OpenAI API spells it."""
    if tool_choice in ("required", "auto", "none"):
        return tool_choice
    return {"type": "function", "function": {"name": tool_choice}}


def tool_entry(path: str | Path, tool_choice: str, engine: str = DEFAULT_ENGINE) -> SchemaEntry:
    """The tool set of `path` as a schema to calibrate, predict and send (`SchemaEntry.tool_request`)."""
    tools = load_tools_file(path)
    grammar = tool_grammar(tools, tool_choice, engine)
    digest = hashlib.sha256(json.dumps([tools, tool_choice], sort_keys=True).encode()).hexdigest()[:8]
    choice = "required" if tool_choice == "required" else f"fn-{tool_choice}"
    return SchemaEntry(f"tools-{Path(path).name.split('.')[0]}-{choice}-{digest}", "tools", grammar, (),
                       tool_request={"tools": tools, "tool_choice": tool_choice_param(tool_choice)})
