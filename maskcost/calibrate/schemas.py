"""Schemas to calibrate on: the user's files, built-in tiers, and a JSONSchemaBench-style corpus
(gzip JSON lines with `id`, `subset`, `schema`, `examples`)."""
from __future__ import annotations

import copy
import gzip
import json
import random
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..inputs import read_json


class SchemaInputError(ValueError):
    pass


@dataclass(frozen=True)
class SchemaEntry:
    schema_id: str
    subset: str
    schema: dict[str, Any]
    examples: tuple[Any, ...]  # valid instances: the output streams replayed through the matchers
    # a tool set (calibrate/tools.py): {"tools", "tool_choice"} sent instead of response_format; the
    # schema is then the grammar the engine builds from them
    tool_request: dict[str, Any] | None = None


def _s(max_len: int) -> dict:
    return {"type": "string", "maxLength": max_len}


# Built-in tiers. Every string is bounded so that a random-weight model (the validation servers)
# ends its output; each tier has instances of the shape a model writes.
TIERS: dict[str, SchemaEntry] = {
    "flat": SchemaEntry("tier/flat", "tier", {
        "type": "object", "additionalProperties": False,
        "properties": {"name": _s(24), "age": {"type": "integer", "minimum": 0, "maximum": 120},
                       "active": {"type": "boolean"}, "city": _s(24)},
        "required": ["name", "age", "active", "city"]},
        ({"name": "Alice Smith", "age": 31, "active": True, "city": "Lisbon"},
         {"name": "Bo", "age": 7, "active": False, "city": "Ho Chi Minh City"})),
    "nested": SchemaEntry("tier/nested", "tier", {
        "type": "object", "additionalProperties": False,
        "properties": {"user": {"type": "object", "additionalProperties": False,
                                "properties": {"id": {"type": "integer"}, "email": _s(40)},
                                "required": ["id", "email"]},
                       "tags": {"type": "array", "items": _s(12), "maxItems": 4},
                       "score": {"type": "number"}},
        "required": ["user", "tags", "score"]},
        ({"user": {"id": 4412, "email": "alice@example.org"}, "tags": ["red", "blue"], "score": 0.75},
         {"user": {"id": 9, "email": "x@y.io"}, "tags": [], "score": 12.5})),
    "deep": SchemaEntry("tier/deep", "tier", {
        "type": "object", "additionalProperties": False,
        "properties": {"a": {"type": "object", "additionalProperties": False, "required": ["b"],
                             "properties": {"b": {"type": "object", "additionalProperties": False,
                                                  "required": ["c", "n"],
                                                  "properties": {"c": {"type": "array", "maxItems": 3,
                                                                       "items": {"type": "object",
                                                                                 "additionalProperties": False,
                                                                                 "required": ["k", "v"],
                                                                                 "properties": {"k": _s(8),
                                                                                                "v": {"type": "integer"}}}},
                                                                 "n": {"enum": ["x", "y", "z"]}}}}}},
        "required": ["a"]},
        ({"a": {"b": {"c": [{"k": "alpha", "v": 1}, {"k": "beta", "v": 22}], "n": "y"}}},)),
    "bounded": SchemaEntry("tier/bounded", "tier", {
        "type": "object", "additionalProperties": False,
        "properties": {"title": _s(60), "summary": _s(160),
                       "sentiment": {"enum": ["positive", "negative", "neutral"]},
                       "keywords": {"type": "array", "items": _s(16), "minItems": 1, "maxItems": 5}},
        "required": ["title", "summary", "sentiment", "keywords"]},
        ({"title": "Quarterly results beat expectations",
          "summary": "Revenue grew 12% year on year, driven by cloud services; margins widened as costs fell.",
          "sentiment": "positive", "keywords": ["revenue", "cloud", "margins"]},)),
}


def schema_problem(schema: Any) -> str | None:
    """What makes `schema` no JSON schema, checked against its meta-schema (the draft its $schema
    names, else 2020-12) with jsonschema; None if it is one."""
    import jsonschema
    if not isinstance(schema, (dict, bool)):
        return f"a JSON schema is an object, got {type(schema).__name__}"
    try:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        err = jsonschema.exceptions.best_match(cls(cls.META_SCHEMA).iter_errors(schema))
    except Exception as e:  # a $schema or $ref the validator cannot resolve
        return f"cannot check against its meta-schema ({type(e).__name__}: {str(e)[:120]})"
    if err is None:
        return None
    where = "/".join(str(x) for x in err.absolute_path) or "(top level)"
    return f"invalid JSON schema at {where}: {err.message[:200]}"


def load_schema_file(path: str | Path) -> SchemaEntry:
    """A user's schema file: a JSON schema, or an object {"schema": ..., "examples": [...]}."""
    path = Path(path)
    d = read_json(path, "--schema ", SchemaInputError)
    if not isinstance(d, dict):
        raise SchemaInputError(f"--schema {path}: a JSON schema must be an object")
    if "schema" in d and isinstance(d["schema"], dict):
        return SchemaEntry(d.get("id", path.stem), "user", d["schema"], tuple(d.get("examples", ())))
    return SchemaEntry(path.stem, "user", d, tuple(d.get("examples", ())))


def read_corpus(paths: list[Path]) -> list[SchemaEntry]:
    """Read gzip (or plain) JSON lines; a line that is not a schema record is an error naming it."""
    out: list[SchemaEntry] = []
    for p in paths:
        opener = gzip.open if p.suffix == ".gz" else open
        try:
            with opener(p, "rt") as f:
                for n, line in enumerate(f, 1):
                    if not line.strip():
                        continue
                    try:
                        d = json.loads(line)
                    except json.JSONDecodeError as e:
                        raise SchemaInputError(f"--corpus {p}:{n}: not JSON lines ({e.msg})") from None
                    if not isinstance(d, dict) or not isinstance(d.get("schema"), (dict, bool)) or "id" not in d:
                        raise SchemaInputError(f"--corpus {p}:{n}: a record needs 'id' and 'schema'")
                    out.append(SchemaEntry(str(d["id"]), str(d.get("subset", p.name.split(".")[0])),
                                           d["schema"] if isinstance(d["schema"], dict) else {},
                                           tuple(d.get("examples", ()))))
        except (OSError, EOFError, UnicodeDecodeError) as e:
            raise SchemaInputError(f"--corpus {p}: cannot read as gzip JSON lines ({e})") from None
    return out


def corpus_files(spec: str) -> list[Path]:
    p = Path(spec)
    if p.is_dir():
        files = sorted(p.glob("*.jsonl.gz")) + sorted(p.glob("*.jsonl"))
        if not files:
            raise SchemaInputError(f"--corpus {spec}: no *.jsonl.gz or *.jsonl files in this folder")
        return files
    if p.is_file():
        return [p]
    raise SchemaInputError(f"--corpus {spec}: no such file or folder")


def stratified_sample(entries: list[SchemaEntry], n: int, seed: int) -> list[SchemaEntry]:
    """n entries spread evenly over subsets (round robin over shuffled subsets), with examples only."""
    rng = random.Random(seed)
    by_subset: dict[str, list[SchemaEntry]] = {}
    for e in entries:
        if e.examples:
            by_subset.setdefault(e.subset, []).append(e)
    for v in by_subset.values():
        rng.shuffle(v)
    out: list[SchemaEntry] = []
    names = sorted(by_subset)
    i = 0
    while len(out) < n and any(by_subset.values()):
        s = names[i % len(names)]
        if by_subset[s]:
            out.append(by_subset[s].pop())
        i += 1
    return out


def unique_schema(schema: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """Add a random optional property (as vLLM's json-unique benchmark does) so that no two requests
    share a compiled grammar; the instance the model writes does not change."""
    s = copy.deepcopy(schema)
    if s.get("type") == "object" and isinstance(s.get("properties"), dict):
        s["properties"][f"__maskcost_{uuid.UUID(int=rng.getrandbits(128)).hex[:12]}"] = {"type": "boolean"}
    return s
