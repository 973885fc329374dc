"""A user's JSON input file (a schema, a tools list, a campaign) read with a one-line error naming it."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def read_json(path: str | Path, label: str, error: type[Exception] = ValueError) -> Any:
    """The JSON value of `path`; `error` with "`label` PATH: what is wrong" where it cannot be read or parsed."""
    path = Path(path)
    try:
        return json.loads(path.read_text())
    except OSError as e:
        raise error(f"{label}{path}: cannot read ({e.strerror or e})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        where = f": line {e.lineno}, column {e.colno}" if isinstance(e, json.JSONDecodeError) else ""
        raise error(f"{label}{path}: not JSON ({getattr(e, 'msg', None) or e.reason}{where})") from None
