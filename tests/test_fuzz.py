"""Fuzzing the boundaries strangers can reach: URL query strings, JSON configs, uploaded bytes.

Each boundary has one contract: `config_from_query` never raises (it returns a Config and
warnings); `Config.from_dict` / `Config.from_json` return a Config or raise ConfigError;
`parse_upload` returns a ParsedUpload or raises UploadError. Anything else is a bug.

The suite runs a fixed (derandomized) 250 examples per test so CI is repeatable; for a longer,
random hunt: `EAE_FUZZ_EXAMPLES=5000 .venv/bin/python -m pytest tests/test_fuzz.py`.
"""

from __future__ import annotations

import io
import json
import os
import zipfile

import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dynamics.config import Config, ConfigError, config_from_query, from_query
from dynamics.limits import Limits
from dynamics.uploads import ParsedUpload, UploadError, parse_upload

_EXAMPLES = int(os.environ.get("EAE_FUZZ_EXAMPLES", "250"))
FUZZ = settings(max_examples=_EXAMPLES, deadline=None, derandomize=_EXAMPLES <= 300,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SMALL = Limits(max_points=200, max_dim=16, max_upload_mb=0.05)

# Keys that reach real fields (so values get parsed and validated), plus odd ones.
REAL_KEYS = [
    "seed", "model.width", "model.gamma", "model.c", "model.train_output", "loss.kind",
    "loss.reduction", "init.scheme", "init.scale", "init.normalisation", "init.output_value",
    "integrator.method", "integrator.t_end", "integrator.lr", "integrator.rtol",
    "integrator.atol", "integrator.max_steps", "record.frames", "record.spacing",
    "record.t_first", "record.scalars", "record.plane", "data.kind", "data.angles_deg",
    "data.radii", "data.labels", "data.bias", "data.n_per", "data.noise", "data.d", "data.n",
    "data.scheme", "data.rho", "data.X", "data.y", "data.x", "data.classes", "data.angle_deg",
    "data.p", "data.n_per_class",
]
ODD_KEYS = ["", ".", "..", "model.", ".seed", "model..width", "data[0]", "data.X[0][1]",
            "a.b.c.d.e", "__class__", "model.width.x", "seed.value", "data.kind.x", "ü.ß",
            "x" * 300, "model.__dict__", "constructor", "loss", "data", "integrator"]
ODD_VALUES = ["", " ", "nan", "NaN", "-nan", "inf", "-inf", "Infinity", "1e999", "-1e999",
              "1e-400", "0", "-0", "-1", "4294967296", "18446744073709551616", "9" * 5000,
              "1" * 100_000, "true", "True", "none", "null", "[", "[]", "[[1,2],[3]]",
              "[[1e999]]", "1,2,,3", ",", "1,nan", "0x10", "1_000", "１２", "½", "\x00",
              "\u202e", "😀", "{\"a\": 1}", "gf", "gd", "logistic", "array", "digits",
              "teacher", "three_point", "clusters", "two_signals", "points"]

key_st = st.one_of(st.sampled_from(REAL_KEYS), st.sampled_from(ODD_KEYS),
                   st.text(max_size=40), st.text(alphabet="abcdefghijklmnopqrstuvwxyz.[]_0",
                                                 max_size=30))
number_text = st.one_of(st.integers().map(str), st.floats(allow_nan=True,
                                                          allow_infinity=True).map(repr))
value_st = st.one_of(st.sampled_from(ODD_VALUES), number_text, st.text(max_size=60),
                     st.lists(number_text, max_size=8).map(",".join))
query_value = st.one_of(value_st, st.lists(value_st, max_size=4))  # repeated keys -> list


@FUZZ
@given(st.dictionaries(key_st, query_value, max_size=12))
@example({"model.width": "1e999", "seed": "nan", "data.angles_deg": "1,2,inf"})
@example({"data.kind": "array", "data.X": "[[1,2],[3]]", "data.y": "1"})
@example({"data.kind": ["teacher", "digits"], "data.d": "100000000"})
@example({"integrator.method": "gd", "integrator.lr": "1e-300", "integrator.t_end": "1e300"})
@example({"data.kind": "", "record.t_first": "1e999"})
@example({"model": "1", "data": "x", "data.y": []})
def test_config_from_query_never_raises(params: dict) -> None:
    cfg, warnings = config_from_query(params)
    assert isinstance(cfg, Config)
    assert isinstance(warnings, list) and all(isinstance(w, str) for w in warnings)
    # the lenient result is itself a valid, shareable link
    assert from_query(cfg.to_query()) == cfg


json_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20),
    st.sampled_from(["square", "logistic", "gd", "gf", "array", "points", "teacher", "digits",
                     "balanced", "fixed_output", "log", "linear"]),
)
json_like = st.recursive(
    json_leaf,
    lambda kids: st.one_of(
        st.lists(kids, max_size=5),
        st.dictionaries(st.one_of(st.sampled_from(["kind", "width", "X", "y", "scale", "t_end",
                                                   "lr", "angles_deg", "labels", "seed"]),
                                  st.text(max_size=10)), kids, max_size=5),
    ),
    max_leaves=30,
)
section_keys = st.sampled_from(["data", "model", "loss", "init", "integrator", "record", "seed"])
config_like = st.dictionaries(section_keys, json_like, max_size=7)


@FUZZ
@given(st.one_of(config_like, st.dictionaries(st.text(max_size=10), json_like, max_size=5)))
@example({"data": {"kind": "array", "X": [[1e308, 1e308]] * 3, "y": [1, 1, 1]}})
@example({"data": {"kind": "array", "X": [], "y": []}})
@example({"data": {"kind": "array", "X": [[]], "y": [1]}})
@example({"data": {"kind": "teacher", "d": 2**70}})
@example({"seed": 2**64, "model": {"width": -1}})
@example({"integrator": {"method": "gd", "lr": 1e-300, "t_end": 1e300}})
@example({"record": {"t_first": float("inf")}})
def test_from_dict_returns_config_or_config_error(d: dict) -> None:
    try:
        cfg = Config.from_dict(d)
    except ConfigError as e:
        assert e.errors and all(isinstance(p, str) and isinstance(m, str) for p, m in e.errors)
        return
    assert isinstance(cfg, Config)
    assert Config.from_json(cfg.to_json()) == cfg


@FUZZ
@given(st.one_of(
    st.text(max_size=300),
    st.binary(max_size=300),
    config_like.map(lambda d: json.dumps(d, allow_nan=True)),
    st.sampled_from(["", "null", "[]", "1", '"x"', "{", '{"seed": 1e999}', '{"seed": NaN}',
                     '{"data": {"kind": "array"}}', "\ufeff{}", '{"model": {"width": 1e400}}',
                     "[" * 5000 + "]" * 5000, '{"a":' * 3000 + "1" + "}" * 3000]),
))
def test_from_json_returns_config_or_config_error(text: str | bytes) -> None:
    try:
        cfg = Config.from_json(text)
    except ConfigError:
        return
    assert isinstance(cfg, Config)


def _zip_of(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, blob in members.items():
            zf.writestr(name, blob)
    return buf.getvalue()


def _npy(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=True)
    return buf.getvalue()


csv_cell = st.one_of(st.sampled_from(["1", "-1", "0", "0.5", "1e400", "nan", "", "x", "y",
                                      "label", "1,5", " 2 ", '"3"', "inf", "1_0"]),
                     number_text, st.text(max_size=6))
csv_text = st.lists(st.lists(csv_cell, min_size=0, max_size=5), max_size=8).flatmap(
    lambda rows: st.sampled_from([",", ";", "\t"]).map(
        lambda sep: "\n".join(sep.join(r) for r in rows)))
npz_like = st.one_of(
    st.dictionaries(st.sampled_from(["X.npy", "y.npy", "a.npy", "X", "xl/x.xml"]),
                    st.binary(max_size=80), max_size=3),
    st.fixed_dictionaries({
        "X.npy": st.sampled_from([np.ones((3, 2)), np.ones(3), np.array([[None]], dtype=object),
                                  np.array([["a"]]), np.zeros((0, 2)), np.ones((2, 2)) * 1j,
                                  np.array([[np.nan, 1]])]).map(_npy),
        "y.npy": st.sampled_from([np.ones(3), -np.ones(2), np.ones((3, 1)), np.ones((3, 3)),
                                  np.array([1, 0, 1])]).map(_npy),
    }).flatmap(lambda m: st.integers(0, 200).map(
        lambda cut: {k: (v[:-cut] if cut and k == "X.npy" else v) for k, v in m.items()})),
).map(_zip_of)


@FUZZ
@given(
    st.sampled_from(["d.csv", "d.npz", "d.txt", "d.xlsx", "", "d.npy"]),
    st.one_of(st.binary(max_size=400), csv_text.map(str.encode), npz_like,
              csv_text.map(lambda t: t.encode("utf-16")), csv_text.map(lambda t: b"\xef\xbb\xbf"
                                                                       + t.encode())),
    st.sampled_from(["square", "logistic", "exponential"]),
    st.booleans(),
)
def test_parse_upload_returns_or_raises_upload_error(name: str, data: bytes, loss: str,
                                                     map_01: bool) -> None:
    try:
        up = parse_upload(name, data, loss=loss, limits=SMALL, map_01=map_01)
    except UploadError as e:
        assert e.messages and all(isinstance(m, str) and m.strip() for m in e.messages)
        return
    assert isinstance(up, ParsedUpload)
    n, d = up.X.shape
    assert 1 <= n <= SMALL.max_points and 1 <= d <= SMALL.max_dim and up.y.shape == (n,)
    assert np.isfinite(up.X).all() and np.isfinite(up.y).all()
    if loss != "square":
        assert set(up.y.tolist()) == {-1.0, 1.0}
    # a valid upload always makes a valid config for that loss
    Config(data=up.data, loss={"kind": loss})
