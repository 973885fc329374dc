#!/bin/bash
# The embedded default after session M (post hoc; cross_session.sh is the evidence): the one before it
# (l/profile-ij-speeds.json.gz) with the pool-task factor from the pool/serial ratio of M's three servers
# (pool_ratio.sh), and the engine speeds of the servers of sessions A-M measured against it
# (engine_speeds.py). usage (from the repository root): bash validation/h200-vllm-0.25.1/m/make_default.sh
set -eu
V=validation/h200-vllm-0.25.1; M=$V/m
bash $M/pool_ratio.sh > $M/pool-ratio.md
python3 $M/engine_speeds.py $M/profile-ijm-pool.json.gz $M/engine-speeds.json
python3 $V/l/add_engine_speeds.py $M/profile-ijm-pool.json.gz $M/engine-speeds.json $M/profile-ijm-speeds.json.gz
cp $M/profile-ijm-speeds.json.gz maskcost/profiles/default.json.gz
echo "maskcost/profiles/default.json.gz = $M/profile-ijm-speeds.json.gz"
