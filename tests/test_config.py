"""Config: validation messages, canonical JSON, cache key, URL round trips (property-based)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dynamics.config import (
    DATA_KINDS,
    Config,
    ConfigError,
    config_from_query,
    from_query,
    to_query,
)

# ----------------------------------------------------------------------------- strategies
fin = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
pos = st.floats(min_value=1e-6, max_value=1e3, allow_nan=False, allow_infinity=False)
pm1 = st.sampled_from([1.0, -1.0])


@st.composite
def data_sections(draw):
    kind = draw(st.sampled_from(DATA_KINDS))
    bias = draw(st.booleans())
    if kind == "points":
        k = draw(st.integers(1, 6))
        labels = draw(st.one_of(st.lists(pm1, min_size=k, max_size=k),
                                st.lists(fin, min_size=k, max_size=k)))
        return {"kind": kind, "bias": bias,
                "angles_deg": draw(st.lists(fin, min_size=k, max_size=k)),
                "radii": draw(st.lists(pos, min_size=k, max_size=k)), "labels": labels}
    if kind == "clusters":
        k = draw(st.integers(1, 4))
        return {"kind": kind, "bias": bias,
                "angles_deg": draw(st.lists(fin, min_size=k, max_size=k)),
                "labels": draw(st.lists(pm1, min_size=k, max_size=k)),
                "radius": draw(pos), "n_per": draw(st.integers(1, 20)),
                "noise": draw(st.floats(0, 2))}
    if kind == "two_signals":
        return {"kind": kind, "bias": bias,
                "angle_deg": draw(st.floats(0.01, 179.9)), "p": draw(pos),
                "norm_plus": draw(pos), "norm_minus": draw(pos),
                "n_per": draw(st.integers(1, 5)), "noise": draw(st.floats(0, 1))}
    if kind == "teacher":
        return {"kind": kind, "bias": bias, "d": draw(st.integers(2, 64)),
                "n": draw(st.one_of(st.none(), st.integers(1, 64))),
                "scheme": draw(st.sampled_from(["centred", "uncentred"])),
                "rho": draw(st.one_of(st.none(), pos))}
    if kind == "three_point":
        k = draw(st.integers(1, 5))
        return {"kind": kind, "bias": bias, "x": draw(st.lists(fin, min_size=k, max_size=k)),
                "y": draw(st.lists(fin, min_size=k, max_size=k))}
    if kind == "digits":
        a, b = draw(st.lists(st.integers(0, 9), min_size=2, max_size=2, unique=True))
        return {"kind": kind, "bias": bias, "classes": [a, b],
                "n_per_class": draw(st.one_of(st.none(), st.integers(1, 100))),
                "centre": draw(st.booleans())}
    if kind == "vectors":
        n, d = draw(st.integers(1, 5)), draw(st.integers(1, 6))
        return {"kind": kind, "bias": bias,
                "points": draw(st.lists(st.lists(fin, min_size=d, max_size=d), min_size=n,
                                        max_size=n)),
                "labels": draw(st.lists(pm1, min_size=n, max_size=n))}
    if kind == "function":
        lo = draw(st.floats(-10, 10))
        return {"kind": kind, "bias": bias, "n": draw(st.integers(1, 50)),
                "formula": draw(st.sampled_from(["x", "relu(x) - 0.5*relu(-x)",
                                                 "sin(3*x) + 0.5*sin(6*x)", "x**2", "2"])),
                "x_min": lo, "x_max": lo + draw(st.floats(0.01, 10)),
                "spacing": draw(st.sampled_from(["even", "uniform"]))}
    if kind == "generated":
        gen = draw(st.sampled_from(["symmetric_separable", "orthogonal", "skew_xor",
                                    "relu_teacher", "linear_teacher"]))
        d = draw(st.integers(1, 8))
        n = 2 * draw(st.integers(1, 6)) if gen == "symmetric_separable" else \
            4 * draw(st.integers(1, 6)) if gen == "skew_xor" else \
            draw(st.integers(2, max(d, 2)))
        return {"kind": kind, "bias": bias, "generator": gen, "n": n, "d": max(
                    d, n if gen == "orthogonal" else 2 if gen == "skew_xor" else 1),
                "margin": draw(st.floats(0, 2)),
                "labels": draw(st.sampled_from(["sign", "real", "dana"])),
                "angle_deg": draw(st.floats(0.01, 179.9)),
                "noise": draw(st.floats(0, 2)),
                "teacher_width": draw(st.integers(1, 20))}
    n, d = draw(st.integers(1, 5)), draw(st.integers(1, 4))
    return {"kind": kind, "bias": bias,
            "X": draw(st.lists(st.lists(fin, min_size=d, max_size=d), min_size=n, max_size=n)),
            "y": draw(st.lists(pm1, min_size=n, max_size=n))}


@st.composite
def configs(draw) -> Config:
    data = draw(data_sections())
    scheme = draw(st.sampled_from(["balanced", "gaussian", "dominated", "fixed_output",
                                   "exp_margin", "tau_delta"]))
    loss = draw(st.sampled_from(["square", "logistic", "exponential"]))
    method = draw(st.sampled_from(["gd", "gf"]))
    t_end = draw(st.floats(0.01, 1e3))
    d = {
        "data": data,
        "model": {"width": 2 * draw(st.integers(1, 250)), "gamma": draw(st.floats(0, 1)),
                  "c": draw(pos), "train_output": scheme != "fixed_output" and draw(st.booleans()),
                  "output_power": draw(st.floats(0, 3))},
        "loss": {"kind": loss, "reduction": draw(st.sampled_from(["mean", "sum"]))},
        "init": {"scheme": scheme, "scale": draw(st.floats(1e-12, 10)),
                 "normalisation": draw(st.sampled_from(["none", "sqrt_m", "sqrt_dm"])),
                 "output_value": draw(pos), "output_norm": draw(st.sampled_from(
                     ["none", "sqrt_m", "m"])), "imbalance": draw(st.floats(-10, 10)),
                 "a_power": draw(st.floats(-2, 4)), "w_power": draw(st.floats(-2, 4)),
                 "mirror": draw(st.booleans())},
        "integrator": {"method": method, "t_end": t_end,
                       "lr": max(draw(st.floats(1e-3, 1.0)), t_end / 1e6),
                       "rtol": draw(st.floats(1e-10, 1e-2)),
                       "atol": draw(st.one_of(st.none(), st.floats(1e-15, 1e-3))),
                       "lr_w": draw(st.floats(0.01, 100)), "lr_a": draw(st.floats(0.01, 100)),
                       "max_steps": 2_000_000},
        "record": {"frames": draw(st.integers(2, 300)),
                   "spacing": draw(st.sampled_from(["log", "linear"])),
                   "t_first": draw(st.one_of(st.none(), st.floats(1e-6, 1e-3).map(
                       lambda f: f * t_end))),
                   "scalars": draw(st.integers(10, 2000)),
                   "plane": draw(st.sampled_from(["auto", "pca", "axes"]))},
        "seed": draw(st.integers(0, 2**32 - 1)),
    }
    try:
        return Config.from_dict(d)
    except ConfigError:
        # labels that are not ±1 forbid logistic/exponential: fall back to the square loss;
        # a long gd run on large data can exceed EAE_MAX_COMPUTE (2e12): at most 1e4 steps
        # of n·d·m ≤ 2e6 keeps it well inside
        d["loss"]["kind"] = "square"
        d["integrator"]["lr"] = max(d["integrator"]["lr"], t_end / 1e4)
        return Config.from_dict(d)


# ----------------------------------------------------------------------------- round trips
@settings(max_examples=150, deadline=None, derandomize=True)
@given(configs())
def test_json_round_trip_is_exact(c: Config) -> None:
    again = Config.from_json(c.to_json())
    assert again == c
    assert again.to_json() == c.to_json()
    assert again.cache_key() == c.cache_key()
    assert Config.from_dict(json.loads(c.to_json())) == c


@settings(max_examples=150, deadline=None, derandomize=True)
@given(configs())
def test_url_round_trip_is_exact(c: Config) -> None:
    q = to_query(c)
    assert all(isinstance(v, str) for v in q.values())
    assert from_query(q) == c
    lenient, warnings = config_from_query(q)
    assert lenient == c and warnings == []


def test_default_url_is_empty_and_keys_are_short() -> None:
    assert to_query(Config()) == {}
    c = Config().with_updates({"model.width": 7, "model.gamma": 0.25})
    assert to_query(c) == {"model.gamma": "0.25", "model.width": "7"}


def test_cache_key_changes_with_any_field_and_is_stable() -> None:
    base = Config()
    assert base.cache_key() == Config().cache_key()
    keys = {base.cache_key()}
    for upd in ({"seed": 1}, {"model.width": 51}, {"init.scale": 2e-3},
                {"loss.reduction": "sum"}, {"data.angles_deg": [15, 75, 195, 256]}):
        keys.add(base.with_updates(upd).cache_key())
    assert len(keys) == 6


def test_canonical_json_is_sorted_and_compact() -> None:
    text = Config().to_json()
    assert " " not in text.replace("early alignment", "")
    d = json.loads(text)
    assert list(d) == sorted(d)


# ----------------------------------------------------------------------------- rejection
BAD = [
    ({"model": {"width": -3}}, "model.width"),
    ({"model": {"width": 0}}, "model.width"),
    ({"model": {"width": 2.5}}, "model.width"),
    ({"model": {"width": "ten"}}, "model.width"),
    ({"model": {"width": True}}, "model.width"),
    ({"model": {"width": 10**9}}, "model.width"),
    ({"model": {"gamma": 1.5}}, "model.gamma"),
    ({"model": {"gamma": -0.1}}, "model.gamma"),
    ({"model": {"gamma": float("nan")}}, "model.gamma"),
    ({"model": {"c": float("inf")}}, "model.c"),
    ({"model": {"train_output": "yes"}}, "model.train_output"),
    ({"loss": {"kind": "hinge"}}, "loss.kind"),
    ({"loss": {"reduction": "median"}}, "loss.reduction"),
    ({"init": {"scale": 0}}, "init.scale"),
    ({"init": {"scale": float("-inf")}}, "init.scale"),
    ({"init": {"scheme": "orthogonal"}}, "init.scheme"),
    ({"init": {"normalisation": "sqrt_n"}}, "init.normalisation"),
    ({"integrator": {"method": "adam"}}, "integrator.method"),
    ({"integrator": {"t_end": -1}}, "integrator.t_end"),
    ({"integrator": {"lr": float("nan")}}, "integrator.lr"),
    ({"integrator": {"rtol": 0.5}}, "integrator.rtol"),
    ({"integrator": {"method": "gd", "lr": 1e-9, "t_end": 100}}, "integrator.t_end"),
    ({"record": {"frames": 1}}, "record.frames"),
    ({"record": {"frames": 10**6}}, "record.frames"),
    ({"record": {"spacing": "cubic"}}, "record.spacing"),
    ({"record": {"t_first": 100.0}}, "record.t_first"),
    ({"seed": -1}, "seed"),
    ({"seed": 2**40}, "seed"),
    ({"data": {"kind": "spiral"}}, "data.kind"),
    ({"data": {"kind": "points", "angles_deg": [1, 2], "radii": [1], "labels": [1, -1]}},
     "data.labels"),
    ({"data": {"kind": "points", "angles_deg": [float("nan")], "radii": [1], "labels": [1]}},
     "data.angles_deg[0]"),
    ({"data": {"kind": "points", "radii": [1, -1, 1, 1]}}, "data.radii[1]"),
    ({"data": {"kind": "teacher", "d": 10**6}}, "data.d"),
    ({"data": {"kind": "teacher", "d": 8, "n": 10**6}}, "data"),
    ({"data": {"kind": "digits", "classes": [3, 3]}}, "data.classes"),
    ({"data": {"kind": "digits", "classes": [3, 12]}}, "data.classes[1]"),
    ({"data": {"kind": "array", "X": [[1, 2], [3]], "y": [1, -1]}}, "data.X"),
    ({"data": {"kind": "array", "X": [[1, 2]], "y": [1, -1]}}, "data.y"),
    ({"data": {"kind": "three_point"}, "loss": {"kind": "logistic"}}, "loss.kind"),
    ({"init": {"scheme": "fixed_output"}}, "model.train_output"),
    ({"unknown": 1}, "unknown"),
    ({"model": {"depth": 3}}, "model.depth"),
]


@pytest.mark.parametrize(("bad", "path"), BAD)
def test_every_bad_field_is_named(bad: dict, path: str) -> None:
    with pytest.raises(ConfigError) as ei:
        Config.from_dict(bad)
    paths = [p for p, _ in ei.value.errors]
    assert path in paths, ei.value.errors
    for _, msg in ei.value.errors:
        assert len(msg) > 8 and "Traceback" not in msg


def test_all_errors_reported_at_once() -> None:
    with pytest.raises(ConfigError) as ei:
        Config.from_dict({"model": {"width": -1, "gamma": 3}, "loss": {"kind": "x"},
                          "seed": -5})
    paths = {p for p, _ in ei.value.errors}
    assert {"model.width", "model.gamma", "loss.kind", "seed"} <= paths


def test_for_field_selects_messages() -> None:
    with pytest.raises(ConfigError) as ei:
        Config.from_dict({"model": {"width": -1}})
    assert ei.value.for_field("model.width")
    assert ei.value.for_field("model")
    assert not ei.value.for_field("loss")


def test_not_json_like_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        Config.from_dict({"model": {"width": object()}})
    with pytest.raises(ConfigError):
        Config.from_json("{not json")
    with pytest.raises(ConfigError):
        Config.from_json(b"\xff\xfe\x00garbage")


def test_malformed_url_falls_back_with_warnings() -> None:
    c, warnings = config_from_query({"model.width": "abc", "model.gamma": "0.3",
                                     "nonsense.key": "1", "loss.kind": "hinge"})
    assert c.model.gamma == 0.3 and c.model.width == Config().model.width
    assert c.loss.kind == "square"
    assert len(warnings) == 3
    assert any("model.width" in w for w in warnings)


def test_url_lists_and_kinds() -> None:
    c = from_query({"data.kind": "points", "data.angles_deg": "0,90,180",
                    "data.radii": "1,2,3", "data.labels": "1,-1,1"})
    assert c.data.angles_deg == (0.0, 90.0, 180.0)
    c2 = from_query({"data.kind": "teacher", "data.d": "8", "data.n": "none"})
    assert c2.data.d == 8 and c2.data.n is None


def test_with_updates_switches_data_kind_cleanly() -> None:
    c = Config().with_updates({"data.kind": "three_point"})
    assert c.data.kind == "three_point" and c.data.bias is True
    c2 = c.with_updates({"data.kind": "digits", "data.classes": "3,8"})
    assert c2.data.classes == (3, 8)


def test_limits_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EAE_MAX_WIDTH", "100")
    Config.from_dict({"model": {"width": 100}})
    with pytest.raises(ConfigError) as ei:
        Config.from_dict({"model": {"width": 101}})
    assert "EAE_MAX_WIDTH" in str(ei.value)
