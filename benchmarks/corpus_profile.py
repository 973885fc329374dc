"""The corpus-wide profile that bench_corpus_grid.py runs its grid on: every schema of a corpus that
calibrates, traced in shards on one many-core host (corpus_profile_device.sh runs it on the device's
16 cores: calibrating the 8,011 schemas of ../shared/data/schemas/dev one at a time is about 98 min on
a 2-core machine).

  python benchmarks/corpus_profile.py split CORPUS_DIR OUT_DIR N
      the corpus's gzip JSON lines dealt round-robin into N folders (every subset in every shard)
  python benchmarks/corpus_profile.py merge OUT POOL_PROFILE SHARD ...
      one profile: every shard's traces, compiles and failures (a SHARD is a finished shard's profile,
      or an unfinished one's calibrate .partial.jsonl: the schemas it had traced); the fill pool
      (measured on an idle host, not beside the other shards) and the host facts from POOL_PROFILE

The shards' traces were measured with the other shards running on the other cores: fit for the
grid's speed (what the benchmark measures), not a calibration to predict from.
"""
from __future__ import annotations

import gzip
import json
import sys
from dataclasses import replace
from pathlib import Path

from maskcost.calibrate.fill import result_from_json
from maskcost.profile import BackendCosts, ProfileError, load_profile, save_profile


def _partial(path: Path) -> dict[str, BackendCosts]:
    """What an unfinished calibrate had traced, by backend (its .partial.jsonl, one schema a line)."""
    by: dict[str, list] = {}
    for line in path.read_text().splitlines():
        try:
            d = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut short by the stop
        by.setdefault(d["backend"], []).append((d["schema_id"], result_from_json(d)))
    return {b: BackendCosts(tuple(t for _, r in rs if not r.error for t in r.traces),
                            tuple(r.compile for _, r in rs if not r.error), (),
                            tuple((sid, r.error) for sid, r in rs if r.error),
                            output_sources=tuple((sid, r.source) for sid, r in rs if not r.error))
            for b, rs in by.items()}


def split(corpus: Path, out: Path, n: int) -> None:
    files = sorted(corpus.glob("*.jsonl.gz"))
    if not files:
        raise SystemExit(f"split: no *.jsonl.gz in {corpus}")
    shards = [[] for _ in range(n)]
    k = 0
    for f in files:
        for line in gzip.open(f, "rt"):
            if line.strip():
                shards[k % n].append(line)
                k += 1
    for i, lines in enumerate(shards):
        d = out / f"shard{i:02d}"
        d.mkdir(parents=True, exist_ok=True)
        with gzip.open(d / "corpus.jsonl.gz", "wt") as g:
            g.writelines(lines)
    print(f"{k} schemas from {len(files)} files into {n} shards under {out}")


def merge(out: Path, pool_path: Path, shard_paths: list[Path]) -> None:
    pool = load_profile(pool_path)
    shards = [load_profile(p).backends if p.name.endswith(".json.gz") else _partial(p) for p in shard_paths]
    backends = {}
    for name, pb in pool.backends.items():
        parts = [s[name] for s in shards if name in s]
        backends[name] = replace(pb, traces=tuple(t for b in parts for t in b.traces),
                                 compiles=tuple(c for b in parts for c in b.compiles),
                                 failures=tuple(f for b in parts for f in b.failures),
                                 output_sources=tuple(o for b in parts for o in b.output_sources))
    notes = [*pool.provenance.get("notes", []),
             f"corpus profile (benchmarks/corpus_profile.py merge): traces and compiles of {len(shards)} shards "
             f"calibrated side by side on {pool.host.cpu_model} "
             f"({sum(p.name.endswith('.partial.jsonl') for p in shard_paths)} of them stopped before the end: "
             f"the schemas they had traced), the fill pool of {pool_path.name} measured alone"]
    p = replace(pool, name=out.name.split(".")[0], backends=backends,
                provenance={**pool.provenance, "notes": notes, "shards": [p.name for p in shard_paths]})
    save_profile(p, out)
    load_profile(out)
    print(f"wrote {out}: " + ", ".join(f"{n}: {len({t.schema_id for t in b.traces})} schemas traced, "
                                        f"{len(b.failures)} skipped" for n, b in backends.items()))


def main(argv: list[str]) -> None:
    try:
        if len(argv) == 4 and argv[0] == "split" and argv[3].isdigit() and int(argv[3]) > 0:
            split(Path(argv[1]), Path(argv[2]), int(argv[3]))
        elif len(argv) >= 4 and argv[0] == "merge":
            merge(Path(argv[1]), Path(argv[2]), [Path(a) for a in argv[3:]])
        else:
            raise SystemExit(__doc__)
    except (ProfileError, OSError, KeyError) as e:
        raise SystemExit(f"corpus_profile {argv[0]}: {e}") from None


if __name__ == "__main__":
    main(sys.argv[1:])
