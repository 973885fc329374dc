"""Host-side calibration. The pool plan's defaults live here, with no heavy import, so that the CLI
builds its flags from them."""
# the fill pool's measured plan: thread counts, and step sizes (rows, one distinct matcher each)
POOL_WORKERS = (1, 2, 4, 8)
POOL_ROWS = (16, 32, 64, 128, 256, 512)
