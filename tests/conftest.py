import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

# The tests measure into a cache of their own (one per run, shared by its tests): what a user's
# ~/.cache/maskcost holds, measured on another day at another host speed, must not decide a result.
os.environ["MASKCOST_CACHE_DIR"] = tempfile.mkdtemp(prefix="maskcost-test-cache-")
