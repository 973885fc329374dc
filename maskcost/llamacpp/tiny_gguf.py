"""A tiny random-weight llama-architecture GGUF with the real Llama-3 tokenizer, so that a real
llama.cpp server runs on any CPU (CI included) with the real vocabulary (128,256 ids: the grammar
sampler's cost depends on it). The vocabulary is the one quicktok-v1 ships; the BPE merges are
recovered from its ranks the way transformers converts tiktoken vocabularies. Weights are random:
bound every string in a schema (maxLength, enum) or an output never ends. Needs `gguf`.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..calibrate.tokenizer import byte_to_unicode

# Llama-3 instruct chat template (Meta-Llama-3-8B-Instruct's, as the device's model folder carries it)
CHAT_TEMPLATE = (
    "{% set loop_messages = messages %}{% for message in loop_messages %}"
    "{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'"
    "+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}"
    "{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}"
)
LLAMA3_NORMAL_IDS = 128000  # ids below are BPE tokens, 128000..128255 are specials
LLAMA3_BOS, LLAMA3_EOT = 128000, 128009


def _merges(ranks: dict[bytes, int]) -> list[tuple[bytes, bytes]]:
    """Every split of every token into two tokens, ordered by the token's rank and then the halves'
    ranks: what transformers' TikTokenConverter writes for Llama-3's tokenizer.json."""
    out = []
    for tok, _rank in sorted(ranks.items(), key=lambda kv: kv[1]):
        local = [(tok[:i], tok[i:]) for i in range(1, len(tok)) if tok[:i] in ranks and tok[i:] in ranks]
        out.extend(sorted(local, key=lambda lr: (ranks[lr[0]], ranks[lr[1]])))
    return out


def _llama3_vocab() -> tuple[list[str], list, list[str]]:
    """Llama 3's vocabulary as GGUF holds a gpt2-style BPE: the tokens (byte-to-unicode text, then the 256
    specials), their types and the merges recovered from the ranks."""
    import gguf
    import quicktok
    enc = quicktok.encoding_for_model("meta-llama/Llama-3.1-8B")
    tok_bytes = [enc.decode_single_token_bytes(i) for i in range(LLAMA3_NORMAL_IDS)]
    ranks = {t: i for i, t in enumerate(tok_bytes)}
    u = byte_to_unicode()
    text = ["".join(u[b] for b in t) for t in tok_bytes]
    merges = ["".join(u[x] for x in a) + " " + "".join(u[x] for x in b) for a, b in _merges(ranks)]
    specials = [enc.decode_single_token_bytes(i).decode() for i in range(LLAMA3_NORMAL_IDS, LLAMA3_NORMAL_IDS + 256)]
    types = [gguf.TokenType.NORMAL] * len(text) + [gguf.TokenType.CONTROL] * len(specials)
    return text + specials, types, merges


def write_tiny_gguf(out: Path, layers: int = 2, hidden: int = 64, heads: int = 4, kv_heads: int = 2,
                    ffn: int = 128, ctx: int = 4096, seed: int = 0) -> Path:
    import gguf
    tokens, types, merges = _llama3_vocab()
    n_vocab = len(tokens)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".partial")
    w = gguf.GGUFWriter(str(tmp), arch="llama")
    w.add_name("maskcost-tiny-random-llama3")
    w.add_context_length(ctx)
    w.add_embedding_length(hidden)
    w.add_block_count(layers)
    w.add_feed_forward_length(ffn)
    w.add_head_count(heads)
    w.add_head_count_kv(kv_heads)
    w.add_rope_dimension_count(hidden // heads)
    w.add_rope_freq_base(500000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(n_vocab)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("llama-bpe")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(LLAMA3_BOS)
    w.add_eos_token_id(LLAMA3_EOT)
    w.add_add_bos_token(True)
    w.add_chat_template(CHAT_TEMPLATE)
    rng = np.random.default_rng(seed)

    def r(*shape: int, std: float = 0.02) -> np.ndarray:  # (out, in) layout
        return (rng.standard_normal(shape, dtype=np.float32) * std).astype(np.float16)

    hd = hidden // heads
    w.add_tensor("token_embd.weight", r(n_vocab, hidden, std=1.0))
    w.add_tensor("output_norm.weight", np.ones(hidden, np.float32))
    w.add_tensor("output.weight", r(n_vocab, hidden, std=0.5))  # peaked, varied random logits
    for i in range(layers):
        b = f"blk.{i}."
        w.add_tensor(b + "attn_norm.weight", np.ones(hidden, np.float32))
        w.add_tensor(b + "attn_q.weight", r(heads * hd, hidden))
        w.add_tensor(b + "attn_k.weight", r(kv_heads * hd, hidden))
        w.add_tensor(b + "attn_v.weight", r(kv_heads * hd, hidden))
        w.add_tensor(b + "attn_output.weight", r(hidden, heads * hd))
        w.add_tensor(b + "ffn_norm.weight", np.ones(hidden, np.float32))
        w.add_tensor(b + "ffn_gate.weight", r(ffn, hidden))
        w.add_tensor(b + "ffn_up.weight", r(ffn, hidden))
        w.add_tensor(b + "ffn_down.weight", r(hidden, ffn))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    os.replace(tmp, out)
    return out
