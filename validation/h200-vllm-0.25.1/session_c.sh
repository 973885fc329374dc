#!/bin/bash
# Device session C: session B again with 96 recorded outputs replayed per validation schema (not 16).
SESSION=c TRACES_PER_SCHEMA=96 bash "$(dirname "$0")/session_b.sh"
