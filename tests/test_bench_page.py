"""The settings-change benchmark (bench/bench_page.py): its change plan, the
neighbouring settings the Explorer prefetches, and the cached figure's dict (the same content
as a freshly built figure). No timing here: speed is measured by `python -m bench page`."""

from __future__ import annotations

import pytest

from bench.bench_page import EPS_LADDER, _title_matches, plan_changes, summary
from dynamics.config import Config
from dynamics.simulate import simulate
from dynamics.timescales import with_auto_time
from ui.controls import EPS_CHOICES, GAMMA_STEP, moved_control, neighbours


@pytest.mark.parametrize("n", [1, 4, 10])
def test_plan_changes_alternates_new_and_cached_one_control_at_a_time(n: int) -> None:
    start = (0.0, 0.001, "square")
    plan = plan_changes(n, start)
    seen, cur = {start}, start
    for ch in plan:
        diff = [k for k in range(3) if ch.settings[k] != cur[k]]
        assert len(diff) == 1  # one control per change
        assert ch.control == ("gamma", "eps", "loss")[diff[0]]
        assert ch.value == ch.settings[diff[0]]
        assert ch.kind == ("cached" if ch.settings in seen else "new")
        if ch.kind == "new":  # never a neighbour the page prefetched
            for g, e, loss in seen:
                if (e, loss) == ch.settings[1:]:
                    assert abs(abs(ch.settings[0] - g) - GAMMA_STEP) > 1e-9
                if (g, loss) == (ch.settings[0], ch.settings[2]):
                    ladder = sorted(EPS_CHOICES)
                    assert abs(ladder.index(ch.settings[1]) - ladder.index(e)) != 1
        seen.add(ch.settings)
        cur = ch.settings
    kinds = [c.kind for c in plan]
    assert kinds.count("new") == n and kinds.count("cached") >= n
    if n >= 3:
        assert {c.control for c in plan} == {"gamma", "eps", "loss"}
    assert set(EPS_LADDER) <= set(EPS_CHOICES)


def test_title_match_and_summary() -> None:
    title = "leaky ReLU γ = 0.05, width m = 50 · ε = 0.001 · logistic loss (mean)"
    assert _title_matches(title, (0.05, 0.001, "logistic"))
    assert not _title_matches(title, (0.05, 0.001, "square"))
    assert not _title_matches(title, (0.0, 0.001, "logistic"))
    assert _title_matches("ReLU, width m = 50 · ε = 0.0001 · square loss (mean)",
                          (0.0, 0.0001, "square"))
    assert summary([]) == "no samples"
    assert summary([3.0, 1.0, 2.0]) == "median 2.00 s (min–max 1.00–3.00, n = 3)"


def test_neighbours_are_the_runs_the_page_would_start() -> None:
    base = Config()
    got = neighbours(base, auto=True, moved="eps", direction=-1.0)
    pairs = [(c.model.gamma, c.init.scale) for c in got]
    assert pairs == [(0.0, 0.000316), (0.0, 0.00316), (0.05, 0.001)]  # γ − step < 0 skipped
    for c in got:  # the auto range applied, as control_panel does
        raw = c.to_dict()
        raw["integrator"]["t_end"] = base.integrator.t_end
        raw["record"]["t_first"] = None
        run, _ = with_auto_time(Config.from_dict(raw))
        assert c.cache_key() == run.cache_key()
    plain = neighbours(base.with_updates({"model.gamma": 0.5}), auto=False, moved="gamma")
    assert [(c.model.gamma, c.init.scale) for c in plain][:2] == [(0.55, 0.001), (0.45, 0.001)]
    assert all(c.integrator.t_end == base.integrator.t_end for c in plain)
    assert moved_control(None, base) == (None, 0.0)
    assert moved_control(base, base.with_updates({"model.gamma": 0.1})) == ("gamma", 1.0)
    assert moved_control(base, base.with_updates({"init.scale": 1e-4})) == ("eps", -1.0)


def test_one_figure_cache_builds_each_figure_once_and_stays_bounded() -> None:
    from ui import figures
    from viz.options import FigureOptions

    cfg = Config().with_updates({"model.width": 12, "record.frames": 20})
    traj = simulate(cfg)
    store = figures.store()
    a = figures.main(traj, None, FigureOptions())
    b = figures.main(traj, None, FigureOptions())
    assert a is b  # the second session gets the same object, built once
    c = figures.main(traj, None, FigureOptions(presenter=True))
    assert c.key != a.key and store.get(c.key) is c  # the options are in the key
    assert store.payload(a.key) == a.payload and a.payload[:4] == b"EAEP"
    small = figures.FigureStore(max_entries=2, max_mb=1.0)
    for s in (a, c, a):
        small.put(s)
    assert small.stats()["entries"] == 2
    small.put(figures.Shown("x" * 40, b"\0" * (2 * 2**20)))  # over the byte bound
    assert small.stats()["mb"] <= 2.5 and small.get(a.key) is None
    # a key announced but not built is waited for, then given up
    small.expect("pending", within_s=0.2)
    assert small.wait("pending", timeout=5.0) is None
    assert small.wait("unknown", timeout=5.0) is None
