"""Data moved in the neuron panel: what the figure tells the browser (`viz.data_edit`), and the
edit route's work (`ui.edits`): the same validation as a link, the limits, one edit run per
session with the newest winning, and the figure of the edited run."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import runtime
from dynamics import theory
from dynamics.config import Config, ConfigError
from dynamics.data import build_dataset
from dynamics.limits import Limits
from dynamics.papers import boursier
from dynamics.service import Service
from dynamics.simulate import simulate
from dynamics.timescales import auto_time
from ui import edits, figures
from viz.main_figure import main_figure
from viz.options import FigureOptions


def _spec(cfg: Config) -> dict | None:
    return main_figure(simulate(cfg)).meta.get("edit")


def test_points_clusters_and_three_point_are_editable_with_their_fields() -> None:
    pts = _spec(Config())
    assert pts is not None and pts["kind"] == "points"
    assert set(pts["fields"]) == set(edits.FIELDS["points"])
    assert np.allclose(pts["handles"], pts["X"])  # each point is its own handle
    # b_i = −R s_i ∂ℓ(0, y_i)/∂ŷ is what the browser computes G from: the figure's extremal
    # directions come from the same data
    cl = _spec(Config.from_dict({"data": {"kind": "clusters", "angles_deg": [10, 200],
                                          "labels": [1, -1], "n_per": 4}}))
    assert cl is not None and len(cl["handles"]) == 2 and len(cl["X"]) == 8
    assert cl["groups"] == [0, 0, 0, 0, 1, 1, 1, 1]
    tp = _spec(boursier.config("balanced", 0, 50.0, 20))
    assert tp is not None and tp["fields"] == {"x": [-0.75, -0.5, 0.125], "y": [1.1, 0.1, 0.8]}
    assert tp["trap"]["verdict"] == "trap"
    assert np.allclose(np.asarray(tp["X"])[:, 1], 1.0)  # (x_i, 1): the bias coordinate


def test_other_data_are_not_editable() -> None:
    teacher = Config.from_dict({"data": {"kind": "teacher", "d": 3}})
    assert not edits.editable(teacher) and _spec(teacher) is None
    biased = Config.from_dict({"data": {"kind": "points", "bias": True}})  # 3-D inputs
    assert not edits.editable(biased) and _spec(biased) is None


def test_the_time_pieces_give_the_auto_times_alignment_end() -> None:
    """The browser's predicted alignment end (`alignEnd`) uses w0, m̄ and c from the spec with
    the data's G: here evaluated as the browser does and compared with dynamics.timescales."""
    cfg = Config()
    spec = _spec(cfg)
    assert spec is not None
    X, y = np.asarray(spec["X"]), np.asarray(spec["y"])
    b = y / len(y)  # square loss, mean: −R ∂ℓ(0, y)/∂ŷ = y/n
    ex = theory.extremal_vectors(X, b, spec["gamma"])
    g = max([e.value for e in ex if e.kind == "max"] + [-e.value for e in ex if e.kind == "min"])
    U = X / np.linalg.norm(X, axis=1)[:, None]
    g = max(g, float(np.abs(theory.G_value(np.vstack([U, -U]), X, b, spec["gamma"])).max()))
    r = spec["c"] * g
    wstar = np.sqrt(np.mean(np.abs(y)) / (spec["c"] * spec["m_bar"]))
    t = max(np.log(max(wstar / spec["w0"], 1.0)), 1.0) / r
    assert t == pytest.approx(auto_time(cfg, build_dataset(cfg)).t_align, rel=1e-9)


def test_an_edit_is_validated_like_a_link() -> None:
    base = Config()
    moved = edits.edited(base, {"angles_deg": [30, 75, 195, 255]})
    assert moved.data.angles_deg[0] == 30 and moved.data.radii == base.data.radii
    with pytest.raises(ConfigError) as e:
        edits.edited(base, {"x": [1, 2]})  # three-point's field on points data
    assert "data.x" in str(e.value.errors)
    with pytest.raises(ConfigError):
        edits.edited(base, {"labels": [1, 1, -1]})  # one label short: named by the checks
    with pytest.raises(ConfigError):
        edits.edited(base, {"angles_deg": ["north", 75, 195, 255]})


@pytest.fixture
def service(tmp_path: Path) -> Service:
    return Service(tmp_path / "cache", Limits(click_to_run_s=1e9))


def _body(fields: dict) -> bytes:
    return json.dumps({"fields": fields}).encode()


def test_apply_runs_the_edit_and_stores_its_figure(service: Service) -> None:
    eid = edits.offer(Config(), FigureOptions(), True, "visitor-a", service)
    assert eid is not None
    got = edits.apply(eid, _body({"angles_deg": [40, 75, 195, 255]}))
    assert "key" in got, got
    assert got["status"] == "completed" and got["config"]["angles_deg"][0] == 40
    shown = figures.store().shown(got["key"])
    assert shown is not None and len(shown.payload) > 1000


def test_apply_refuses_what_a_link_would_refuse(service: Service,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    eid = edits.offer(Config(), FigureOptions(), True, "visitor-b", service)
    assert eid is not None
    assert "error" in edits.apply("0" * 32, _body({"angles_deg": [1, 2, 3, 4]}))  # not offered
    assert "error" in edits.apply(eid, b"{not json")
    assert "error" in edits.apply(eid, json.dumps({"angles": 1}).encode())
    bad = edits.apply(eid, _body({"labels": [1, 1, -1]}))
    assert "error" in bad and bad["fields"]
    big = b'{"fields": {"angles_deg": [' + b"1," * edits.MAX_BODY + b"1]}}"
    assert "larger than" in edits.apply(eid, big)["error"]
    # more points than the server's limit (as a link's: EAE_MAX_POINTS): its message, no run
    monkeypatch.setenv("EAE_MAX_POINTS", "20")
    many = {"angles_deg": list(range(30)), "radii": [1.0] * 30, "labels": [1] * 30}
    got = edits.apply(eid, _body(many))
    assert "data points" in got["error"], got


def test_a_long_edit_run_waits_for_the_visitors_click(tmp_path: Path) -> None:
    svc = Service(tmp_path / "cache", Limits(click_to_run_s=1e-6))
    eid = edits.offer(Config(), FigureOptions(), True, "visitor-c", svc)
    assert eid is not None
    got = edits.apply(eid, _body({"angles_deg": [41, 75, 195, 255]}))
    assert "release the pointer" in got["error"]


def test_the_newest_edit_of_a_session_cancels_the_older(service: Service) -> None:
    slow = Config.from_dict({"integrator": {"method": "gd", "lr": 1e-4, "t_end": 1000.0,
                                            "max_steps": 20_000_000}})
    eid = edits.offer(slow, FigureOptions(), False, "visitor-d", service)
    assert eid is not None
    first: dict = {}
    body = _body({"angles_deg": [42, 75, 195, 255]})
    t = threading.Thread(target=lambda: first.update(edits.apply(eid, body)))
    t.start()
    moved = edits.edited(slow, {"angles_deg": [42, 75, 195, 255]})
    while not service.in_flight(moved):  # the first edit's run is under way
        assert t.is_alive()
        time.sleep(0.01)
    second: dict = {}
    body2 = _body({"angles_deg": [43, 75, 195, 255]})
    t2 = threading.Thread(target=lambda: second.update(edits.apply(eid, body2)))
    t2.start()
    t.join()
    assert first.get("cancelled") is True, first  # the newer edit replaced it
    moved2 = edits.edited(slow, {"angles_deg": [43, 75, 195, 255]})
    while not service.in_flight(moved2):  # the newer one runs (not stopped by the older)
        assert t2.is_alive(), second
        time.sleep(0.01)
    service.end_session("visitor-d")  # the visitor leaves: the session's run stops too
    t2.join()
    assert second.get("cancelled") is True, second


def test_offers_are_bounded(service: Service) -> None:
    for k in range(edits.OFFERS_MAX + 20):
        edits.offer(Config(), FigureOptions(), True, f"many-{k}", service)
    assert len(runtime.current().edits.offers) <= edits.OFFERS_MAX
