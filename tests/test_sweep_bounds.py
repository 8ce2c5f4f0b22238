"""Every sweep spec is bounded by its size before it is expanded, wherever it enters: the
library (`Sweep.from_json` / `from_dict`), `eae sweep` and the Sweeps page's Compose box —
with a message, never a traceback. The cases from outside run in a child process capped in
address space and CPU time, so the unbounded code they guard against fails there
(MemoryError, SIGXCPU) instead of taking the machine: a 70-byte spec asking for 10⁹ widths
reached 8.8 GB, a million explicit values took 222 s, a deeply nested spec a RecursionError."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dynamics.sweeps import MAX_NESTING, Sweep, SweepError, json_nesting, size_errors

REPO = Path(__file__).resolve().parent.parent
CAP_BYTES = 2 * 2**30  # numpy, pydantic and the library fit; 10⁹ floats do not
CPU_S = 120  # of CPU time per child: the bounded answers take well under 10 s

SEVENTY_BYTES = '{"axes":[{"field":"model.width","linear":[1,100,1000000000]}]}'


def _capped(args: list[str], env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess[str]:
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (CAP_BYTES, CAP_BYTES))
        resource.setrlimit(resource.RLIMIT_CPU, (CPU_S, CPU_S))

    import os
    return subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=900,
                          preexec_fn=cap, env={**os.environ, **(env or {})})


def _cli(tmp_path: Path, text: str, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    spec = tmp_path / "spec.json"
    spec.write_text(text)
    return _capped([sys.executable, "-m", "dynamics", "sweep", str(spec), "--out",
                    str(tmp_path / "out.csv"), "--quiet"], env)


@pytest.mark.heavy
@pytest.mark.parametrize("name,text,words", [
    ("70 bytes", SEVENTY_BYTES, "axes[0].linear: asks for 1,000,000,000 values"),
    ("a million values", json.dumps({"axes": [{"field": "init.scale",
                                               "values": [1e-3] * 1_000_000}]}),
     "axes[0].values: asks for 1,000,000 values"),
    ("nested", '{"axes":' + "[" * 100_000 + "]" * 100_000 + "}", "nested more than"),
    ("many seeds", '{"seeds": 1000000000}', "seeds: 1,000,000,000 seeds"),
    ("a product", json.dumps({"axes": [{"field": "init.scale", "log": [1e-4, 1, 100]},
                                       {"field": "model.gamma", "linear": [0, 1, 100]}]}),
     "100 × 100 × 1 seeds = 10,000 points"),
])
def test_eae_sweep_refuses_an_oversized_spec_at_once(tmp_path: Path, name: str, text: str,
                                                     words: str) -> None:
    out = _cli(tmp_path, text)
    assert out.returncode == 2, (name, out.returncode, out.stderr[-2000:])
    assert "The sweep is not valid:" in out.stderr and words in out.stderr, out.stderr[-2000:]
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.heavy
def test_a_spec_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    text = json.dumps({"description": "x" * 1500, "axes": [], "name": "big" + " " * 2_000_000})
    out = _cli(tmp_path, text, {"EAE_MAX_SPEC_MB": "1"})
    assert out.returncode == 2 and "over the limit of 1 MB" in out.stderr, out.stderr[-2000:]
    assert "EAE_MAX_SPEC_MB" in out.stderr and "Traceback" not in out.stderr


_PROPERTY = textwrap.dedent(r'''
    import json, sys, tracemalloc
    from hypothesis import HealthCheck, given, settings, strategies as st
    from dynamics.sweeps import Sweep, SweepError

    counts = st.one_of(st.integers(-10, 10**12), st.floats(allow_nan=True, allow_infinity=True),
                       st.sampled_from([10**9, 10**15, 2**63, 5000, 5001, 0, -1, 1e18, True]),
                       st.text(max_size=5))
    scalar = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8))
    axis = st.fixed_dictionaries({"field": st.sampled_from(
        ["model.width", "init.scale", "model.gamma", "data.kind", "seed", "nope", ""])},
        optional={"values": st.one_of(st.lists(scalar, max_size=8),
                                      st.integers(0, 10**6).map(lambda n: [1e-3] * n),
                                      scalar),
                  "linear": st.tuples(st.floats(), st.floats(), counts).map(list),
                  "log": st.tuples(st.floats(), st.floats(), counts).map(list)})
    spec = st.fixed_dictionaries({}, optional={
        "axes": st.one_of(st.lists(axis, max_size=4), scalar),
        "seeds": st.one_of(counts, st.lists(st.integers(-5, 2**33), max_size=6)),
        "base": st.one_of(st.just({}), scalar, st.dictionaries(st.text(max_size=6), scalar,
                                                               max_size=3)),
        "name": st.text(max_size=100), "record": st.lists(st.text(max_size=10), max_size=3)})

    def nested(depth, kind):
        return "{\"axes\":" + kind[0] * depth + kind[1] * depth + "}"

    texts = st.one_of(spec.map(lambda d: json.dumps(d, allow_nan=True)),
                      st.builds(nested, st.integers(0, 200_000),
                                st.sampled_from(["[]", "{}"]).map(
                                    lambda k: ("[", "]") if k == "[]" else ("{\"a\":", "}"))),
                      st.text(max_size=200), st.binary(max_size=200))

    def judge(make):
        tracemalloc.start()
        try:
            got = make()
        except SweepError as e:
            assert e.errors and all(isinstance(p, str) and isinstance(m, str) and m
                                    for p, m in e.errors), e.errors
        else:
            assert isinstance(got, Sweep) and got.n_points() <= 5000
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < 400e6, peak  # a million values as JSON text: ~100 MB of objects

    @settings(max_examples=int(sys.argv[1]), deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(spec)
    def from_dict(d):
        judge(lambda: Sweep.from_dict(d))

    @settings(max_examples=int(sys.argv[1]), deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(texts)
    def from_json(t):
        judge(lambda: Sweep.from_json(t))

    from dynamics.config import Config, ConfigError, config_from_query
    from dynamics.cost import estimate_seconds, pre_run_seconds

    big = st.one_of(st.integers(-3, 10**12), st.sampled_from([20000, 20001, 1024, 1025, 5000,
                                                              2**63, 10**9]))
    config = st.fixed_dictionaries({}, optional={
        "data": st.fixed_dictionaries({"kind": st.sampled_from(
            ["teacher", "generated", "clusters", "two_signals", "digits", "nope"])},
            optional={"n": big, "d": big, "n_per": big, "n_per_class": big}),
        "model": st.fixed_dictionaries({}, optional={"width": big}),
        "integrator": st.fixed_dictionaries({}, optional={
            "method": st.sampled_from(["gd", "gf"]), "lr": st.floats(), "t_end": st.floats()}),
        "seed": big})

    def judge_config(make):
        tracemalloc.start()
        try:
            cfg = make()
        except ConfigError as e:
            assert e.errors and all(m for _, m in e.errors), e.errors
        else:  # what a page computes before its gate: from the size alone
            assert estimate_seconds(cfg) >= 0 and pre_run_seconds(cfg) >= 0
            cfg.to_query(omit=("data.X", "data.y"))
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < 50e6, peak

    @settings(max_examples=int(sys.argv[1]), deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(config)
    def configs(d):
        judge_config(lambda: Config.from_dict(d))
        flat = {f"{k}.{j}": str(v) for k, sub in d.items() if isinstance(sub, dict)
                for j, v in sub.items()}
        cfg, warnings = config_from_query(flat)
        assert isinstance(cfg, Config) and all(isinstance(w, str) for w in warnings)

    from_dict()
    from_json()
    configs()
    print("ok")
''')


@pytest.mark.heavy
@pytest.mark.parametrize("examples", [60, pytest.param(400, marks=pytest.mark.slow)])
def test_random_and_adversarial_specs_get_a_sweep_or_a_message(tmp_path: Path,
                                                               examples: int) -> None:
    """Hypothesis feeds specs with counts up to 10¹⁸, NaN and text counts, up to a million
    values, 200,000 levels of nesting, junk text and bytes to `Sweep.from_dict` and
    `Sweep.from_json`, and configs with sizes up to 10¹² to `Config.from_dict` and
    `config_from_query` (then, when valid, the estimates and the link a page computes before
    its gate), in a child capped at 2 GB and 120 s of CPU: each is a result or an error with
    messages, under 400 MB of Python objects for a spec and 50 MB for a config."""
    script = tmp_path / "prop.py"
    script.write_text(_PROPERTY)
    out = _capped([sys.executable, str(script), str(examples)])
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-3000:]


def test_the_size_rules_alone() -> None:
    assert size_errors(json.loads(SEVENTY_BYTES))[0][0] == "axes[0].linear"
    assert size_errors({"axes": [{"field": "x", "values": [1] * 5001}]})[0][0] == \
        "axes[0].values"
    assert size_errors({"axes": [{"field": "x", "values": [1] * 5000}]}) == []
    assert size_errors({"seeds": list(range(5001))})[0][0] == "seeds"
    assert size_errors({"axes": [{"field": "x", "linear": [0, 1, 3.0]}]}) == []  # 3.0: three
    deep: object = []
    for _ in range(MAX_NESTING + 5):
        deep = [deep]
    assert "nested" in size_errors({"axes": deep})[0][1]
    assert json_nesting('{"a": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}') == 1  # inside a string
    assert json_nesting('{"a": "\\"[[[", "b": [[1]]}') == 3
    with pytest.raises(SweepError):
        Sweep.from_json(SEVENTY_BYTES)
    ok = Sweep.from_dict({"axes": [{"field": "init.scale", "log": [1e-3, 1e-1, 5]}],
                          "seeds": 2})
    assert ok.n_points() == 10


def test_the_compose_box_refuses_a_pasted_list_by_its_size() -> None:
    """200,000 values pasted into the Compose box took 38.6 s to refuse (and the About page of
    another visitor waited 37.5 s); a deeply nested base configuration gave the generic error
    box. Both are now refused by their size, with a sentence, before anything is parsed."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(REPO / "app_pages" / "sweeps.py"), default_timeout=120)
    at.run()
    at.radio(key="sweeps.mode").set_value("Compose").run()
    at.radio(key="sweeps.naxes").set_value(1).run()
    at.text_input(key="sweeps.ax0.values").set_value(",".join(["0.001"] * 200_000)).run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert any("characters long; give at most 20,000" in e for e in errors), errors
    at.text_input(key="sweeps.ax0.values").set_value(",".join(["1"] * 6000)).run()
    assert any("This list has 6,000 values; a sweep has at most 5,000 points" in e.value
               for e in at.error), [e.value for e in at.error]
    at.text_input(key="sweeps.ax0.values").set_value("0.001, 0.01").run()
    area = next(t for t in at.text_area if t.key.startswith("sweeps.base."))
    area.set_value("[" * 50_000 + "]" * 50_000).run()
    assert not at.exception
    assert any("The base configuration is too large" in e.value for e in at.error), \
        [e.value for e in at.error]
    assert at.button(key="sweeps.run").disabled
