"""The two grammar engines, called the way vLLM 0.25.1 calls them (docs/engines.md Q2-Q4):
xgrammar through a GrammarCompiler with its cache, a fresh GrammarMatcher per request; llguidance
through an LLMatcher per request. Fill and accept are the very calls the engine makes per row."""
from __future__ import annotations

import json
import time
from typing import Any

from ..profile import XGRAMMAR_SEPARATORS  # noqa: F401  (defined with the profile contract)
from .tokenizer import Vocab

# vLLM's default for VLLM_XGRAMMAR_CACHE_MB (vllm/envs.py); the compiler cache is LRU by bytes.
XGRAMMAR_CACHE_MB = 512


# How each backend writes JSON with the engine's no-whitespace option (vLLM
# --structured-outputs-config.disable_any_whitespace, SGLang --constrained-json-disable-any-whitespace):
# xgrammar's separators are ", " and ": "; llguidance's compact default "," and ":" (vLLM 0.25.1's
# backend_guidance.serialize_guidance_grammar passes only whitespace_flexible=False; the outputs of vLLM
# 0.25.1 and SGLang 0.5.17 llguidance servers in validation/ are compact).
# A profile's traces and the in-engine factors fitted against them go together: profiles written before
# the separators were recorded replayed guidance with xgrammar's (profile.BackendCosts.separators).
LLGUIDANCE_SEPARATORS = (",", ":")


class Backend:
    name: str
    separators: tuple[str, str] = XGRAMMAR_SEPARATORS  # (item, key): how its engine writes an output

    def __init__(self, vocab: Vocab) -> None:
        self.vocab = vocab

    def compile(self, schema: dict[str, Any], cache: bool) -> tuple[Any, float]:
        raise NotImplementedError

    def memory_bytes(self, compiled: Any) -> int:
        raise NotImplementedError

    def matcher(self, compiled: Any) -> Any:
        raise NotImplementedError

    def bitmask(self, rows: int):
        raise NotImplementedError

    def fill(self, matcher: Any, bitmask: Any, row: int) -> None:
        raise NotImplementedError

    def accept(self, matcher: Any, token: int) -> bool:
        raise NotImplementedError


class XGrammarBackend(Backend):
    name = "xgrammar"

    def __init__(self, vocab: Vocab) -> None:
        super().__init__(vocab)
        import xgrammar as xgr
        self.xgr = xgr
        info = vocab.xgrammar_info
        # vllm/v1/structured_output/backend_xgrammar.py: max_threads=8, cache by bytes
        self.cached = xgr.GrammarCompiler(info, max_threads=8, cache_enabled=True,
                                          cache_limit_bytes=XGRAMMAR_CACHE_MB * 1024 * 1024)
        self.cold = xgr.GrammarCompiler(info, max_threads=8, cache_enabled=False)

    def compile(self, schema, cache):
        comp = self.cached if cache else self.cold
        text = json.dumps(schema)
        t0 = time.perf_counter()
        # --structured-outputs-config.disable_any_whitespace true: what the validation server runs
        g = comp.compile_json_schema(text, any_whitespace=False)
        return g, (time.perf_counter() - t0) * 1e3

    def memory_bytes(self, compiled):
        return int(compiled.memory_size_bytes)

    def matcher(self, compiled):
        return self.xgr.GrammarMatcher(compiled)

    def bitmask(self, rows):
        return self.xgr.allocate_token_bitmask(rows, self.vocab.size)

    def fill(self, matcher, bitmask, row):
        matcher.fill_next_token_bitmask(bitmask, row)

    def accept(self, matcher, token):
        return matcher.accept_token(token)


class GuidanceBackend(Backend):
    name = "guidance"

    def __init__(self, vocab: Vocab, separators: tuple[str, str] | None = None) -> None:
        super().__init__(vocab)
        self.separators = tuple(separators or LLGUIDANCE_SEPARATORS)  # type: ignore[assignment]
        import llguidance as llg
        import llguidance.torch as lgt
        self.llg, self.lgt = llg, lgt
        self.tok = vocab.llguidance_tokenizer

    def compile(self, schema, cache):
        # vLLM's guidance backend builds a new LLMatcher per request (no compile cache): compile
        # cost is the grammar conversion plus matcher construction, paid every time.
        t0 = time.perf_counter()
        other = {} if self.separators == LLGUIDANCE_SEPARATORS else \
            {"item_separator": self.separators[0], "key_separator": self.separators[1]}
        grammar = self.llg.LLMatcher.grammar_from_json_schema(json.dumps(schema),
                                                             defaults={"whitespace_flexible": False, **other})
        m = self.llg.LLMatcher(self.tok, grammar, log_level=0)
        ms = (time.perf_counter() - t0) * 1e3
        if m.is_error():
            raise ValueError(m.get_error())
        return grammar, ms

    def memory_bytes(self, compiled):
        return len(compiled)

    def matcher(self, compiled):
        return self.llg.LLMatcher(self.tok, compiled, log_level=0)  # (a rejected replay: no warning)

    def bitmask(self, rows):
        return self.lgt.allocate_token_bitmask(rows, self.vocab.size)

    def fill(self, matcher, bitmask, row):
        self.lgt.fill_next_token_bitmask(matcher, bitmask, row)

    def accept(self, matcher, token):
        return matcher.consume_token(token) and not matcher.is_error()


def make_backend(name: str, vocab: Vocab, separators: tuple[str, str] | None = None) -> Backend:
    """The backend; `separators`: guidance's (default: its engines' compact ones), to replay outputs written
    with others (a profile whose traces used them: profile.BackendCosts.separators)."""
    if name == "xgrammar":
        return XGrammarBackend(vocab)
    if name == "guidance":
        return GuidanceBackend(vocab, separators)
    raise ValueError(f"--backend {name}: unknown (xgrammar, guidance)")
