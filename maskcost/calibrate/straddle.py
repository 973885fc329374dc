"""Tokens that straddle a JSON string boundary: a vocabulary's tokens that hold a double quote plus
at least one other byte (special tokens excluded), and how often a workload's outputs emit them.
A straddling token closes (or opens) a string and carries more than the quote, so the grammar's
work at that position depends on the context around the boundary (DESIGN.md, Mechanisms)."""
from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from .fill import output_text
from .tokenizer import Vocab


@dataclass(frozen=True)
class StraddleCount:
    file: str
    vocab: str
    outputs: int  # output texts tokenized (1 for a JSON document)
    tokens: int
    straddling: int

    @property
    def rate(self) -> float | None:
        return self.straddling / self.tokens if self.tokens else None


def file_texts(path: Path, as_written: bool = False) -> list[str]:
    """The output texts of a file: a sweep's raw records (JSON lines with `text`, .gz allowed), each
    record's text; else one JSON document, written as the server writes it (', ' and ': '), or with
    `as_written` its text as the file holds it (whitespace, separators and escapes untouched)."""
    try:
        raw = gzip.open(path, "rt").read() if path.suffix == ".gz" else path.read_text()
    except (OSError, EOFError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: cannot read ({getattr(e, 'strerror', None) or e or 'truncated'})") from None
    try:
        doc = json.loads(raw)
        return [raw.strip() if as_written else output_text(doc)]
    except json.JSONDecodeError:
        pass
    texts = []
    for n, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
        except json.JSONDecodeError:
            raise ValueError(f"{path}:{n}: neither one JSON document nor JSON lines") from None
        if not isinstance(d, dict) or not isinstance(d.get("text"), str):
            raise ValueError(f"{path}:{n}: a JSON lines record without 'text' (not a sweep's raw file)")
        texts.append(d["text"])
    return texts


def count(vocab: Vocab, texts: Iterable[str], name: str) -> StraddleCount:
    ids = vocab.straddle_ids
    n = s = k = 0
    for t in texts:
        toks = vocab.encode(t)
        n += len(toks)
        s += sum(1 for x in toks if x in ids)
        k += 1
    return StraddleCount(name, vocab.name, k, n, s)


def report(vocabs: list[Vocab], files: list[Path], as_written: bool = False) -> dict[str, Any]:
    """The straddle-set size of each vocabulary, and each file's counts under each of them (a JSON document
    re-serialized as the server writes it, or `as_written`)."""
    texts = {str(f): file_texts(f, as_written) for f in files}
    out: dict[str, Any] = {"documents": "as written" if as_written else "as the server writes them",
                           "vocabularies": [{"vocab": v.name, "vocab_size": v.size, "straddle_set": len(v.straddle_ids)}
                                            for v in vocabs], "files": []}
    for f, ts in texts.items():
        for v in vocabs:
            c = count(v, ts, f)
            out["files"].append({"file": c.file, "vocab": c.vocab, "outputs": c.outputs, "tokens": c.tokens,
                                 "straddling": c.straddling, "rate": c.rate})
    return out
