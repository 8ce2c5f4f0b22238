"""Multi-block GD (dynamics/kernels/gd_split.py) against the one-block loop
and the independent NumPy reference of test_core."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from dynamics.kernels import (
    LOSS_CODES,
    MAX_BLOCKS,
    SPLIT_MIN_WORK,
    GDStepper,
    blocks_for,
    loss_grad,
    loss_value,
)
from tests.test_core import random_problem, ref_gd

GRID = np.linspace(0.0, 3.0, 31)


def _pair(p, W, a, lr, steps, blocks, chunks=1):
    """The same run with 1 block and with `blocks`, advanced in `chunks` calls."""
    runs = []
    for b in (1, blocks):
        gd = GDStepper(p, W, a, lr, path="blas", blocks=b)
        assert gd.blocks == b
        samples = [gd.take_steps(steps // chunks, GRID) for _ in range(chunks)]
        runs.append((gd, samples))
    return runs


@pytest.mark.parametrize("train_output", [True, False])
@pytest.mark.parametrize("gamma", [0.0, 0.1])
@pytest.mark.parametrize("loss", list(LOSS_CODES))
def test_split_equals_one_block(loss, gamma, train_output):
    p, W, a = random_problem(60, 7, 23, loss, "mean", gamma, train_output, seed=5, c=1.0)
    (g1, s1), (g3, s3) = _pair(p, W / 3, a / 3, 0.05, 60, 3, chunks=3)
    # block sums reorder Σ_j: agreement to rounding, not bit for bit
    np.testing.assert_allclose(g3.W, g1.W, rtol=0, atol=1e-13 * np.abs(g1.W).max())
    np.testing.assert_allclose(g3.a, g1.a, rtol=0, atol=1e-13 * np.abs(g1.a).max())
    if not train_output:
        assert np.array_equal(g3.a, a / 3)
    assert (g3.k, g3.n_evals) == (g1.k, g1.n_evals) == (60, 61)
    for r1, r3 in zip(s1, s3, strict=True):
        assert r3.status == r1.status == "ok"
        np.testing.assert_array_equal(r3.samples.t, r1.samples.t)
        np.testing.assert_allclose(r3.samples.loss, r1.samples.loss, rtol=1e-12)
        np.testing.assert_allclose(r3.samples.norm_rate, r1.samples.norm_rate, rtol=1e-9)
        np.testing.assert_allclose(r3.samples.dir_rate, r1.samples.dir_rate, rtol=1e-9)
    assert g3.loss == pytest.approx(loss_value(p, g3.W, g3.a), rel=1e-12)


def test_split_matches_numpy_reference():
    p, W, a = random_problem(200, 20, 100, "square", "mean", 0.1, True, seed=3, c=1.0)
    W, a = W / np.sqrt(20), a / 10
    gd = GDStepper(p, W, a, 0.05, path="blas", blocks=2)
    gd.take_steps(100, np.empty(0))
    Wr, ar = ref_gd(p, W, a, 0.05, 100)
    np.testing.assert_allclose(gd.W, Wr, rtol=0, atol=1e-12 * np.abs(Wr).max())
    np.testing.assert_allclose(gd.a, ar, rtol=0, atol=1e-12 * np.abs(ar).max())
    # the cached gradient (packed (d+1, m) layout) is the one at the end point
    _, gW, ga = loss_grad(p, gd.W, gd.a)
    np.testing.assert_allclose(gd.ws.G[:-1].T, gW, rtol=0, atol=1e-13 * np.abs(gW).max())
    np.testing.assert_allclose(gd.ws.G[-1], ga, rtol=0, atol=1e-13 * np.abs(ga).max())


def test_split_blocks_of_unequal_size_and_more_blocks_than_cores():
    p, W, a = random_problem(33, 4, 7, "logistic", "sum", 0.0, True, seed=2, c=1.0)
    (g1, _), (g5, _) = _pair(p, W / 4, a / 4, 0.01, 40, 5)
    np.testing.assert_allclose(g5.W, g1.W, rtol=0, atol=1e-13 * np.abs(g1.W).max())


@pytest.mark.parametrize("loss", ["square", "exponential"])
def test_split_divergence_stops_at_the_same_iterate(loss):
    p, W, a = random_problem(20, 3, 10, loss, "sum", 0.0, True)
    (g1, s1), (g2, s2) = _pair(p, W * 10, a * 10, 10.0, 10_000, 2)
    assert s1[0].status == s2[0].status == "diverged"
    assert g2.k == g1.k < 10_000
    assert g2.n_evals == g1.n_evals


def test_blocks_follow_the_problem_not_the_host(monkeypatch):
    """The block count is a function of (n, d, m) only; EAE_CORE_THREADS sets the threads
    that run them, never the count (so results do not depend on the host)."""
    big = (2000, 64, 200)  # n·d·m = 25.6e6: 6 blocks
    assert blocks_for(*big) == 25_600_000 // SPLIT_MIN_WORK == 6
    assert blocks_for(2000, 784, 100) == MAX_BLOCKS
    assert blocks_for(100, 10, 500) == 1  # below SPLIT_MIN_WORK
    assert blocks_for(3, 20_000, 200) == 1  # fewer than 2 samples per block
    p, W, a = random_problem(*big, "square", "mean", 0.0, True, seed=1, c=1.0)
    for env, threads in (("1", 1), ("3", 3), ("many", None), ("auto", None), ("64", 6)):
        monkeypatch.setenv("EAE_CORE_THREADS", env)
        gd = GDStepper(p, W, a, 1e-3)
        assert gd.blocks == 6  # never an error, never host-dependent
        if threads is not None:
            assert gd.threads == threads
        assert 1 <= gd.threads <= 6


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_split_bits_do_not_depend_on_threads(threads):
    p, W, a = random_problem(90, 8, 30, "logistic", "mean", 0.1, True, seed=4, c=1.0)
    ref = GDStepper(p, W / 4, a / 4, 0.05, path="blas", blocks=5, threads=1)
    ref.take_steps(80, GRID)
    gd = GDStepper(p, W / 4, a / 4, 0.05, path="blas", blocks=5, threads=threads)
    gd.take_steps(80, GRID)
    assert gd.threads == threads
    assert np.array_equal(gd.W, ref.W) and np.array_equal(gd.a, ref.a)
    assert np.array_equal(gd.ws.G, ref.ws.G) and gd.loss == ref.loss


def test_split_runs_concurrently_and_deterministically():
    """Two split runs in two threads at once equal one run alone, bit for bit."""
    p, W, a = random_problem(300, 16, 64, "square", "mean", 0.0, True, seed=9, c=1.0)
    alone = GDStepper(p, W / 4, a / 4, 0.02, path="blas", blocks=2)
    alone.take_steps(200, np.empty(0))
    out: list[GDStepper] = []

    def run() -> None:
        g = GDStepper(p, W / 4, a / 4, 0.02, path="blas", blocks=2)
        g.take_steps(200, np.empty(0))
        out.append(g)

    ths = [threading.Thread(target=run) for _ in range(2)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    assert len(out) == 2
    for g in out:
        assert np.array_equal(g.W, alone.W) and np.array_equal(g.a, alone.a)
