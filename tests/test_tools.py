"""Tool calling (issue 24 item 3): the grammar each engine builds for `tools` + `tool_choice`, traced
like any schema, sent as the OpenAI API sends it, and what a larger tool set costs."""
import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from maskcost.calibrate.backends import make_backend
from maskcost.calibrate.fill import trace_schema
from maskcost.calibrate.schemas import SchemaInputError
from maskcost.calibrate.tokenizer import load_vocab
from maskcost.calibrate.tools import load_tools_file, tool_entry, tool_grammar
from maskcost.model.config import EngineConfig, Workload
from maskcost.model.costs import Costs
from maskcost.model.engine import Simulation
from maskcost.model.metrics import summarize
from maskcost.validate.checks import check_output
from maskcost.validate.client import RequestSpec, request_body, tool_call_text
from synth import constant_profile

DATA = Path(__file__).parent / "data" / "tools"
SMALL, TWELVE = DATA / "small.json", DATA / "twelve.json"
WEATHER = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 24},
                                            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
           "required": ["city", "unit"], "additionalProperties": False}


def _tool(name, params=None):
    fn = {"name": name} if params is None else {"name": name, "parameters": params}
    return {"type": "function", "function": fn}


def test_required_is_an_array_of_calls_of_any_tool_as_vllm_builds_it():
    # vllm/tool_parsers/utils.py 313-377, by hand
    g = tool_grammar([_tool("get_weather", WEATHER), _tool("ping")], "required", "vllm")
    assert g == {"type": "array", "minItems": 1, "items": {"type": "object", "anyOf": [
        {"properties": {"name": {"type": "string", "enum": ["get_weather"]}, "parameters": WEATHER},
         "required": ["name", "parameters"]},
        {"properties": {"name": {"type": "string", "enum": ["ping"]},
                        "parameters": {"type": "object", "properties": {}}},
         "required": ["name", "parameters"]}]}}
    jsonschema.validate([{"name": "ping", "parameters": {}},
                         {"name": "get_weather", "parameters": {"city": "Oslo", "unit": "celsius"}}], g)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate([], g)  # at least one call
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate([{"name": "get_weather", "parameters": {"city": "Oslo"}}], g)


def test_a_named_function_differs_between_the_engines():
    tools = [_tool("get_weather", WEATHER), _tool("ping")]
    assert tool_grammar(tools, "get_weather", "vllm") == WEATHER  # utils.py 403-413: the parameters alone
    s = tool_grammar(tools, "get_weather", "sglang")  # function_call/utils.py 448-461: an array of that one tool
    assert s["type"] == "array" and s["minItems"] == 1
    assert s["items"]["properties"]["name"]["enum"] == ["get_weather"]
    assert tool_grammar(tools, "get_weather", "sglang", parallel_tool_calls=False)["maxItems"] == 1


def test_defs_move_to_the_top_in_vllm_and_are_copied_in_sglang():
    params = {"type": "object", "properties": {"p": {"$ref": "#/$defs/P"}}, "$defs": {"P": {"type": "integer"}}}
    tools = [_tool("f", params)]
    v = tool_grammar(tools, "required", "vllm")
    s = tool_grammar(tools, "required", "sglang")
    assert v["$defs"] == s["$defs"] == {"P": {"type": "integer"}}
    assert "$defs" not in v["items"]["anyOf"][0]["properties"]["parameters"]
    assert "$defs" in s["items"]["anyOf"][0]["properties"]["parameters"]
    assert "$defs" in tools[0]["function"]["parameters"]  # the caller's tools are not changed
    jsonschema.validate([{"name": "f", "parameters": {"p": 3}}], v)
    clash = [_tool("f", params), _tool("g", {**params, "$defs": {"P": {"type": "string"}}})]
    with pytest.raises(SchemaInputError, match="differently"):
        tool_grammar(clash, "required", "vllm")


def test_tool_choices_without_a_json_grammar_and_bad_tools_are_one_line_errors(tmp_path):
    tools = [_tool("f")]
    with pytest.raises(SchemaInputError, match="auto: neither engine builds a grammar"):
        tool_grammar(tools, "auto")
    with pytest.raises(SchemaInputError, match="no tool of that name"):
        tool_grammar(tools, "g")
    with pytest.raises(ValueError, match="modelled for vllm, sglang"):
        tool_grammar(tools, "required", "llamacpp")
    cases = {"[]": "non-empty list", '[{"type": "function"}]': "tool 0 is not",
             '[{"function": {"parameters": {}}}]': "no function name",
             '[{"function": {"name": "a"}}, {"function": {"name": "a"}}]': "two tools are named 'a'",
             '[{"function": {"name": "a", "parameters": {"type": "nosuchtype"}}}]': "tool 'a' parameters: invalid",
             "{": "not JSON"}
    for text, msg in cases.items():
        f = tmp_path / "t.json"
        f.write_text(text)
        with pytest.raises(SchemaInputError, match=msg):
            load_tools_file(f)
    assert len(load_tools_file(SMALL)) == 2


def test_a_distinct_tool_set_is_a_distinct_grammar():
    a, a2 = tool_entry(SMALL, "required"), tool_entry(SMALL, "required")
    b, n = tool_entry(TWELVE, "required"), tool_entry(SMALL, "get_time")
    assert a.schema_id == a2.schema_id and a.schema == a2.schema
    assert len({a.schema_id, b.schema_id, n.schema_id}) == 3
    assert a.tool_request["tool_choice"] == "required"
    assert n.tool_request["tool_choice"] == {"type": "function", "function": {"name": "get_time"}}


def test_the_request_sends_tools_and_the_check_reads_the_streamed_calls():
    e = tool_entry(SMALL, "required")
    spec = RequestSpec(e.schema_id, e.schema, 64, tool_request=e.tool_request)
    body = request_body("m", spec, e.schema)
    assert "response_format" not in body and body["tool_choice"] == "required" and len(body["tools"]) == 2
    text = tool_call_text(spec, {0: ["get_time", '{"city": "Oslo"}'], 1: ["get_weather", '{"city": "Rome", '
                                                                        '"unit": "celsius"}']})
    assert check_output(text, e.schema, "tool_calls") == "valid"
    assert check_output(tool_call_text(spec, {0: ["get_time", '{"town": "Oslo"}']}), e.schema, "tool_calls") \
        .startswith("schema_violation")
    n = tool_entry(SMALL, "get_time")
    nspec = RequestSpec(n.schema_id, n.schema, 64, tool_request=n.tool_request)
    assert check_output(tool_call_text(nspec, {0: ["get_time", '{"city": "Oslo"}']}), n.schema, "stop") == "valid"


@pytest.mark.parametrize("backend", ["xgrammar", "guidance"])
def test_the_tool_grammar_calibrates_and_its_sampled_outputs_are_calls(backend):
    vocab = load_vocab("llama3")
    be = make_backend(backend, vocab)
    e = tool_entry(SMALL, "required")
    r = trace_schema(be, e, repeats=1, max_traces=2, sampled=2, seed=1)
    assert r.error is None and len(r.traces) == 2 and "sampled under the mask" in r.source
    ended = [toks for toks in r.tokens if toks[-1] == vocab.eos_id]
    # a uniform pick under llguidance's compact grammar rarely closes the array of calls (after "}" far more
    # tokens continue it, ',{"' and the like, than end it): such a stream is cut at the sampler's cap
    assert len(ended) == 2 if backend == "xgrammar" else all(len(t) == 256 for t in r.tokens if t not in ended)
    for toks in ended:
        calls = json.loads(b"".join(vocab.tokens[t] for t in toks if t != vocab.eos_id).decode())
        jsonschema.validate(calls, e.schema)
        assert {c["name"] for c in calls} <= {"get_weather", "get_time"}


def test_a_larger_tool_set_raises_compile_and_ttft_not_the_fill_per_row():
    """xgrammar compiles the twelve-tool set cold much slower than the two-tool set (both measured here);
    in the model that compile lands in TTFT while the per-row fill, the same constant, leaves ITL alone."""
    be = make_backend("xgrammar", load_vocab("llama3"))
    small = min(be.compile(tool_entry(SMALL, "required").schema, False)[1] for _ in range(2))
    big = min(be.compile(tool_entry(TWELVE, "required").schema, False)[1] for _ in range(2))
    assert big > 3 * small
    runs = {}
    for name, ms in (("small", small), ("big", big)):
        p = constant_profile(fill_us=50.0, forward_ms=5.0, compile_ms=ms)
        wl = Workload(concurrency=1, requests=30, unique_schemas=True, prompt_tokens=1)
        runs[name] = summarize(Simulation(Costs(p, "xgrammar"), EngineConfig(backend="xgrammar"), wl).run())
    # c1, every request compiles its grammar first: TTFT grows by the compile difference
    assert runs["big"]["ttft_ms_p50"] - runs["small"]["ttft_ms_p50"] == pytest.approx(big - small, rel=0.05)
    assert runs["big"]["itl_ms_mean"] == pytest.approx(runs["small"]["itl_ms_mean"], rel=1e-6)


def test_predict_with_tools_names_the_grammar_and_refuses_a_bad_choice():
    def mc(*args):
        return subprocess.run([sys.executable, "-m", "maskcost.cli", *args], capture_output=True, text=True)
    r = mc("predict", "--tools", str(SMALL), "--concurrency", "8", "--no-band", "--requests", "60")
    assert r.returncode == 0, r.stderr
    assert "schema tools-small-required-" in r.stdout
    bad = mc("predict", "--tools", str(SMALL), "--tool-choice", "nosuch", "--concurrency", "8")
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert "--tool-choice nosuch: no tool of that name" in bad.stderr
    auto = mc("predict", "--tools", str(SMALL), "--tool-choice", "auto", "--concurrency", "8")
    assert auto.returncode != 0 and "Traceback" not in auto.stderr and "auto" in auto.stderr


def test_validate_sends_the_tools_and_checks_the_streamed_calls(tmp_path):
    """validate --tools against a server that streams tool calls the way vLLM does (`delta.tool_calls`):
    every request carries tools and tool_choice, and its calls are checked against the grammar."""
    from fake_server import FakeEngine, FakeServer
    from maskcost.cli import main
    with FakeServer(FakeEngine('{"city": "Oslo"}')) as srv:
        from maskcost.calibrate.local import add_local_schemas
        from maskcost.profile import default_profile_path, load_profile, save_profile
        prof, _, _ = add_local_schemas(load_profile(default_profile_path()), [tool_entry(SMALL, "get_time")],
                                       ["xgrammar"])
        save_profile(prof, tmp_path / "p.json.gz")
        rc = main(["validate", "--profile", str(tmp_path / "p.json.gz"), "--base-url", srv.url,
                   "--tools", str(SMALL), "--tool-choice", "get_time", "--out", str(tmp_path / "v"),
                   "--concurrency", "2", "--repeats", "1", "--rounds", "1", "--min-requests", "4", "--off-tokens", "10"])
        assert rc == 0
        assert all('"tools"' in p or "Call the tools" in p or "Write a short" in p for p in srv.engine.prompts)
    raw = [json.loads(x) for x in (tmp_path / "v" / "sweep.raw.jsonl").read_text().splitlines()]
    on = [r for r in raw if r.get("schema_id")]
    assert on and all(r["check"] == "valid" for r in on), {r["check"] for r in on}
    assert all(r["ttft_ms"] is not None and len(r["chunk_ms"]) > 1 for r in on)


def test_the_same_schema_under_another_name_reads_the_cache_under_its_own_id():
    """The trace cache is keyed by content: a second file with the same schema (here the same tool set
    under two file names) reads the first's measurement, labelled with its own id."""
    from maskcost.calibrate.local import add_local_schemas
    from maskcost.calibrate.schemas import SchemaEntry
    from maskcost.profile import default_profile_path, load_profile
    base = load_profile(default_profile_path())
    schema = {"type": "object", "properties": {"k": {"type": "boolean"}}, "required": ["k"],
              "additionalProperties": False}
    for sid in ("first-name", "second-name"):
        p, ids, how = add_local_schemas(base, [SchemaEntry(sid, "user", schema, ())], ["xgrammar"])
        assert ids == [sid] and sid in p.schema_ids("xgrammar")
        assert {c.schema_id for c in p.backends["xgrammar"].compiles} >= {sid}
    assert how[0].cached
