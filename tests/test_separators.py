"""How each backend's engine writes JSON, and a profile's traces replayed in its own convention: llguidance
servers (vLLM, SGLang) write compact JSON, xgrammar ones ", " and ": "; a profile's in-engine factors hold
for the convention its traces were replayed in (profile.BackendCosts.separators)."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest

from maskcost.calibrate.backends import LLGUIDANCE_SEPARATORS, XGRAMMAR_SEPARATORS, make_backend
from maskcost.calibrate.fill import trace_schema
from maskcost.calibrate.run import replay_cost_ratio
from maskcost.calibrate.schemas import SchemaEntry
from maskcost.calibrate.tokenizer import load_vocab
from maskcost.profile import EngineFill, ProfileError, load_profile, profile_from_dict, profile_to_dict, save_profile
from maskcost.validate.engine_base import scaled_engine_side
from synth import constant_profile

PLAIN = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 12}, "ok": {"type": "boolean"}},
         "required": ["name", "ok"], "additionalProperties": False}
ENTRY = SchemaEntry("plain", "user", PLAIN, ())
COMPACT, SPACED = '{"name":"Al","ok":true}', '{"name": "Al", "ok": true}'


@pytest.fixture(scope="module")
def vocab():
    return load_vocab("llama3")


def test_guidance_replays_the_compact_json_its_engines_write_and_rewrites_the_rest(vocab):
    gd = make_backend("guidance", vocab)
    assert gd.separators == LLGUIDANCE_SEPARATORS and make_backend("xgrammar", vocab).separators == XGRAMMAR_SEPARATORS
    own = trace_schema(gd, ENTRY, [vocab.encode(COMPACT)], repeats=1)
    assert not own.error and own.source == "1 recorded outputs, the engine's own tokens"
    assert own.tokens[0][:-1] == tuple(vocab.encode(COMPACT))
    # an xgrammar server's output: rejected as written, re-written compact and re-tokenized, and said so
    other = trace_schema(gd, ENTRY, [vocab.encode(SPACED)], repeats=1)
    assert not other.error and "re-written with this one's separators (',', ':')" in other.source
    assert other.tokens == own.tokens
    # the convention of an older profile: xgrammar's separators replayed on a grammar that writes them
    legacy = trace_schema(make_backend("guidance", vocab, XGRAMMAR_SEPARATORS), ENTRY, [SPACED], repeats=1)
    assert not legacy.error and "re-written" not in legacy.source
    # not JSON at all: no re-write, the replay's own error
    bad = trace_schema(gd, ENTRY, ['{"name": oops'], repeats=1)
    assert bad.error.startswith("replay failed")


def test_a_profile_records_its_traces_separators(tmp_path):
    p = constant_profile()
    b = p.backends["xgrammar"]
    assert b.separators is None and b.traced_separators == XGRAMMAR_SEPARATORS  # older profiles: xgrammar's
    p = replace(p, backends={**p.backends, "xgrammar": replace(b, separators=LLGUIDANCE_SEPARATORS)})
    save_profile(p, tmp_path / "p.json.gz")
    assert load_profile(tmp_path / "p.json.gz").backends["xgrammar"].traced_separators == LLGUIDANCE_SEPARATORS
    d = profile_to_dict(p)
    d["backends"]["xgrammar"]["separators"] = [","]
    with pytest.raises(ProfileError, match=r"backends.xgrammar.separators: expected two strings"):
        profile_from_dict(d)


def test_in_engine_fill_factors_carried_to_another_convention_are_divided_by_the_library_ratio():
    """calibrate --base-url takes a base profile's in-engine factors; where its traces replayed another
    convention, its fill factors (engine / library) are divided by what the library's fill costs more here."""
    base = constant_profile()
    ef = EngineFill("probe", 2.0, 1.6, (), pool_task_factor=2.4)
    base = replace(base, backends={**base.backends, "xgrammar": replace(base.backends["xgrammar"], engine_fill=ef)})
    got, r = scaled_engine_side(base, base.host.bench_us * 0.5, dict(base.backends), {"xgrammar": 1.25})
    g = got["xgrammar"].engine_fill
    assert r == 0.5 and (g.serial_factor, g.pool_factor, g.pool_task_factor) == pytest.approx((1.6, 1.28, 1.92))
    same, _ = scaled_engine_side(base, base.host.bench_us, dict(base.backends))
    assert same["xgrammar"].engine_fill.serial_factor == 2.0


def test_the_replay_cost_ratio_of_two_conventions_on_the_same_outputs(vocab):
    outputs = {"plain": [vocab.encode(COMPACT), SPACED, '{"name":"Bo","ok":false}']}
    k = replay_cost_ratio(vocab, [ENTRY], outputs, LLGUIDANCE_SEPARATORS, XGRAMMAR_SEPARATORS, repeats=3)
    assert k is not None and 0.2 < k < 5.0
    assert replay_cost_ratio(vocab, [ENTRY], {"plain": ["not json"]}, LLGUIDANCE_SEPARATORS,
                             XGRAMMAR_SEPARATORS) is None
    assert json.loads(COMPACT) == json.loads(SPACED)


def test_a_users_schema_is_traced_in_the_profiles_own_convention(vocab):
    """predict --schema on a profile: guidance traces added to it replay the convention its in-engine factors
    were fitted against (the embedded profile's: xgrammar's separators), not the engines' compact one."""
    from maskcost.calibrate.local import add_local_schemas
    from maskcost.profile import default_profile_path
    p = load_profile(default_profile_path())
    assert p.backends["guidance"].traced_separators == XGRAMMAR_SEPARATORS
    entry = SchemaEntry("mine", "user", PLAIN, ({"name": "Al", "ok": True},))
    got, keep, how = add_local_schemas(p, [entry], ["guidance"])
    assert keep == ["mine"] and not how[0].error
    mine = [t for t in got.backends["guidance"].traces if t.schema_id == "mine"]
    assert len(mine[0].fill_us) == len(vocab.encode(SPACED)) + 1 != len(vocab.encode(COMPACT)) + 1
