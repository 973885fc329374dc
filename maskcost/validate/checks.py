"""Every output is checked: it parses as JSON and validates against its schema, or it was cut by
max_tokens (finish_reason 'length'), or it is wrong; the status says which."""
from __future__ import annotations

import json
from typing import Any

import jsonschema


def check_output(text: str, schema: dict[str, Any] | None, finish_reason: str | None) -> str:
    if schema is None:
        return "unconstrained"
    if finish_reason == "length":
        return "truncated"
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return "invalid_json"
    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError as e:
        return f"schema_violation: {e.message[:160]}"
    except jsonschema.SchemaError:
        return "schema_error"
    return "valid"
