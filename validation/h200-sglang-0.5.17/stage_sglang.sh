#!/bin/bash
# Build, on this (CPU) machine, what a bare H200 device machine needs to serve SGLang 0.5.17 (it pins
# torch 2.11.0, the device's torch) for Llama-3-8B's architecture with random weights:
#   $STAGE/a/part00, $STAGE/b/part01.. (each under 64 MiB with the tracked tree), + maskcost's wheel in $STAGE/w
# Run from the project root. $STAGE (default .device-stage-sg) is git-ignored via .git/info/exclude.
# On the device: call 1 carries $STAGE/a (`cp $STAGE/a/part00 /tmp/sg-part00`), call 2 at once carries
# $STAGE/b and $STAGE/w and runs serve_sglang.sh (it assembles the site into /tmp/sgsite once).
#
# What is left out, and why the server still runs: sglang-kernel 0.4.5 is a 383 MB wheel, most of it
# FlashAttention-3 (flash_ops.abi3.so, 1.1 GB unpacked), the sm100 build, FlashMLA and InfLLM; an H200
# loads sm90/common_ops.abi3.so, and the server runs with --attention-backend triton (Triton kernels,
# the device's Triton 3.6.0), so none of the dropped .so files is imported. flashinfer (imported at
# start by layers/sampler.py) is carried whole but never called: --sampling-backend pytorch. SGLang's
# Rust extensions (server/_core, grpc/_core, multimodal/_core) serve gRPC, the Rust HTTP front end and
# image preprocessing, none of them on this path. Everything else is SGLang's pin (its METADATA) or,
# where the device already has a package (KINDS.md), the device's own (numpy, triton, torchvision,
# huggingface_hub 1.33, ...). The import check that found the list (CUDA faked, on Python 3.11):
# check_imports.py here.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DEVICE=${DEVICE:-$HERE/../../../shared/device}   # make_model_dir.py (the Llama-3 tokenizer folder)
STAGE=${STAGE:-.device-stage-sg}
WORK=$(mktemp -d)
grep -qx "/$STAGE/" .git/info/exclude 2>/dev/null || echo "/$STAGE/" >> .git/info/exclude
PLAT="--only-binary=:all: --python-version 3.12 --implementation cp"
for p in manylinux_2_5 manylinux1 manylinux_2_17 manylinux2014 manylinux_2_24 manylinux_2_26 manylinux_2_27 \
         manylinux_2_28 manylinux_2_31 manylinux_2_34 manylinux_2_35; do PLAT="$PLAT --platform ${p}_x86_64"; done
python3 -m pip download -q --no-deps $PLAT -d "$WORK/wh" -r "$HERE/requirements-device.txt"
mkdir -p "$WORK/site"
python3 -m pip install -q --no-deps --no-compile $PLAT --target "$WORK/site" "$WORK"/wh/*.whl
S=$WORK/site
rm -rf "$S/bin" "$S/sgl_kernel/flash_ops.abi3.so" "$S/sgl_kernel/sm100" "$S/sgl_kernel/flashmla_ops.abi3.so" \
  "$S"/sgl_kernel/infllm_ops.*.so "$S/sglang/srt/server/_core".*.so "$S/sglang/srt/grpc/_core".*.so \
  "$S/sglang/srt/multimodal/_core".*.so "$S/xgrammar/lib/libxgrammar.a" "$S/sglang/test" \
  "$S/flashinfer/data/cutlass/test" "$S/flashinfer/data/cutlass/examples" "$S/flashinfer/data/cutlass/docs"
python3 -m venv "$WORK/venv" && "$WORK/venv/bin/pip" install -q quicktok-v1 tiktoken transformers tokenizers
"$WORK/venv/bin/python" "$DEVICE/make_model_dir.py" "$WORK/llama3-8b"
rm -rf "$STAGE" && mkdir -p "$STAGE/a" "$STAGE/b" "$STAGE/w"
tar -C "$WORK" -cf - site llama3-8b | xz -6 -T0 > "$WORK/bundle.tar.xz"
split -b 44M -d "$WORK/bundle.tar.xz" "$STAGE/part"
mv "$STAGE/part00" "$STAGE/a/"; mv "$STAGE"/part* "$STAGE/b/" 2>/dev/null || true
python3 -m pip wheel -q --no-deps -w "$STAGE/w" .
# maskcost's own needs that neither the device image nor the staged site has
python3 -m pip download -q --no-deps $PLAT -d "$STAGE/w" simpy
du -sh "$STAGE"/a "$STAGE"/b "$STAGE"/w
rm -rf "$WORK"
