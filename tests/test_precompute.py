"""Pre-run computations on the page path are bounded before they run, at every size the limits
allow: the auto end time (extremal-vector search, growth-rate floor) and the analysis of a run
(extremal vectors, cone normals, the papers' notes). The large cases run in a subprocess under
an address-space cap, so the unbounded code they guard against fails there (MemoryError)
instead of taking the machine's memory."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np
import pytest

from dynamics import theory, timescales
from dynamics.analysis import analyse
from dynamics.config import Config
from dynamics.data import build_dataset
from dynamics.limits import Limits
from dynamics.simulate import simulate

REPO = Path(__file__).resolve().parent.parent
CAP_BYTES = 4 * 2**30  # address space of the child: numpy, numba and a 164 MB dataset fit

_CHILD = textwrap.dedent("""
    import json, sys, tracemalloc
    from dynamics.config import Config
    from dynamics.data import build_dataset
    phase, n, d, m = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    cfg = Config.from_dict({"data": {"kind": "teacher", "n": n, "d": d},
                            "model": {"width": m}})
    if phase == "auto":
        from dynamics.timescales import with_auto_time
        ds = build_dataset(cfg)
        tracemalloc.start()
        run, at = with_auto_time(cfg, ds)
        out = {"t_end": at.t_end, "describe": at.describe()}
    else:
        from dynamics.analysis import analyse
        from dynamics.simulate import simulate
        traj = simulate(cfg, cancel=lambda: True)
        tracemalloc.start()
        an = analyse(traj)
        out = {"notes": list(an.notes), "directions": len(an.directions)}
    out["peak_mb"] = tracemalloc.get_traced_memory()[1] / 1e6
    print(json.dumps(out))
""")


def _child(phase: str, n: int, d: int, m: int = 50) -> dict:
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (CAP_BYTES, CAP_BYTES))

    out = subprocess.run([sys.executable, "-c", _CHILD, phase, str(n), str(d), str(m)],
                         cwd=REPO, capture_output=True, text=True, timeout=600,
                         preexec_fn=cap)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.heavy
@pytest.mark.parametrize("n,d", [(20000, 8), (20000, 2), (20000, 1024)])
def test_the_auto_end_time_at_the_point_limit_stays_small(n: int, d: int) -> None:
    """The link ?data.kind=teacher&data.n=20000&data.d=8 took a server to 15.5 GB: the
    search enumerated every pair of points (and the rate's floor multiplied all 2n data
    directions with all n points). Now at most the plan's arrays: tens of MB."""
    got = _child("auto", n, d)
    # the dataset (≤ 164 MB) is built before tracing starts; the search's own arrays are
    # ≈ 8·budget/d bytes plus the sample (a few MB) — 100 MB leaves room for NumPy temporaries
    assert got["peak_mb"] < 100, got
    assert got["t_end"] > 0
    if d > 2:
        assert "sample of" in got["describe"]


@pytest.mark.heavy
def test_the_analysis_of_a_large_run_stays_small() -> None:
    """`analyse` after any completed run with d ≥ 3 ran the same enumeration; now it keeps to
    its budget and says that the search used a sample."""
    got = _child("analyse", 20000, 8, 100)
    assert got["peak_mb"] < 100, got
    assert any("uniform sample of" in n for n in got["notes"]), got["notes"]


def test_least_squares_in_high_dimension_is_a_note_not_a_computation() -> None:
    """Boursier & Flammarion's least-squares note costs n·d² (2000 × 1024²: seconds and a copy
    of X); above its budget the analysis says it was not computed."""
    cfg = Config.from_dict({"data": {"kind": "teacher", "n": 2000, "d": 1024},
                            "model": {"width": 20}})
    an = analyse(simulate(cfg, cancel=lambda: True))
    assert any("least-squares fit not computed" in n for n in an.notes), an.notes
    small = Config.from_dict({"data": {"kind": "teacher", "n": 50, "d": 4}})
    an = analyse(simulate(small, cancel=lambda: True))
    assert any(n.startswith("least-squares fit: β") for n in an.notes)


def test_every_plan_up_to_the_limits_fits_its_budget() -> None:
    """The cost of the d > 2 search is fixed from (n, d) before any work: within the budget at
    every size up to the limits, whole data while it fits, a sample beyond."""
    lim = Limits()
    for budget in (1e8, 2e8, 1e9):
        for n in (3, 50, 200, 2000, 8000, lim.max_points):
            for d in (3, 8, 64, 256, lim.max_dim):
                plan = theory.plan_search(n, d, budget)
                assert plan.cost <= budget, plan
                assert 1 <= plan.n_used <= n and plan.starts >= 1 and plan.iters >= 20
                assert plan.sampled == (plan.n_used < n)
    assert not theory.plan_search(200, 8, 2e8).sampled
    assert theory.plan_search(20000, 8, 2e8).sampled


@pytest.mark.heavy
def test_the_sampled_growth_rate_matches_the_whole_data() -> None:
    """At n = 20,000 the auto time's rate comes from a sample of about 2,000 points; against a
    search over all the points (a budget 10× larger) it agrees within 5 %: the estimate of
    G = Σ b_i σ(⟨w, x_i⟩) from a uniform sample of n_s points has a relative error of about
    (std/mean of b_i σ_i)/√n_s ≈ 1 % for these clustered data, and the maximum of noisy
    estimates adds a small upward bias."""
    cfg = Config.from_dict({"data": {"kind": "teacher", "n": 20000, "d": 8}})
    ds = build_dataset(cfg)
    whole_budget = 2e9  # enough for the floor of the plan over all 20,000 points
    assert theory.plan_search(20000, 8, timescales.AUTO_BUDGET).sampled
    assert not theory.plan_search(20000, 8, whole_budget).sampled
    sampled = timescales.growth_rate(cfg, ds)
    whole = timescales.growth_rate(cfg, ds, budget=whole_budget)
    assert sampled == pytest.approx(whole, rel=0.05)


@pytest.mark.heavy
@pytest.mark.parametrize("gamma", [0.0, 0.3])
def test_the_2d_sweep_finds_every_local_extremum_of_a_dense_scan(gamma: float) -> None:
    """d = 2 at n = 400 (800 kinks): the sweep's maxima and minima are exactly the local
    extrema of G sampled on 400,001 angles (an independent brute force), up to the grid."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((400, 2))
    b = rng.choice([-1.0, 1.0], 400) / 400
    ex = theory.extremal_vectors(X, b, gamma)
    th = np.linspace(-np.pi, np.pi, 400001)[:-1]
    D = np.c_[np.cos(th), np.sin(th)]  # G row by row, in blocks: all at once is 4 GB of temps
    G = np.concatenate([theory.G_value(D[i:i + 20_000], X, b, gamma)
                        for i in range(0, len(D), 20_000)])
    left, right = np.roll(G, 1), np.roll(G, -1)
    # strict grid extrema; a grid step is 1.6e-5 rad, far below the spacing of the kinks here
    grid_max = th[(G > left) & (G > right)]
    grid_min = th[(G < left) & (G < right)]
    for kind, grid in (("max", grid_max), ("min", grid_min)):
        ours = np.sort([np.arctan2(e.vector[1], e.vector[0]) for e in ex if e.kind == kind])
        assert len(ours) == len(grid), (kind, len(ours), len(grid))
        gap = np.abs(np.angle(np.exp(1j * (ours[:, None] - grid[None, :])))).min(axis=1)
        assert gap.max() < 3 * (th[1] - th[0])
    for e in ex:  # values are G at the reported points
        assert e.value == pytest.approx(float(theory.G_value(e.vector, X, b, gamma)[0]),
                                        abs=1e-12)


def test_the_auto_time_is_remembered_by_config() -> None:
    cfg = Config.from_dict({"data": {"kind": "teacher", "n": 300, "d": 6}, "seed": 11})
    first = timescales.auto_time(cfg)
    assert timescales.auto_time(Config.from_json(cfg.to_json())) is first


@pytest.mark.slow
def test_the_bench_section_measures_and_renders() -> None:
    """`python -m bench precompute` (one small size, no "before" here: see bench/REPORT.md)."""
    from bench.precompute import precompute_lines, precompute_section

    sec = precompute_section(quick=True, before=None, say=lambda _m: None, sizes=[(200, 8)])
    assert [r["phase"] for r in sec["rows"]] == ["auto", "analyse"]
    for r in sec["rows"]:
        assert r["after"]["time_s"] > 0 and r["after"]["peak_mb"] >= 0, r
    table = "\n".join(precompute_lines(sec))
    assert "| auto | 200 | 8 |" in table and "→" in table


def test_the_bench_reports_a_size_the_limits_refuse() -> None:
    """A size no link or upload can reach (n·d·m over the compute limit) is a refused row, not
    the benchmark's end."""
    from bench.precompute import _make_trajectory

    with tempfile.TemporaryDirectory() as tmp:
        why = _make_trajectory(20_000, 64, 5_000, Path(tmp) / "t.eaetraj")
    assert why is not None and why.startswith("refused by the limits (model.width")
