"""Size and compute limits: each one accepts a config exactly at the limit and rejects one just
above it, reading the limit from its environment variable at validation time; the message
names the limit and the variable."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import pytest

from dynamics.config import Config, ConfigError
from dynamics.limits import Limits, get_limits


def make(**sections: Any) -> Config:
    return Config.from_dict(sections)


def rejected(sections: dict[str, Any]) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        Config.from_dict(sections)
    return info.value


def points(n: int) -> dict[str, Any]:
    return {"kind": "points", "angles_deg": [float(10 * i) for i in range(n)],
            "radii": [1.0] * n, "labels": [1.0 if i % 2 else -1.0 for i in range(n)]}


def array(d: int) -> dict[str, Any]:
    return {"kind": "array", "X": [[float(i == j) for j in range(d)] for i in range(2)],
            "y": [1.0, -1.0]}


CASES: list[tuple[str, str, dict[str, Any], dict[str, Any], str, str]] = [
    # (env var, limit value, config at the limit, config just above, path of the error,
    #  how the message states the limit)
    ("EAE_MAX_WIDTH", "10", {"model": {"width": 10}}, {"model": {"width": 11}}, "model.width",
     "limit 10"),
    ("EAE_MAX_POINTS", "6", {"data": points(6)}, {"data": points(7)}, "data", "limit 6"),
    ("EAE_MAX_DIM", "3", {"data": array(3)}, {"data": array(4)}, "data", "limit 3"),
    ("EAE_MAX_DIM", "3", {"data": {**array(2), "bias": True}},
     {"data": {**array(3), "bias": True}}, "data", "limit 3"),
    ("EAE_MAX_DIM", "5", {"data": {"kind": "teacher", "d": 5}},
     {"data": {"kind": "teacher", "d": 6}}, "data.d", "limit 5"),
    ("EAE_MAX_FRAMES", "20", {"record": {"frames": 20}}, {"record": {"frames": 21}},
     "record.frames", "limit 20"),
    ("EAE_MAX_SCALARS", "50", {"record": {"scalars": 50}}, {"record": {"scalars": 51}},
     "record.scalars", "limit 50"),
    ("EAE_MAX_STEPS", "1000",
     {"integrator": {"method": "gd", "lr": 0.125, "t_end": 125.0}},
     {"integrator": {"method": "gd", "lr": 0.125, "t_end": 125.125}}, "integrator.t_end",
     "step limit 1e+03"),
    ("EAE_MAX_STEPS", "1000", {"integrator": {"method": "gf", "max_steps": 1000}},
     {"integrator": {"method": "gf", "max_steps": 1001}}, "integrator.max_steps",
     "limit 1000"),
    # gd work = steps × n × d × m = 1000 × 4 × 2 × 10 = 80 000 (default four 2D points)
    ("EAE_MAX_COMPUTE", "80000",
     {"model": {"width": 10}, "integrator": {"method": "gd", "lr": 0.125, "t_end": 125.0}},
     {"model": {"width": 10}, "integrator": {"method": "gd", "lr": 0.125, "t_end": 125.125}},
     "integrator", "compute limit 8e+04"),
]


@pytest.mark.parametrize(("env", "value", "at", "above", "path", "stated"), CASES,
                         ids=[f"{c[0]}-{c[4]}" for c in CASES])
def test_limit_accepts_at_and_rejects_just_above(monkeypatch: pytest.MonkeyPatch, env: str,
                                                 value: str, at: dict[str, Any],
                                                 above: dict[str, Any], path: str,
                                                 stated: str) -> None:
    # without the variable both configs are fine: the limit under test is what rejects
    monkeypatch.delenv(env, raising=False)
    Config.from_dict(above)
    monkeypatch.setenv(env, value)
    assert Config.from_dict(at) is not None
    err = rejected(above)
    msgs = [m for p, m in err.errors if p == path]
    assert msgs, f"no error at {path}: {err.errors}"
    assert any(env in m and stated in m for m in msgs), msgs


def test_limits_are_read_at_validation_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EAE_MAX_WIDTH", "5")
    with pytest.raises(ConfigError):
        make(model={"width": 6})
    monkeypatch.setenv("EAE_MAX_WIDTH", "6")
    assert make(model={"width": 6}).model.width == 6


def test_every_limit_has_an_env_var_and_bad_values_fall_back(
        monkeypatch: pytest.MonkeyPatch) -> None:
    default = Limits()
    for f in fields(Limits):
        assert default.env_name(f.name) == "EAE_" + f.name.upper()
        monkeypatch.setenv(default.env_name(f.name), "7")
    seven = get_limits()
    for f in fields(Limits):
        assert getattr(seven, f.name) == 7
        assert type(getattr(seven, f.name)) is type(getattr(default, f.name))
    for bad in ("-1", "nan", "lots", ""):
        monkeypatch.setenv("EAE_MAX_WIDTH", bad)
        assert get_limits().max_width == default.max_width


def test_errors_for_several_limits_come_together(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EAE_MAX_WIDTH", "10")
    monkeypatch.setenv("EAE_MAX_FRAMES", "20")
    err = rejected({"model": {"width": 11}, "record": {"frames": 21}})
    assert {p for p, _ in err.errors} >= {"model.width", "record.frames"}


def test_every_limit_is_described() -> None:
    from dynamics.limits import LIMIT_HELP

    assert set(LIMIT_HELP) == {f.name for f in fields(Limits)}
    assert all(LIMIT_HELP.values())
