"""The pages benchmark (bench/bench_pages.py: first chart of every page, quick sweeps): its
helpers, and the sweep optimisations giving the same results as before (a point skips the
analysis when no phase summary is recorded; points are submitted seed by seed; the page draws
the points finished so far). No speed is asserted here: `python -m bench pages` measures."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from bench import bench_pages as bp
from dynamics import sweeps as sw
from dynamics.config import Config
from dynamics.service import Service
from dynamics.sweeps.engine import WARM_CONFIGS, _warm_worker

TINY = {"model": {"width": 8}, "integrator": {"method": "gf", "t_end": 30.0},
        "record": {"frames": 16, "scalars": 40}}


# ----------------------------------------------------------------------------- bench helpers
def test_page_cases_cover_every_page_and_paper() -> None:
    from dynamics.papers import PAPERS

    cases = bp.page_cases(PAPERS)
    assert [c.label for c in cases] == ["floor", "explorer", "overview",
                                        *(f"papers:{k}" for k in PAPERS), "compare",
                                        "real_data"]
    first = next(iter(PAPERS))
    assert cases[1].path == "/" and cases[3].path == f"/papers?paper={first}"


def test_select_by_label_or_group_and_rejects_unknown_names() -> None:
    a, b = "paper_a", "paper_b"  # any two names: the helper only formats them
    cases = bp.page_cases([a, b])
    assert [c.label for c in bp.select(cases, "")] == [c.label for c in cases]
    assert [c.label for c in bp.select(cases, "floor")] == ["floor"]
    assert [c.label for c in bp.select(cases, "papers")] == [f"papers:{a}", f"papers:{b}"]
    assert [c.label for c in bp.select(cases, f"compare, papers:{a}")] == [f"papers:{a}",
                                                                           "compare"]
    with pytest.raises(ValueError, match="nope"):
        bp.select(cases, "explorer,nope")


def test_tables_and_verdicts() -> None:
    assert bp.verdict(None, 3.0) == "FAIL"
    assert bp.verdict(2.99, 3.0) == "ok" and bp.verdict(3.0, 3.0) == "OVER"
    rows = [bp.PageTime("overview", 4.5, [2.0, 1.0, 3.5]), bp.PageTime("compare", None, [])]
    assert rows[0].warm_median == 2.0 and rows[1].warm_median is None
    text = bp.page_table(rows)
    assert "| overview | 4.50 | 2.00 | — | 2.00, 1.00, 3.50 | ok |" in text
    assert "| compare | — | — | — |  | FAIL |" in text
    text = bp.page_table([bp.PageTime("floor", 1.0, [0.5, 0.75, 1.0]), *rows])
    assert "| overview | 4.50 | 2.00 | 1.25 |" in text and "| floor | 1.00 | 0.75 | — |" in text
    sweeps = bp.sweep_table([bp.SweepTime("trap_probability", 48, 1.5, 12.0)], "sweep")
    assert "| trap_probability | 48 | 1.50 | 12.00 | OVER |" in sweeps


# ----------------------------------------------------------------------------- summaries
def test_needs_phases() -> None:
    assert not sw.needs_phases(("final_loss", "max_angle", "n_active"))
    assert sw.needs_phases(("final_loss", "t_align"))
    assert sw.needs_phases(("phases",))


@pytest.mark.parametrize("record", [("final_loss", "max_angle", "n_active"),
                                    ("ols_loss", "trapped", "final_loss", "t_half_loss"),
                                    ("mu", "t_theory", "t_min_bound", "gamma_norm",
                                     "t_cone")])
def test_a_point_without_phase_summaries_gives_the_same_numbers(tmp_path, record) -> None:
    """Skipping the analysis (and the summaries not recorded) changes no recorded value."""
    svc = Service(cache_dir=tmp_path)
    for d in (TINY, {**TINY, "loss": {"kind": "square", "reduction": "mean"},
                     "data": {"kind": "three_point"}}):
        cfg = Config.from_dict(d)
        full = sw.compute_point(cfg, service=svc)  # every summary, analysed
        part = sw.compute_point(cfg, record=record, service=svc)
        assert set(part) == {"cache_key", "status", "message", "wall_time_s", *record}
        for k in record:
            a, b = full[k], part[k]
            assert (a == b) or (isinstance(a, float) and math.isnan(a) and math.isnan(b)), k


# ----------------------------------------------------------------------------- engine
def test_submission_order_is_seed_by_seed_and_keeps_every_point() -> None:
    spec = sw.Sweep.from_dict({"name": "t", "base": TINY,
                               "axes": [{"field": "init.scale", "values": [1e-3, 1e-2, 0.1]}],
                               "seeds": [5, 2]})
    pts = spec.points()  # seeds innermost: (s0, 5), (s0, 2), (s1, 5), ...
    order = sw.submission_order(pts, spec.seeds)
    assert [p.seed for p in order] == [5, 5, 5, 2, 2, 2]
    assert [p.index for p in order] == [0, 2, 4, 1, 3, 5]
    assert sorted(p.index for p in order) == [p.index for p in pts]


def test_warm_configs_are_valid_and_run() -> None:
    assert {Config.from_dict(d).integrator.method for d in WARM_CONFIGS} == {"gd", "gf"}
    assert _warm_worker() >= 0.0


def test_partial_table_draws_only_finished_points() -> None:
    """The table of a sweep under way: unfinished points are "cancelled" rows, which the
    figures leave out (they draw finished runs only)."""
    from viz import sweeps as vs

    spec = sw.Sweep.from_dict({"name": "t", "base": TINY,
                               "axes": [{"field": "init.scale", "values": [1e-3, 1e-2, 0.1]}],
                               "seeds": [0, 1]})
    rows = {i: {"status": "completed", "message": "", "final_loss": 0.1 * (i + 1)}
            for i in (0, 2)}
    df = sw.make_frame(spec, rows)
    assert df["status"].tolist().count("completed") == 2 and len(df) == 6
    fig = vs.default_figure(df, list(spec.axis_fields), "final_loss")
    ys = [y for t in fig.data if t.y is not None for y in t.y]
    assert sorted(v for v in ys if not pd.isna(v)) == pytest.approx([0.1, 0.3])
