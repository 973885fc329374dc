"""A new user's first hour: a plain schema without examples, one or three schemas, the other bundled
vocabularies, broken files, and the same command giving the same numbers twice."""
import gzip
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maskcost.calibrate.backends import make_backend
from maskcost.calibrate.fill import trace_schema
from maskcost.calibrate.pool import advanced_matchers, measure_vllm_pool
from maskcost.model.engines import shipped_profile_path
from maskcost.profile import (ProfileError, default_profile_path, load_profile, profile_from_dict,
                                        profile_to_dict, save_profile)
from maskcost.calibrate.run import calibrate_backends
from maskcost.calibrate.schemas import TIERS, SchemaEntry, schema_problem
from maskcost.calibrate.tokenizer import load_vocab
from synth import constant_profile

PLAIN = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 12}, "ok": {"type": "boolean"}},
         "required": ["name", "ok"], "additionalProperties": False}


def mc(*args, env=None):
    return subprocess.run([sys.executable, "-m", "maskcost.cli", *args], capture_output=True, text=True, env=env)


@pytest.fixture(scope="module")
def vocab():
    return load_vocab("llama3")


@pytest.mark.parametrize("backend", ["xgrammar", "guidance"])
def test_the_pool_fills_every_row_from_its_own_matcher(vocab, backend):
    """One output, more rows than positions: still one distinct matcher a row (two pool threads on one
    native matcher crash xgrammar and make llguidance raise), and too few matchers is refused."""
    be = make_backend(backend, vocab)
    compiled, _ = be.compile(PLAIN, cache=True)
    tokens = vocab.encode('{"name": "Al", "ok": true}') + [vocab.eos_id]
    ms = advanced_matchers(be, [(compiled, tokens)], 64)
    assert len(ms) == 64 and len({id(m) for m in ms}) == 64
    pts = measure_vllm_pool(be, ms, workers=(2, 4), rows=(16, 64), repeats=2)
    assert len(pts) == 4 and all(p.parallel_us > 0 for p in pts)
    with pytest.raises(ValueError, match="64 distinct matchers, got 10"):
        measure_vllm_pool(be, ms[:10], workers=(2,), rows=(64,))
    with pytest.raises(ValueError, match="one matcher for two rows"):
        measure_vllm_pool(be, [ms[0]] * 16, workers=(2,), rows=(16,))


@pytest.mark.parametrize("backend", ["xgrammar", "guidance"])
def test_a_schema_without_examples_is_traced_from_outputs_sampled_under_the_mask(vocab, backend):
    be = make_backend(backend, vocab)
    entry = SchemaEntry("plain", "user", PLAIN, ())
    a, b = trace_schema(be, entry, repeats=1), trace_schema(be, entry, repeats=1)
    assert a.error is None and len(a.traces) == 4 and "sampled under the mask" in a.source
    assert a.tokens == b.tokens  # seeded: the same outputs every time
    assert all(t[-1] == vocab.eos_id for t in a.tokens)  # a bounded schema closes


def test_sampled_outputs_that_never_close_are_said_to(vocab):
    """An unbounded value (a number, a string with no maxLength) never closes under a random pick: the trace's
    source says how many outputs were cut unfinished, and a bounded schema's says nothing of it."""
    unbounded = {"type": "object", "properties": {"price": {"type": "number"}}, "required": ["price"]}
    r = trace_schema(make_backend("xgrammar", vocab), SchemaEntry("u", "user", unbounded, ()), repeats=1)
    cut = sum(t[-1] != vocab.eos_id for t in r.tokens)
    assert r.error is None and cut >= 1 and f"{cut} of 4 cut unfinished at 256 tokens" in r.source
    assert "unfinished" not in trace_schema(make_backend("xgrammar", vocab), SchemaEntry("p", "user", PLAIN, ()),
                                            repeats=1).source


def test_a_local_profile_keeps_the_in_engine_side_of_the_profile_it_starts_from(tmp_path):
    """calibrate --schema F --engine-from P (no server): this CPU's traces, and P's forward curve, in-engine fill
    factors and band, as calibrate --base-url carries them; the CPU and the traces are this host's."""
    f = tmp_path / "plain.json"
    f.write_text(json.dumps(PLAIN))
    out = tmp_path / "here.json.gz"
    r = mc("calibrate", "--schema", str(f), "--engine-from", str(default_profile_path()), "--backend", "guidance",
           "--out", str(out), "--pool-rows", "16")
    assert r.returncode == 0, r.stderr
    base, p = load_profile(default_profile_path()), load_profile(out)
    ef, mine = base.backends["guidance"].engine_fill, p.backends["guidance"].engine_fill
    assert mine is not None and mine.serial_factor == pytest.approx(ef.serial_factor, rel=0.35)
    assert p.engine_speeds == base.engine_speeds and p.forward.points == base.forward.points
    assert any("in-engine factors from" in n for n in p.provenance["notes"])
    assert any(n.startswith("the host's bench_us the median of") for n in p.provenance["notes"])  # (its bench spread)


def test_an_invalid_schema_is_named_as_such(vocab):
    assert "invalid JSON schema" in schema_problem({"type": "nosuchtype"})
    assert schema_problem(PLAIN) is None and schema_problem(TIERS["deep"].schema) is None
    r = trace_schema(make_backend("xgrammar", vocab), SchemaEntry("bad", "user", {"type": "nosuchtype"}, ()))
    assert r.error.startswith("invalid JSON schema") and "nosuchtype" in r.error


def test_one_plain_schema_calibrates_on_both_backends(vocab, tmp_path):
    """The small-set crash: one schema, pool steps of more rows than it has positions."""
    res = calibrate_backends(vocab, [SchemaEntry("plain", "user", PLAIN, ()),
                                     SchemaEntry("bad", "user", {"type": "nosuchtype"}, ())],
                             ["xgrammar", "guidance"], tmp_path / "p.jsonl", repeats=1, pool_workers=(1, 4),
                             pool_rows=(16, 128), log=lambda m: None)
    for b in ("xgrammar", "guidance"):
        c = res[b]
        assert {t.schema_id for t in c.traces} == {"plain"} and dict(c.failures)["bad"].startswith("invalid")
        assert "sampled under the mask" in dict(c.output_sources)["plain"]
        assert {p.rows for p in c.pool} == {16, 128}
    p = profile_from_dict(profile_to_dict(constant_profile()))  # the field survives a round trip
    p2 = profile_from_dict(profile_to_dict(type(p)(**{**p.__dict__, "backends": res})))
    assert p2.backends["guidance"].output_sources == res["guidance"].output_sources


@pytest.mark.parametrize("name,straddle", [("cl100k", 1342), ("o200k", 1140)])
def test_the_bundled_vocabularies_with_gaps_load_and_trace(name, straddle):
    v = load_vocab(name)
    assert len(v.straddle_ids) == straddle
    for b in ("xgrammar", "guidance"):
        r = trace_schema(make_backend(b, v), TIERS["flat"], repeats=1)
        assert r.error is None, r.error


def test_straddle_command(tmp_path):
    doc = tmp_path / "doc.json"
    doc.write_text(json.dumps(TIERS["flat"].examples[0], indent=2))
    raw = tmp_path / "s.raw.jsonl"
    raw.write_text("\n".join(json.dumps({"text": json.dumps(x)}) for x in TIERS["flat"].examples) + "\n")
    out = tmp_path / "st.json"
    r = mc("straddle", "--vocab", "llama3", "cl100k", "--json", str(out), str(doc), str(raw))
    assert r.returncode == 0, r.stderr
    d = json.loads(out.read_text())
    assert [v["straddle_set"] for v in d["vocabularies"]][1] == 1342
    f = {(x["file"], x["vocab"]): x for x in d["files"]}
    one = f[(str(doc), "llama3")]
    assert one["outputs"] == 1 and 0 < one["straddling"] < one["tokens"] and one["rate"] == pytest.approx(
        one["straddling"] / one["tokens"])
    assert f[(str(raw), "llama3")]["outputs"] == 2
    # the same count as the straddle flags of the trace predict replays (the trace also has the EOS)
    v = load_vocab("llama3")
    t = trace_schema(make_backend("xgrammar", v), TIERS["flat"], repeats=1).traces[0]
    assert sum(t.straddle) == one["straddling"] and len(t.straddle) == one["tokens"] + 1
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a": 1}\n{"b": 2}\n')
    r = mc("straddle", str(bad))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "without 'text'" in r.stderr


def test_broken_profiles_are_one_line_errors(tmp_path):
    good = default_profile_path().read_bytes()
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(good[: len(good) // 2])
    junk = tmp_path / "junk.json.gz"
    junk.write_bytes(b"\x00\x01not gzip")
    for f in (cut, junk):
        for args in (("predict", "--profile", str(f), "--concurrency", "8"), ("calibrate", "--check", str(f))):
            r = mc(*args)
            assert r.returncode == 2 and r.stderr.count("\n") == 1 and str(f) in r.stderr, r.stderr


def _mutations():
    leaf = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=True, allow_infinity=True),
                     st.text(max_size=3), st.just([]), st.just({}))
    return st.lists(st.tuples(st.integers(0, 10 ** 6), st.sampled_from(["set", "del", "neg"]), leaf), min_size=1,
                    max_size=3)


def _paths(d, prefix=()):
    yield prefix
    if isinstance(d, dict):
        for k, v in d.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(d, list):
        for i, v in enumerate(d[:2]):
            yield from _paths(v, prefix + (i,))


@settings(max_examples=150, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_mutations())
def test_fuzzed_profiles_load_or_raise_profile_error(muts):
    """Mutated keys, types, NaN and negative values: a profile either loads or is a ProfileError."""
    base = profile_to_dict(constant_profile())
    d = json.loads(json.dumps(base))
    for i, op, leaf in muts:
        paths = [p for p in _paths(d) if p]
        path = paths[i % len(paths)]
        parent = d
        for k in path[:-1]:
            parent = parent[k]
        k = path[-1]
        if op == "del":
            del parent[k]
        elif op == "neg" and isinstance(parent[k], (int, float)) and not isinstance(parent[k], bool):
            parent[k] = -parent[k] - 1
        else:
            parent[k] = leaf
    try:
        p = profile_from_dict(d)
    except ProfileError:
        return
    for b in p.backends.values():  # what loads is usable: no NaN or negative time slipped through
        assert all(math.isfinite(x) and x >= 0 for t in b.traces for x in t.fill_us + t.accept_us)


def test_predict_with_a_plain_schema_twice_gives_the_same_numbers(tmp_path):
    """The schema is traced once and cached (with this host's benchmark): the second run reads it back.
    A schema the backend cannot compile, given beside it, is reported and skipped, not fatal."""
    import os
    s, bad = tmp_path / "plain.json", tmp_path / "bad.json"
    s.write_text(json.dumps(PLAIN))
    bad.write_text(json.dumps({"type": "nosuchtype"}))
    env = {**os.environ, "MASKCOST_CACHE_DIR": str(tmp_path / "cache")}
    runs = []
    for i, files in enumerate([[s], [bad, s]]):
        r = mc("predict", "--schema", *map(str, files), "--concurrency", "128", "--no-band", "--json",
               str(tmp_path / f"{i}.json"), env=env)
        assert r.returncode == 0, r.stderr
        runs.append(json.loads((tmp_path / f"{i}.json").read_text()))
        assert "sampled under the mask" in r.stdout
    assert not runs[0]["local_schemas"][0]["cached"]
    assert [(h["schema_id"], h["cached"], h["error"] is None) for h in runs[1]["local_schemas"]] == \
        [("bad", False, False), ("plain", True, True)]
    assert "schema bad (xgrammar): skipped:" in r.stdout
    assert runs[0]["points"][0]["itl_ms_mean"] == runs[1]["points"][0]["itl_ms_mean"]
    assert runs[0]["points"][0]["schema"] == runs[1]["points"][0]["schema"] == "plain"
    # four sampled outputs know its cost far worse than the record's schemas: the 80% interval is wider than the
    # record's ratios by the ITL at the ends of that spread (calibrate/cost_spread.py), the same on the second run
    pt = runs[0]["points"][0]
    iv, (lo, hi) = pt["interval"], pt["itl_ms_pi80"]
    assert iv["cost_rse"] > 0.02
    assert lo < pt["itl_ms_mean"] * iv["lo_ratio"] and hi > pt["itl_ms_mean"] * iv["hi_ratio"]
    assert iv["cost_itl_ms"][0] < pt["itl_ms_mean"] < iv["cost_itl_ms"][1]
    assert runs[1]["points"][0]["itl_ms_pi80"] == pt["itl_ms_pi80"]
    r = mc("predict", "--schema", str(bad), "--concurrency", "8", env=env)  # nothing left: one line
    assert r.returncode != 0 and "--schema bad: xgrammar:" in r.stderr and "Traceback" not in r.stderr


def test_the_benchmark_grammar_kept_on_disk_masks_as_the_compiled_one(vocab, tmp_path, monkeypatch):
    """host.bench_us's grammar is compiled once and read back serialised: the read-back grammar gives
    the same mask at every position of the benchmark's instance; a corrupt file is compiled again."""
    import numpy as np

    import maskcost.calibrate.host as host
    from maskcost.calibrate.fill import output_text
    monkeypatch.setenv("MASKCOST_CACHE_DIR", str(tmp_path))
    be = make_backend("xgrammar", vocab)
    entry = TIERS["bounded"]
    first = host.bench_grammar(be, entry.schema)
    (path,) = (tmp_path / "bench").iterdir()
    monkeypatch.setattr(host, "_BENCH_GRAMMARS", {})
    monkeypatch.setattr(be, "compile", lambda *a, **k: pytest.fail("compiled again although the file is there"))
    again = host.bench_grammar(be, entry.schema)
    assert again is not first
    tokens = vocab.encode(output_text(entry.examples[0])) + [vocab.eos_id]
    ma, mb, bm = be.matcher(first), be.matcher(again), be.bitmask(2)
    for t in tokens:
        be.fill(ma, bm, 0)
        be.fill(mb, bm, 1)
        assert np.array_equal(bm[0].numpy(), bm[1].numpy())
        assert be.accept(ma, t) and be.accept(mb, t)
    path.write_bytes(b"not zlib")
    monkeypatch.setattr(host, "_BENCH_GRAMMARS", {})
    monkeypatch.delattr(be, "compile")  # the instance's stand-in: the real compile again
    assert host.bench_grammar(be, entry.schema) is not None
    assert path.stat().st_size > 1000  # rewritten


def test_a_cached_trace_builds_no_backend(vocab, tmp_path, monkeypatch):
    """A trace read back from the cache needs no grammar engine (its import and set-up are seconds)."""
    from maskcost.calibrate.cache import cached_trace
    monkeypatch.setenv("MASKCOST_CACHE_DIR", str(tmp_path))
    entry = SchemaEntry("plain", "user", PLAIN, ())
    built = []

    def get():
        built.append(1)
        return make_backend("xgrammar", vocab)
    r1, b1, c1 = cached_trace("xgrammar", vocab, entry, get)
    r2, b2, c2 = cached_trace("xgrammar", vocab, SchemaEntry("renamed", "user", PLAIN, ()), get)
    assert (c1, c2, len(built)) == (False, True, 1)
    assert b1 == b2 > 0 and r2.traces[0].schema_id == "renamed" and r1.traces[0].fill_us == r2.traces[0].fill_us


def test_truncated_partial_file_resumes(vocab, tmp_path):
    partial = tmp_path / "p.jsonl"
    calibrate_backends(vocab, [TIERS["flat"]], ["xgrammar"], partial, repeats=1, pool_workers=(1,),
                       pool_rows=(16,), log=lambda m: None)
    partial.write_text(partial.read_text() + '{"backend": "xgrammar", "schema_id": "tier/ne')  # cut mid-line
    res = calibrate_backends(vocab, [TIERS["flat"], TIERS["nested"]], ["xgrammar"], partial, repeats=1,
                             pool_workers=(1,), pool_rows=(16,), log=lambda m: None)
    assert {t.schema_id for t in res["xgrammar"].traces} == {"tier/flat", "tier/nested"}


def test_saved_profile_round_trips_through_gzip(tmp_path):
    p = constant_profile()
    save_profile(p, tmp_path / "x.json.gz")
    assert load_profile(tmp_path / "x.json.gz").backends["xgrammar"].traces == p.backends["xgrammar"].traces
    with gzip.open(tmp_path / "y.json.gz", "wt") as f:
        f.write('{"maskcost_profile_version": 2, "host": []}')
    with pytest.raises(ProfileError, match=r"y.json.gz.host: expected dict, got list"):
        load_profile(tmp_path / "y.json.gz")


def test_calibrate_against_a_server_in_one_command_carries_its_speed(tmp_path, capsys):
    """calibrate --base-url: host traces and pools, the forward curve, prefill, context and the server's own
    speed in one command; predict then runs at that speed with no flag; a second run resumes (measures no
    sweep point twice) and, finished, gives the same profile. --backend-url: the other backend's traces replay its own
    server's outputs."""
    from fake_server import FakeEngine, FakeServer

    from maskcost.cli import main
    s = tmp_path / "plain.json"
    s.write_text(json.dumps(PLAIN))
    out = tmp_path / "host.json.gz"
    eng = FakeEngine('{"name": "Al", "ok": true}', base_step_ms=2.0, per_request_ms=0.05)
    eng.grammar_ms_per_row = 1.5
    other = FakeEngine('{"name":"Alexandrina","ok":false}', base_step_ms=2.0, per_request_ms=0.05)
    other.grammar_ms_per_row = 3.5  # (its factor then near x2.4 of the carried: the middle of x1.2-x5, the
    # bound below and the solve's range, so a swing of this VM's speed between the two tracings stays inside)
    args = ["calibrate", "--base-url", None, "--schema", str(s), "--out", str(out), "--engine-from",
            str(default_profile_path()), "--concurrency", "1", "2", "4", "--speed-concurrency", "3", "2", "4",
            "--rounds", "2", "--min-requests", "6", "--off-tokens", "150", "--pool-rows", "16", "32",
            "--outputs-per-schema", "8", "--outputs-max", "8"]  # (past 8: as many as timing noise asks)
    import maskcost.validate.server_calibration as sc
    import maskcost.validate.server_outputs as so
    order = []  # (sweep file, points measured) in the order they ran

    def recording(url, points, *a, **k):
        order.append((a[1].name.split(".")[1], [p.key for p in points]))
        return real(url, points, *a, **k)
    real = sc.run_sweep
    sc.run_sweep = so.run_sweep = recording  # (the outputs' own points run from server_outputs)
    try:
        with FakeServer(eng) as srv, FakeServer(other) as gd:
            args[2] = srv.url
            args += ["--backend-url", f"guidance={gd.url}"]
            assert main(args) == 0
            served, made = (eng.served, other.served), out.read_bytes()
            assert f"\nwrote {out}: " in "\n" + capsys.readouterr().out
            assert main(args) == 0 and (eng.served, other.served) == served  # all on disk: nothing measured again
            assert out.read_bytes() == made  # and the host's traces not re-drawn: the same profile
            assert f"\nkept {out}: a finished calibration" in "\n" + capsys.readouterr().out
    finally:
        sc.run_sweep = so.run_sweep = real
    # the speed points spread over the run: one after the forward sweep, one after the prefill, the last at the end
    # (the traces replay the speed points' outputs: 20 a schema there, so no outputs point of their own)
    first = order[:len(order) // 2]
    assert [w for w, _ in first] == ["forward-sweep", "speed-sweep", "speed-sweep-guidance", "prefill500",
                                     "prefill1500", "prefill3000", "speed-sweep", "speed-sweep-guidance",
                                     "context", "speed-sweep", "speed-sweep-guidance"]
    for w in ("speed-sweep", "speed-sweep-guidance"):  # each point on the other server at once after the first's
        assert [k for v, k in first if v == w] == [["on-c3-r0"], ["on-c2-r0"], ["on-c3-r0", "on-c2-r0", "on-c4-r0"]]
    from maskcost.records import read_summaries
    for w in ("speed-sweep", "speed-sweep-guidance"):  # each server warmed before its first speed point only
        assert [s_.warmup_requests for s_ in read_summaries(out.with_name(f"host.{w}.jsonl"))] == [4, 0, 0]
    assert [s_.warmup_requests for s_ in read_summaries(out.with_name("host.forward-sweep.jsonl"))] == [4, 0, 0]
    p = load_profile(out)
    m = p.measured_speed
    assert m is not None and m.backend == "xgrammar" and [c for c, _ in m.points] == [2, 3, 4]
    assert 0.2 < m.cpu_speed < 5.0 and m.cpu_speed == pytest.approx(sorted(x for _, x in m.points)[1], abs=1e-3)
    assert {t.schema_id for t in p.backends["guidance"].traces} == {"plain"}
    # the traces replay the server's own outputs (8 of them, --outputs-per-schema), not outputs sampled under the mask
    for b, url in (("xgrammar", srv.url), ("guidance", gd.url)):
        assert dict(p.backends[b].output_sources)["plain"] == (
            f"8 recorded outputs, the engine's own tokens of {'its own' if b == 'guidance' else 'the'} {b} server ({url})")
        assert len(p.backends[b].traces) == 8
    assert p.provenance["server_engine"]["backend_servers"]["guidance"]["base_url"] == gd.url
    took = p.provenance["phases_s"]  # each phase's seconds beside calibrate's estimate of them
    assert set(took) == set(p.provenance["phases_estimate_s"]) and took["speed"] > 0 and took["forward"] > 0
    assert sum(took.values()) <= p.provenance["wall_s"] + 0.5
    # guidance's fill factor read on its own server: the model at the paired speeds meets its points at the factor
    # fitted, which the profile carries drawn halfway toward the record's (--backend-fill-prior record, the default)
    import re
    from dataclasses import replace

    from maskcost.validate.engine_base import fill_scaled
    from maskcost.validate.server_fits import FILL_PRIORS
    ef = p.backends["guidance"].engine_fill
    assert "fitted at calibration on its own server's" in ef.method and "drawn toward the record's" in ef.method
    k, k_pool = map(float, re.search(r"^x([0-9.]+) serial, x([0-9.]+) pool", ef.method.rsplit("; then ", 1)[1]).groups())
    assert k > 1.2  # its server's rows cost 3.5 ms against the other's 1.5
    drawn = FILL_PRIORS["guidance"].drawn(k, k_pool)
    # the note gives the fit and the drawn factors to 3 decimals: drawn from the fit as printed, they agree to what
    # the two roundings allow (half a unit each, the fit's halved by the square root of a weight-0.5 draw)
    said = re.search(r"x([0-9.]+) serial, x([0-9.]+) pool \(calibrate --backend-fill-prior\)$", ef.method)
    assert said is not None and all(abs(float(t) - d) <= 1e-3 for t, d in zip(said.groups(), drawn))
    fit = replace(p, backends={**p.backends, "guidance": replace(p.backends["guidance"], engine_fill=fill_scaled(
        ef, k / drawn[0], k_pool / drawn[1]))})
    from maskcost.model.config import EngineConfig
    from maskcost.records import itl_ms
    from maskcost.validate.report import compare
    for s_ in read_summaries(out.with_name("host.speed-sweep-guidance.jsonl")):
        cfg = EngineConfig(backend="guidance", cpu_speed=dict(m.points)[s_.concurrency], max_num_seqs=256)
        got = compare(fit, cfg, [s_])[0]["metrics"]["ITL ms"]["predicted"]
        assert got == pytest.approx(itl_ms(s_), rel=0.15), s_.concurrency
    tokens = {b: {len(t.fill_us) for t in p.backends[b].traces} for b in ("xgrammar", "guidance")}
    assert min(tokens["guidance"]) > max(tokens["xgrammar"])  # each its own server's outputs (a longer name there)
    assert any(n.startswith("traces: the server's own valid outputs, up to 8 a schema (its") for n in p.provenance["notes"])
    assert any(n.startswith("the host's bench_us the median of") for n in p.provenance["notes"])  # (host_side's bench)
    assert {q.rows for q in p.backends["xgrammar"].pool} == {16, 32}  # --pool-rows
    assert len(p.forward.prefill_points) == 3 and p.forward.context_points
    assert p.backends["xgrammar"].engine_fill is not None  # the same-version in-engine factors, scaled
    assert any("in-engine factors from" in n for n in p.provenance["notes"])
    r = mc("predict", "--profile", str(out), "--schema-id", "plain", "--concurrency", "4", "--no-band",
           "--json", str(tmp_path / "p.json"))
    assert r.returncode == 0, r.stderr
    assert f"cpu speed: {m.cpu_speed:.3f}, the calibrated server's own" in r.stdout
    assert json.loads((tmp_path / "p.json").read_text())["points"][0]["config"]["engine"]["cpu_speed"] == m.cpu_speed
    import torch
    if not torch.cuda.is_available():  # no GPU for the apply and no profile to copy it from: said before any sweep
        idle = FakeEngine("{}")
        with FakeServer(idle) as srv:
            r = mc("calibrate", "--base-url", srv.url, "--schema", str(s), "--out", str(tmp_path / "x.json.gz"))
        assert r.returncode == 2 and "give --engine-from PROFILE for the apply cost" in r.stderr.splitlines()[-1]
        assert idle.served == 0 and not list(tmp_path.glob("x.*"))
    with FakeServer(FakeEngine("{}")) as srv:  # a wrong backend name, a bad budget: one line each
        r = mc("calibrate", "--base-url", srv.url, "--schema", str(s), "--out", str(tmp_path / "x.json.gz"),
               "--backend", "xgrammar", "--server-backend", "guidance")
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--server-backend guidance" in r.stderr
        r = mc("calibrate", "--base-url", srv.url, "--schema", str(s), "--out", str(tmp_path / "x.json.gz"),
               "--budget-min", "0")
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--budget-min 0" in r.stderr
        r = mc("calibrate", "--base-url", srv.url, "--schema", str(s), "--out", str(tmp_path / "x.json.gz"),
               "--pool-rows", "16", "0")
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--pool-rows 16 0" in r.stderr
        for bad, says in (("guidance", "give BACKEND=URL"), ("xgrammar=" + srv.url, "already has a server"),
                          ("outlines=" + srv.url, "not a backend calibrated here")):
            r = mc("calibrate", "--base-url", srv.url, "--schema", str(s), "--out", str(tmp_path / "x.json.gz"),
                   "--backend-url", bad)
            assert r.returncode == 2 and r.stderr.count("\n") == 1 and f"--backend-url {bad}: " in r.stderr, r.stderr
            assert says in r.stderr
    r = mc("calibrate", "--schema", str(s), "--out", str(tmp_path / "x.json.gz"), "--backend-url", "guidance=http://h:1")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "goes with --base-url" in r.stderr
    # with no server of its own, the other backend replays the --base-url server's outputs, said to be a guess
    from maskcost.validate.server_outputs import whose_outputs
    said = whose_outputs("8 recorded outputs", "guidance", "xgrammar", "http://h:1", {})
    assert said.startswith("8 recorded outputs of the xgrammar server (http://h:1): ") and "a guess" in said
    assert whose_outputs("4 outputs sampled under the mask (seed 0)", "guidance", "xgrammar", "u", {}).startswith("4 ")


def test_a_plan_of_no_points_and_a_budget_it_cannot_meet_are_said(tmp_path):
    """calibrate --base-url: a zero load or count is one line naming the flag, before any server is asked; a
    --budget-min shorter than the shortest plan is said (the plan goes on at its shortest)."""
    from maskcost.validate.plan import LivePlan
    with pytest.raises(ValueError, match="--speed-concurrency 0: must be >= 1"):
        LivePlan(speed_concurrency=(0, 96))
    with pytest.raises(ValueError, match="--rounds 0: must be >= 1"):
        LivePlan(rounds=0)
    s = tmp_path / "plain.json"
    s.write_text(json.dumps(PLAIN))
    base = ("calibrate", "--base-url", "http://127.0.0.1:9", "--schema", str(s), "--out", str(tmp_path / "x.json.gz"))
    r = mc(*base, "--concurrency", "0")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--concurrency 0: must be >= 1" in r.stderr, r.stderr
    r = mc(*base, "--budget-min", "0.1")
    assert "--budget-min 0.1 cannot be met: the shortest plan takes about" in r.stderr
    assert r.stderr.strip().splitlines()[-1].endswith("unreachable (ConnectError: [Errno 111] Connection refused)")


def test_the_default_plan_traces_more_outputs_in_the_former_trace_time():
    """96 outputs a schema replayed once cost the host phase what 32 replayed three times did (docs/validation.md
    finding 31); the outputs cost no point of their own unless the speed points' are short, and a trace repeat
    costs its replays."""
    from dataclasses import replace

    from maskcost.validate.plan import LivePlan
    new, former = LivePlan(), LivePlan(outputs_per_schema=32, outputs_max=32, outputs_concurrency=32, trace_repeats=3)
    assert new.outputs_per_schema >= 3 * former.outputs_per_schema and new.trace_repeats == 1
    at_least = replace(new, outputs_max=new.outputs_per_schema)  # (no outputs past the first 96 traced)
    assert at_least.estimate_s(3, 2)["host"] == pytest.approx(former.estimate_s(3, 2)["host"], rel=0.02)
    # past them, a share of the speed points' other outputs where a schema's mean is poorly known: host time only
    assert new.outputs_past(3) == pytest.approx(0.9 * 512 - 96) and new.outputs_past(30) == 0
    assert new.estimate_s(3, 2)["host"] > at_least.estimate_s(3, 2)["host"]
    assert {k: v for k, v in new.estimate_s(3, 2).items() if k != "host"} == \
        {k: v for k, v in at_least.estimate_s(3, 2).items() if k != "host"}
    # the outputs are the speed points' (1,536 requests: 512 a schema of three), a point of its own a schema only
    # where they are short (20 schemas: 76 a schema)
    assert new.estimate_s(3, 2)["outputs"] == 0 and LivePlan(outputs_per_schema=192).estimate_s(3, 2)["outputs"] == 0
    assert new.estimate_s(20, 2)["outputs"] > 0 and LivePlan(outputs_per_schema=1024).estimate_s(3, 2)["outputs"] > 0
    assert LivePlan(trace_repeats=3).estimate_s(3, 2)["host"] > new.estimate_s(3, 2)["host"]


def test_the_budget_trims_the_plan_in_order():
    from dataclasses import replace

    from maskcost.validate.plan import LivePlan, fit_to_budget
    full = LivePlan()
    assert full.context_concurrency == (8, 128, 256)
    total = sum(full.estimate_s(3, 2).values())
    assert fit_to_budget(full, None, 3, 2) == full and fit_to_budget(full, total + 1, 3, 2) == full
    est = full.estimate_s(3, 2)
    both = ("xgrammar", "guidance")  # --backend-url's server too: its speed points (the outputs are theirs)
    two, twice = full.estimate_s(3, 2, servers=both), full.estimate_s(3, 2, servers=("xgrammar", "xgrammar"))
    assert two["outputs"] == est["outputs"] == 0 and twice["speed"] > 1.9 * est["speed"]
    assert est["speed"] < two["speed"] < twice["speed"]  # llguidance's points: shorter outputs, cheaper fills
    budget = sum(two.values()) - 1  # the speed points stay: the trims pay the rest
    assert fit_to_budget(full, budget, 3, 2, servers=both) != full
    assert sum(fit_to_budget(full, budget, 3, 2, servers=both).estimate_s(3, 2, both).values()) <= budget
    less = fit_to_budget(full, total - est["context"] / 2, 3, 2)
    assert less.context_concurrency == () and less.prefill_pads == full.prefill_pads
    least = fit_to_budget(full, 1.0, 3, 2)
    assert least.rounds == 2 and not least.frontend and least.prefill_pads == () and 32 not in least.forward_concurrency
    assert least.outputs_per_schema == least.outputs_max == 32 and least.trace_repeats == 1  # the last: a third
    before = replace(full, context=False, prefill_pads=(), frontend=False, rounds=2,
                     forward_concurrency=tuple(c for c in full.forward_concurrency if c not in (32, 192)))
    past = fit_to_budget(full, sum(before.estimate_s(3, 2).values()) - 1, 3, 2)  # the outputs past the first
    assert past == replace(before, outputs_max=96)  # 96 go after a round of each sweep, before a third of those
    few = LivePlan(outputs_per_schema=16, outputs_concurrency=16)  # never more outputs than asked
    assert fit_to_budget(few, 1.0, 3, 2).outputs_per_schema == 16
    many, fewer = full.estimate_s(30, 2), fit_to_budget(full, 1.0, 30, 2).estimate_s(30, 2)  # thirty schemas
    assert fewer["host"] < 0.7 * many["host"] and fewer["outputs"] < many["outputs"]
    assert least.speed_concurrency == full.speed_concurrency  # the speed sweep always stays
    # ten schemas: a round fewer leaves the speed points short of outputs, and their own points cost more than
    # the round saves: that trim is skipped
    before = replace(full, context=False, prefill_pads=(), frontend=False, forward_concurrency=(1, 8, 64, 128, 256))
    assert sum(replace(before, rounds=2).estimate_s(10, 2).values()) > sum(before.estimate_s(10, 2).values())
    assert fit_to_budget(full, 1.0, 10, 2).rounds == 3 and fit_to_budget(full, 1.0, 6, 2).rounds == 2
    assert full.outputs_short(3) == 0 and full.outputs_short(20) > 0  # 512 requests a schema of 3; 77 of 20


def test_without_the_calibrate_extra_a_schema_is_a_one_line_error(tmp_path):
    """The README's first install has no xgrammar: predict --schema says what to install, no traceback."""
    import os
    fake = tmp_path / "site" / "xgrammar"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text('raise ImportError("No module named \'xgrammar\'", name="xgrammar")\n')
    s = tmp_path / "plain.json"
    s.write_text(json.dumps(PLAIN))
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site"), "MASKCOST_CACHE_DIR": str(tmp_path / "cache")}
    r = mc("predict", "--schema", str(s), "--concurrency", "8", "--no-band", env=env)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "xgrammar is not installed" in r.stderr, r.stderr


def test_the_servers_speed_is_read_apart_on_each_side_of_the_fill_pool():
    """vLLM fills serially up to 128 rows and on its pool above: where the speed points ran on both sides,
    the profile carries both medians, and a point runs at the speed of the regime its steps mostly use."""
    from dataclasses import replace

    from maskcost.model.config import EngineConfig, Workload
    from maskcost.model.predict import run_point_band
    from maskcost.profile import profile_to_dict
    from maskcost.validate.server_fits import measured_speed
    cfg = EngineConfig()
    from synth import summary
    on = [summary({"concurrency": c, "engine": {"running_mean": r}}) for c, r in ((48, 46.4), (96, 92.7), (144, 138.5),
                                                                                (224, 214.6))]
    pts = ((48, 0.816), (96, 0.727), (144, 0.978), (224, 1.0))
    m = measured_speed(pts, on, cfg, "s.jsonl")
    assert m.cpu_speed == pytest.approx((0.816 + 0.727) / 2) and m.pool_speed == pytest.approx(0.989)
    assert "0.989 on vLLM's fill pool" in m.words() and "(pool)" in m.source
    one_side = measured_speed(pts[:2], on, cfg, "s.jsonl")
    assert one_side.pool_speed is None and one_side.cpu_speed == pytest.approx((0.816 + 0.727) / 2)
    sg = measured_speed(pts, on, replace(cfg, engine="sglang"), "s.jsonl")
    assert sg.pool_speed is None and "(pool)" not in sg.source  # SGLang has no fill pool to label
    # the profile carries it (and refuses a bad one)
    p = load_profile(default_profile_path())
    d = profile_to_dict(replace(p, measured_speed=m))
    back = profile_from_dict(d).measured_speed
    assert back.pool_speed == pytest.approx(m.pool_speed, rel=1e-3) and back.cpu_speed == pytest.approx(m.cpu_speed,
                                                                                                     rel=1e-3)
    d["measured_speed"]["pool_speed"] = float("nan")
    with pytest.raises(ProfileError, match="measured_speed.pool_speed"):
        profile_from_dict(d)
    # each point at its regime's speed: the same numbers as that speed alone
    wl = lambda c: Workload(concurrency=c, requests=max(200, 3 * c), schemas=("bounded_0",) if "bounded_0" in  # noqa: E731
                            p.schema_ids("xgrammar") else ())
    split = replace(cfg, cpu_speed=0.8, cpu_speed_pool=1.2)
    p = replace(p, engine_speeds=None)
    for c, speed, regime in ((32, 0.8, "serial"), (256, 1.2, "pool")):
        got = run_point_band(p, split, wl(c))
        alone = run_point_band(p, replace(cfg, cpu_speed=speed), wl(c))
        assert got.speed_regime == regime and got.cpu_speed_ran == speed
        assert got.itl_ms_mean == alone.itl_ms_mean and got.config["engine"]["cpu_speed_pool"] == 1.2
    assert run_point_band(p, cfg, wl(32)).speed_regime is None
    # each of those points ran its schema-on arm once: a load that cannot reach the pool's threshold is
    # serial without a run, a pool point runs at the pool's speed first
    import maskcost.model.predict as mp
    calls = []
    real = mp.run_point
    mp.run_point = lambda *a, **k: calls.append(a[1].cpu_speed) or real(*a, **k)
    try:
        for c in (32, 256):
            run_point_band(p, split, wl(c))
    finally:
        mp.run_point = real
    assert calls == [0.8, 1.2]


def test_a_profile_finds_its_vocabulary_by_content():
    """A profile whose tokenizer folder is not on this host (the shipped SGLang profile names the device's
    llama3-8b) finds the bundled vocabulary with the same tokens; another vocabulary is refused by name."""
    from maskcost.calibrate.tokenizer import TokenizerError, profile_vocab
    llama3 = load_vocab("llama3")
    assert profile_vocab("no/such/folder", llama3.size, llama3.sha256).name == "llama3"
    assert profile_vocab("llama3", llama3.size, llama3.sha256).sha256 == llama3.sha256
    with pytest.raises(TokenizerError, match="--tokenizer cl100k: its vocabulary .* is not the profile's"):
        profile_vocab("no/such/folder", llama3.size, llama3.sha256, override="cl100k")
    with pytest.raises(TokenizerError, match="no bundled vocabulary has its content: give --tokenizer DIR"):
        profile_vocab("no/such/folder", llama3.size, "0" * 64)
    with pytest.raises(TokenizerError, match="neither a bundled vocabulary"):
        profile_vocab("no/such/folder", llama3.size, None)  # an older profile without the digest
    shipped = load_profile(shipped_profile_path(["sglang"]))
    assert shipped.tokenizer == "llama3-8b" and shipped.tokenizer_sha256 == llama3.sha256
    assert load_profile(default_profile_path()).tokenizer_sha256 == llama3.sha256


def test_predict_engine_sglang_with_a_users_schema_from_the_shipped_profile(tmp_path):
    """The user's SGLang path from a fresh install: the shipped profile, a plain schema, and a schema file
    that clashes with one of the profile's ids: the same schema takes the profile's traces (nothing traced),
    another schema under that id is traced as id@digest."""
    import os
    from maskcost.profile import schema_sha256
    env = {**os.environ, "MASKCOST_CACHE_DIR": str(tmp_path / "cache")}
    plain, mine = tmp_path / "plain.json", tmp_path / "contact.json"
    plain.write_text(json.dumps(PLAIN))
    mine.write_text(json.dumps(PLAIN))  # the id of a profile schema, another content
    same = str(Path(__file__).parent / "data" / "schemas" / "contact.json")  # the SGLang profile's own schema
    how = {}
    for files in ([str(plain), same], [str(mine)]):
        r = mc("predict", "--engine", "sglang", "--schema", *files, "--concurrency", "8", "--json",
               str(tmp_path / "p.json"), env=env)
        assert r.returncode == 0, r.stderr
        d = json.loads((tmp_path / "p.json").read_text())
        how.update({h["schema_id"]: h for h in d["local_schemas"]})
        assert d["points"][0]["engine"] == "sglang" and "itl_ms_pi80" in d["points"][0]
    new_id = f"contact@{schema_sha256(PLAIN)[:8]}"
    assert set(how) == {"plain", "contact", new_id}
    assert how["contact"]["reused"] and how[new_id]["renamed_from"] == "contact" and not how["plain"]["reused"]
    assert f"schema contact as {new_id}" in r.stdout and "80% interval" in r.stdout
    r = mc("predict", "--engine", "sglang", "--schema", str(plain), "--tokenizer", "cl100k", "--concurrency", "8",
           env=env)
    assert r.returncode != 0 and "--tokenizer cl100k: its vocabulary" in r.stderr and "Traceback" not in r.stderr


def test_an_output_is_replayed_as_the_tokens_the_engine_streamed(vocab, tmp_path):
    """The sweep keeps each streamed chunk; a chunk that is one token's text is that token, one that is
    not (several tokens, a character cut between byte tokens) is re-tokenized. The engine's stream is
    longer than the text re-tokenized, and its length is the trace's."""
    from maskcost.calibrate.run import recorded_outputs
    engine_tokens = vocab.engine_tokens
    chunks = ['{"', "name", '":', ' "', "A", "l", '",', ' "', "ok", '":', " true", "}"]
    text = "".join(chunks)
    ids = engine_tokens(chunks)
    assert len(ids) == len(chunks) > len(vocab.encode(text)) and b"".join(vocab.tokens[i] for i in ids) == text.encode()
    assert engine_tokens(["Al true"]) == vocab.encode("Al true")  # not one token: re-tokenized
    raw = tmp_path / "s.raw.jsonl"
    raw.write_text(json.dumps({"schema_id": "plain", "check": "valid", "text": text, "chunks": chunks}) + "\n" +
                   json.dumps({"schema_id": "plain", "check": "valid", "text": text}) + "\n")
    got = recorded_outputs(raw, vocab)["plain"]
    assert got == [ids, text]  # an older record without chunks: its text
    r = trace_schema(make_backend("xgrammar", vocab), SchemaEntry("plain", "user", PLAIN, ()), got[:1])
    assert not r.error and len(r.traces[0].fill_us) == len(ids) + 1  # the EOS too
    assert r.source == "1 recorded outputs, the engine's own tokens"


def test_calibrate_traces_its_speed_points_outputs_and_tops_up_a_schema_short_of_them(vocab, tmp_path):
    """calibrate --base-url's outputs: those its schema-on speed points wrote, spread over them, as the engine
    streamed their tokens; a schema short of them gets a point of its own for the rest (and only it); run
    again, it resumes without a request. A schema no backend can compile is never sent to the server."""
    from fake_server import FakeEngine, FakeServer

    from maskcost.calibrate.run import compilable
    from maskcost.validate.plan import LivePlan
    from maskcost.validate.server_outputs import server_outputs, spread
    from maskcost.validate.sweep import PointSpec, read_summaries, run_sweep
    from dataclasses import replace
    assert spread(list(range(10)), 4) == [1, 3, 6, 8] and spread([1, 2], 4) == [1, 2]
    eng = FakeEngine('{"name": "Al", "ok": true}', base_step_ms=1.0, per_request_ms=0.05)
    plain, any_ = SchemaEntry("plain", "user", PLAIN, ()), SchemaEntry("any", "user", {"type": "object"}, ())
    bad = SchemaEntry("bad", "user", {"type": "nope"}, ())
    said: list[str] = []
    assert compilable(vocab, [plain, bad, any_], ["xgrammar"], said.append) == {"xgrammar": [plain, any_]}
    assert not said  # (no xgrammar server named: the traces say it later)
    compilable(vocab, [plain, bad, any_], ["xgrammar"], said.append, said_for={"xgrammar"})
    assert len(said) == 1 and said[0].startswith("calibrate: bad is not sent to the xgrammar server: invalid JSON")
    plan = LivePlan(outputs_per_schema=4, outputs_max=4, outputs_concurrency=4, min_requests=2)
    speed, own = tmp_path / "speed.jsonl", tmp_path / "o.jsonl"
    with FakeServer(eng) as srv:
        run_sweep(srv.url, [PointSpec("on", 3, 0, 6)], [plain], speed)  # the speed points: plain's only
        served = eng.served
        got = server_outputs(srv.url, vocab, [plain, any_], speed, own, plan, seed=0)
        assert eng.served - served == 1 + 4 + 5  # one request a schema first; any's point of its own: 4 warm-up, 1.25 x 4; none for plain
        served = eng.served
        assert server_outputs(srv.url, vocab, [plain, any_], speed, own, plan, seed=0) == got
        # past outputs_per_schema, every other output it has, after the same first four (the tracer stops among
        # them where the mean is known: fill.EnoughTraces), and no request more
        more = server_outputs(srv.url, vocab, [plain, any_], speed, own, replace(plan, outputs_max=512), seed=0)
        assert eng.served == served
    assert [p.config["schemas"] for p in read_summaries(own)] == [["any"]]
    assert {k: len(v) for k, v in got.items()} == {"plain": 4, "any": 4}
    assert {k: len(v) for k, v in more.items()} == {"plain": 6, "any": 5} and all(more[k][:4] == got[k] for k in got)
    assert all(isinstance(x, list) and x for x in got["plain"])  # token ids, read back from the chunks


def test_calibrate_asks_no_outputs_of_a_schema_the_server_refused(vocab, tmp_path):
    """A schema the server refused at the speed points (the sweep's schema check) gets no point of its own for
    outputs: it keeps outputs sampled under the mask, the others their server's."""
    from fake_server import FakeEngine, FakeServer

    from maskcost.validate.plan import LivePlan
    from maskcost.validate.server_outputs import server_outputs
    from maskcost.validate.sweep import PointSpec, read_summaries, run_sweep
    plain, bad = SchemaEntry("plain", "user", PLAIN, ()), SchemaEntry("bad", "user", {**PLAIN, "x-fake-refuse": True}, ())
    plan = LivePlan(outputs_per_schema=4, outputs_max=4, outputs_concurrency=4, min_requests=2)
    speed, own = tmp_path / "speed.jsonl", tmp_path / "o.jsonl"
    with FakeServer(FakeEngine('{"name": "Al", "ok": true}', base_step_ms=1.0)) as srv:
        run_sweep(srv.url, [PointSpec("on", 3, 0, 8)], [plain, bad], speed, warmup=0)
        assert list(read_summaries(speed)[0].config["refused_schemas"]) == ["bad"]
        served = srv.engine.served
        got = server_outputs(srv.url, vocab, [plain, bad], speed, own, plan, seed=0)
        assert srv.engine.served == served and not own.exists()
    assert {k: len(v) for k, v in got.items()} == {"plain": 4}


def test_the_speed_points_warm_every_schema_once_resume_warm_and_set_an_unfinished_point_aside(vocab, tmp_path):
    """calibrate's speed points: only the schemas a backend compiles are sent; a server is warmed (one request
    of every schema at least) before the first point a run measures on it, also when it resumes after points
    found on file; a point cut short leaves its raw records aside, not mixed with its rerun's."""
    from fake_server import FakeEngine, FakeServer

    from maskcost.calibrate.run import compilable
    from maskcost.records import read_raw_records, read_summaries
    from maskcost.validate.plan import LivePlan
    from maskcost.validate.server_calibration import SpeedSweeps
    from maskcost.validate.sweep import PointSpec, set_aside_unfinished, warm_specs
    ids = [f"s{i}" for i in range(5)]
    entries = [SchemaEntry(i, "user", PLAIN, ()) for i in ids] + [SchemaEntry("bad", "user", {"type": "nope"}, ())]
    warm = warm_specs(PointSpec("on", 48, 0, 144), entries[:5], 4, 64, 16, seed=0)
    assert {r.schema_id for r in warm} == set(ids) and len(warm) >= 5  # every grammar compiled before the point
    eng = FakeEngine('{"name": "Al", "ok": true}', base_step_ms=1.0, per_request_ms=0.05)
    side = lambda what: tmp_path / f"h.{what}.jsonl"  # noqa: E731
    plan = LivePlan(speed_concurrency=(3, 2), rounds=2, min_requests=6)
    with FakeServer(eng) as srv:
        on = compilable(vocab, entries, ["xgrammar"], said_for={"xgrammar"})
        SpeedSweeps(srv.url, "xgrammar", {}, on, side, plan, 0).run([PointSpec("on", 3, 0, 6)])
        again = SpeedSweeps(srv.url, "xgrammar", {}, on, side, plan, 0)  # a second run: the first point on file
        again.run([PointSpec("on", 3, 0, 6), PointSpec("on", 2, 0, 6)])
    got = {s.point: s for s in read_summaries(side("speed-sweep"))}
    assert got["on-c3-r0"].warmup_requests >= 5 and got["on-c2-r0"].warmup_requests >= 5
    assert {r["schema_id"] for r in read_raw_records(tmp_path / "h.speed-sweep.raw.jsonl")} <= set(ids)  # no "bad"
    raw = tmp_path / "x.raw.jsonl"
    raw.write_text('{"point": "on-c3-r0"}\n{"point": "on-c2-r0"}\n{"point": "on-c2')  # c2 cut short
    set_aside_unfinished(raw, {"on-c2-r0"})
    assert raw.read_text() == '{"point": "on-c3-r0"}\n'
    assert (tmp_path / "x.aborted.raw.jsonl").read_text() == '{"point": "on-c2-r0"}\n{"point": "on-c2'


def test_a_user_schemas_compile_is_carried_by_the_profiles_own_tier_compiles(tmp_path, monkeypatch):
    """xgrammar compiles on 8 threads, so a single-thread bench does not carry a compile between hosts of
    other core counts (validation/h200-vllm-0.25.1/refcycle): the profile's own compile of the reference tiers
    over this host's does; measured once, read back."""
    from dataclasses import replace

    from maskcost.calibrate.cache import COMPILE_REFERENCE_REPEATS, COMPILE_REFERENCE_TIERS, cached_reference_compiles
    from maskcost.calibrate.local import _compile_scale
    from maskcost.profile import CompileCost
    from synth import constant_profile
    p = constant_profile()
    assert _compile_scale(p, "xgrammar", {"tier/flat": 50.0}) is None  # no tier in common: the bench carries it
    b = p.backends["xgrammar"]
    tiers = (CompileCost("tier/flat", 100.0, 1.0, 1000), CompileCost("tier/nested", 300.0, 1.0, 1000))
    p = replace(p, backends={**p.backends, "xgrammar": replace(b, compiles=b.compiles + tiers)})
    assert _compile_scale(p, "xgrammar", {"tier/flat": 50.0, "tier/nested": 100.0, "tier/deep": 10.0}) == 2.5

    class Fake:
        calls = 0

        def compile(self, schema, cache):
            Fake.calls += 1
            return None, 7.0
    monkeypatch.setenv("MASKCOST_CACHE_DIR", str(tmp_path))
    vocab = type("V", (), {"name": "fake", "size": 10})()
    got = cached_reference_compiles("xgrammar", vocab, Fake)
    assert got == {f"tier/{t}": 7.0 for t in COMPILE_REFERENCE_TIERS}
    assert Fake.calls == len(COMPILE_REFERENCE_TIERS) * COMPILE_REFERENCE_REPEATS
    assert cached_reference_compiles("xgrammar", vocab, lambda: pytest.fail("measured again")) == got


def test_calibrate_batch_fill_measures_xgrammars_batch_api_and_the_variant_runs_on_it(tmp_path, capsys):
    """calibrate --batch-fill: per-row calls against one BatchGrammarMatcher call per 16-row chunk, on real
    xgrammar matchers; the profile carries it and --engine-version 0.33.0+batched-fill runs on it."""
    from maskcost.cli import main
    out = tmp_path / "bf.json.gz"
    assert main(["calibrate", "--batch-fill", "--engine-from", str(shipped_profile_path(("vllm",))),
                 "--tier", "flat", "nested", "--out", str(out)]) == 0
    p = load_profile(out)
    saving = p.backends["xgrammar"].batch_fill_saving_us
    assert saving is not None and math.isfinite(saving) and abs(saving) < 50  # a call's overhead, not a fill's work
    assert any("batch_fill_saving_us measured on" in n for n in p.provenance["notes"])
    assert main(["predict", "--profile", str(out), "--engine-version", "0.33.0+batched-fill", "--concurrency", "8",
                 "--requests", "40", "--schema-id", "tier/flat"]) == 0
    assert main(["calibrate", "--batch-fill", "--engine-from", str(out), "--out", str(tmp_path / "x.json.gz")]) == 2
    assert "give schemas with examples" in capsys.readouterr().err
