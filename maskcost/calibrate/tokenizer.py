"""Real tokenizers for calibration: a vocabulary that quicktok-v1 ships, or a Hugging Face folder."""
from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Callable

# quicktok encoding names for the bundled vocabularies, with the EOS id a chat model stops on.
BUNDLED = {
    "llama3": ("llama3", "<|eot_id|>"),
    "qwen3": ("qwen3", "<|im_end|>"),
    "cl100k": ("cl100k_base", "<|endoftext|>"),
    "o200k": ("o200k_base", "<|endoftext|>"),
}
# Llama-3's pre-tokenizer pattern (Meta-Llama-3's tokenizer.json, which the device's model folder carries too);
# llguidance only uses it to tokenize strings, never for masks.
LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                  r"|\s*[\r\n]+|\s+(?!\S)|\s+")


class TokenizerError(ValueError):
    pass


@dataclass
class Vocab:
    """Token bytes by id, EOS, an encoder, and the backend tokenizer objects (built lazily)."""
    name: str
    tokens: list[bytes]
    eos_id: int
    encode: Callable[[str], list[int]]
    special_ids: frozenset[int]
    unused_ids: frozenset[int] = frozenset()  # ids with no token: never allowed, never emitted
    _hf_dir: Path | None = None
    _pattern: str = LLAMA3_PATTERN

    @property
    def size(self) -> int:
        return len(self.tokens)

    @cached_property
    def sha256(self) -> str:
        """The vocabulary's content: every token's bytes by id, and the EOS id. A tokenizer folder and a
        bundled vocabulary with the same tokens give the same digest; a profile records it, so that its
        traces can be matched by content."""
        return vocab_sha256(self.tokens, self.eos_id)

    @cached_property
    def token_index(self) -> dict[bytes, int]:
        """Token id by its bytes (special tokens left out): the reverse of `tokens`."""
        return {t: i for i, t in enumerate(self.tokens) if t and i not in self.special_ids}

    def engine_tokens(self, chunks: list[str]) -> list[int]:
        """The token ids behind an output the server streamed: a chunk that is one token's text is that
        token; a chunk of several (a character cut between byte tokens, or chunks the server merged) is
        re-tokenized."""
        out: list[int] = []
        for c in chunks:
            i = self.token_index.get(c.encode())
            out.extend([i] if i is not None else self.encode(c))
        return out

    def streamed_tokens(self, record: dict) -> list[int] | None:
        """A sweep's raw record as the token stream the engine emitted, where the record keeps the chunks it
        streamed and they make up its text; None where it does not (an older record, a tool call)."""
        chunks = record.get("chunks") or []
        return self.engine_tokens(chunks) if chunks and "".join(chunks) == record.get("text") else None

    @cached_property
    def straddle_ids(self) -> frozenset[int]:
        """Tokens that hold a double quote plus other bytes: they straddle a JSON string boundary."""
        return frozenset(i for i, t in enumerate(self.tokens)
                         if i not in self.special_ids and b'"' in t and len(t) > 1)

    @cached_property
    def xgrammar_info(self):
        import xgrammar as xgr
        if self._hf_dir is not None:
            from transformers import AutoTokenizer
            return xgr.TokenizerInfo.from_huggingface(AutoTokenizer.from_pretrained(self._hf_dir),
                                                      vocab_size=self.size)
        # special tokens as empty strings: xgrammar then counts them special and never allows them in the
        # grammar's text. vLLM 0.25.1's from_huggingface (above) marks none of Llama-3's 256: their literal text
        # may then fill a string. On 20 of the shape check's outputs the masks differed at 33 of 762 steps,
        # only on those ids, and the nested/flat fill ratio moved 0.658 -> 0.679 (docs/validation.md finding 30)
        raw = [b"" if i in self.special_ids else t for i, t in enumerate(self.tokens)]
        return xgr.TokenizerInfo(raw, vocab_type=xgr.VocabType.RAW, vocab_size=self.size,
                                 stop_token_ids=[self.eos_id])

    @cached_property
    def llguidance_tokenizer(self):
        import llguidance as llg
        if self._hf_dir is not None:
            import llguidance.hf
            from transformers import AutoTokenizer
            return llguidance.hf.from_tokenizer(AutoTokenizer.from_pretrained(self._hf_dir), n_vocab=self.size)
        ranks = {t: i for i, t in enumerate(self.tokens) if i not in self.special_ids and i not in self.unused_ids}
        specials = {self.tokens[i].decode("utf-8", "replace"): i for i in self.special_ids}
        return llg.LLTokenizer.from_tiktoken(encoder=ranks, special_tokens=specials, pattern=self._pattern,
                                             eos_token=self.eos_id, n_vocab=self.size)


def vocab_sha256(tokens: list[bytes], eos_id: int) -> str:
    h = hashlib.sha256(struct.pack("<qq", len(tokens), eos_id))
    for t in tokens:
        h.update(struct.pack("<I", len(t)))
        h.update(t)
    return h.hexdigest()


def profile_vocab(tokenizer: str, vocab_size: int, sha256: str | None, override: str | None = None) -> Vocab:
    """The vocabulary a profile was calibrated with, on this host: `override` (`--tokenizer DIR` or a
    bundled name) where given, else the profile's own `tokenizer` where it is bundled or a folder here,
    else the bundled vocabulary whose content is the profile's (`sha256`). One whose content is not the
    profile's is an error naming both: traces of one vocabulary do not price another's."""
    def check(v: Vocab, what: str) -> Vocab:
        if (sha256 is not None and v.sha256 != sha256) or (sha256 is None and v.size != vocab_size):
            raise TokenizerError(f"{what}: its vocabulary ({v.size:,} tokens, sha256 {v.sha256[:12]}) is not the "
                                 f"profile's ({vocab_size:,} tokens"
                                 + (f", sha256 {sha256[:12]})" if sha256 else ")"))
        return v
    if override:
        return check(load_vocab(override), f"--tokenizer {override}")
    if tokenizer in BUNDLED or (Path(tokenizer) / "tokenizer.json").is_file():
        v = load_vocab(tokenizer)
        if sha256 is None or v.sha256 == sha256:
            return check(v, f"the profile's tokenizer {tokenizer}")
        # a folder of that name here with other tokens: the bundled vocabulary with the profile's content
    if sha256 is not None:
        for name in BUNDLED:
            if bundled_size(name) == vocab_size and (v := load_vocab(name)).sha256 == sha256:
                return v
    raise TokenizerError(f"the profile's tokenizer {tokenizer!r} is neither a bundled vocabulary ({', '.join(BUNDLED)}) "
                         f"nor a folder here" + ("" if sha256 is None else ", and no bundled vocabulary has its content")
                         + ": give --tokenizer DIR (a folder holding the same tokenizer.json)")


def bundled_size(name: str) -> int:
    import quicktok
    return quicktok.get_encoding(BUNDLED[name][0]).n_vocab


def load_vocab(spec: str) -> Vocab:
    """`spec` is a bundled name (llama3, qwen3, cl100k, o200k) or a Hugging Face tokenizer folder."""
    if spec in BUNDLED:
        import quicktok
        enc_name, eos = BUNDLED[spec]
        enc = quicktok.get_encoding(enc_name)
        tokens, holes = [], set()
        for i in range(enc.n_vocab):
            try:
                tokens.append(enc.decode_single_token_bytes(i))
            except KeyError:  # an id with no token (cl100k's 100256, o200k's 199998, reserved ranges)
                tokens.append(b"")
                holes.add(i)
        specials = frozenset(i for i in range(enc.n_vocab) if i not in holes and enc.is_special_token(i))
        return Vocab(spec, tokens, enc.encode_single_token(eos), enc.encode_ordinary, specials, unused_ids=frozenset(holes))
    path = Path(spec)
    if not (path / "tokenizer.json").is_file():
        raise TokenizerError(f"--tokenizer {spec}: neither a bundled vocabulary ({', '.join(BUNDLED)}) "
                             f"nor a folder holding tokenizer.json")
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(str(path / "tokenizer.json"))
    size = tok.get_vocab_size(with_added_tokens=True)
    added = {a.content: i for i, a in tok.get_added_tokens_decoder().items()}
    tokens = [b""] * size
    # byte-level BPE: map the printable stand-ins back to bytes
    byte_dec = _bytes_to_unicode_inverse()
    for piece, i in tok.get_vocab(with_added_tokens=True).items():
        tokens[i] = piece.encode() if piece in added else bytes(byte_dec.get(c, 0) for c in piece)
    eos = next((added[n] for n in ("<|eot_id|>", "<|im_end|>", "<|endoftext|>", "</s>") if n in added), None)
    if eos is None:
        raise TokenizerError(f"--tokenizer {spec}: no EOS token among its added tokens")
    return Vocab(path.name, tokens, eos, lambda s: tok.encode(s, add_special_tokens=False).ids,
                 frozenset(added.values()), _hf_dir=path)


def byte_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte -> printable character map (byte-level BPE token strings)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def _bytes_to_unicode_inverse() -> dict[str, int]:
    return {c: b for b, c in byte_to_unicode().items()}
