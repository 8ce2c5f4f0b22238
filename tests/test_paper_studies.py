"""The later papers' studies on the sweep engine (their built-in sweeps, quick size, serial,
an own cache): every point completes and each study shows its paper's statement in its
table — Kunin et al.'s downstream lazy and upstream rich at small τ, Tsoy & Konstantinov's
width-free early clusters, Luo et al.'s RD growing with m in the condensed regime and
falling in the linear one, Boursier & Flammarion's optimisation threshold in n, and Dana et
al.'s interpolators never below the minimal norm. Slow: about a hundred runs in all (Dana et
al.'s success study has its own tests in tests/test_paper_dana.py)."""

from __future__ import annotations

import numpy as np
import pytest

from dynamics import sweeps as sw
from dynamics.papers import luo
from dynamics.service import Service

pytestmark = pytest.mark.slow


def _frame(name: str, tmp_path):
    res = sw.run_sweep_serial(sw.builtin_sweep(name, quick=True),
                              service=Service(cache_dir=tmp_path))
    df = res.frame
    assert len(df) and set(df["status"]) == {"completed"}, df["status"].value_counts()
    return df


def test_kunin_tau_delta(tmp_path):
    df = _frame("kunin_tau_delta", tmp_path)
    small = df[df["init.scale"] == df["init.scale"].min()].set_index("init.imbalance")
    assert small.loc[-1.0, "kunin_kernel_distance"] < 0.01  # downstream: lazy
    assert small.loc[1.0, "kunin_rich_time"] < small.loc[0.0, "kunin_rich_time"]


def test_tsoy_width(tmp_path):
    df = _frame("tsoy_width", tmp_path)
    assert (df["tsoy_early_deviation"] <= 5.0).all(), df["tsoy_early_deviation"]
    assert df["model.width"].nunique() >= 3


def test_luo_phase_diagram(tmp_path):
    df = _frame("luo_phase_diagram", tmp_path)
    for (ap, wp), part in df.groupby(["init.a_power", "init.w_power"]):
        rd = part.groupby("model.width")["luo_sup_rd"].median().sort_index()
        g, gp = float(part["luo_gamma"].iloc[0]), float(part["luo_gamma_prime"].iloc[0])
        regime = luo.regime(g, gp)
        if regime == "condensed":
            assert rd.iloc[-1] > rd.iloc[0], (ap, wp, rd)
        elif regime == "linear":
            assert rd.iloc[-1] < rd.iloc[0], (ap, wp, rd)


def test_threshold_n(tmp_path):
    df = _frame("threshold_n", tmp_path)
    med = df.groupby("data.n")[["threshold_train_ratio", "threshold_test_ratio"]].median()
    assert med["threshold_train_ratio"].iloc[0] <= 0.01  # small n: interpolates
    assert med["threshold_train_ratio"].iloc[-1] >= 0.5  # large n: at the linear estimator
    assert med["threshold_test_ratio"].iloc[-1] <= 1.25


def test_dana_norm_vs_n(tmp_path):
    df = _frame("dana_norm_vs_n", tmp_path)
    ratio = df["dana_norm_ratio"].dropna()
    assert len(ratio) >= 6 and (ratio >= 1.0).all()  # no interpolator below the minimal norm
    assert np.isnan(df.loc[df["dana_interpolates"] == 0.0, "dana_norm_ratio"]).all()
