"""Tests for dynamics.kernels: gradients, GD, gradient flow, divergence, determinism,
sampling, and the one stepper protocol."""

from __future__ import annotations

import itertools
import threading

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from dynamics.kernels import (
    LOSS_CODES,
    METHODS,
    GDStepper,
    GFStepper,
    Problem,
    StepStatus,
    default_tolerances,
    forward,
    loss_grad,
    loss_value,
    make_stepper,
)

EMPTY = np.empty(0)


# --------------------------------------------------------------------------- reference


def ref_loss_grad(p: Problem, W: np.ndarray, a: np.ndarray):
    """Plain-NumPy reference of L, ∂L/∂W, ∂L/∂a (written independently of the kernels)."""
    X, y, s = p.X, p.y, p.sw
    z = X @ W.T
    act = np.maximum(z, p.gamma * z)
    der = np.where(z > 0, 1.0, p.gamma)
    h = p.c * act @ a
    R = 1.0 / len(y) if p.reduction == "mean" else 1.0
    if p.loss == "square":
        ell, dell = 0.5 * (h - y) ** 2, h - y
    elif p.loss == "logistic":
        ell, dell = np.logaddexp(0.0, -y * h), -y / (1.0 + np.exp(y * h))
    else:
        ell, dell = np.exp(-y * h), -y * np.exp(-y * h)
    r = R * s * dell
    ga = p.c * act.T @ r if p.train_output else np.zeros_like(a)
    gW = p.c * a[:, None] * ((der * r[:, None]).T @ X)
    return R * np.sum(s * ell), gW, ga


def ref_gd(p: Problem, W: np.ndarray, a: np.ndarray, lr: float, n: int):
    W, a = W.copy(), a.copy()
    for _ in range(n):
        _, gW, ga = ref_loss_grad(p, W, a)
        W = W - lr * gW
        a = a - lr * ga
    return W, a


def three_points(gamma: float = 0.0, train_output: bool = True) -> Problem:
    """Boursier & Flammarion's 3-point data with an appended bias coordinate."""
    x = np.array([-0.75, -0.5, 0.125])
    X = np.ascontiguousarray(np.c_[x, np.ones(3)])
    return Problem(X, np.array([1.1, 0.1, 0.8]), np.ones(3), gamma, 1.0, "square", "mean",
                   train_output)


def balanced(m: int, d: int, scale: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    W = rng.normal(0.0, scale, (m, d))
    return W, np.linalg.norm(W, axis=1) * rng.choice([-1.0, 1.0], m)


def random_problem(n, d, m, loss, reduction, gamma, train_output, seed=0, c=1.7):
    """Random data with weights chosen so that no pre-activation z_ij is near 0."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = rng.choice([-1.0, 1.0], n) if loss != "square" else rng.normal(size=n)
    sw = rng.uniform(0.5, 2.0, n)
    for _ in range(10_000):  # only small problems can avoid kinks; large ones just try once
        W = rng.normal(size=(m, d)) * 0.5
        if n * m > 100 or np.abs(X @ W.T).min() > 0.05:
            break
    a = rng.normal(size=m) * 0.5
    return Problem(X, y, sw, gamma, c, loss, reduction, train_output), W, a


# --------------------------------------------------------------------------- gradients


@pytest.mark.parametrize("train_output", [True, False])
@pytest.mark.parametrize("gamma", [0.0, 0.1])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("loss", list(LOSS_CODES))
def test_loss_grad_vs_reference_and_fd(loss, reduction, gamma, train_output):
    p, W, a = random_problem(6, 3, 4, loss, reduction, gamma, train_output)
    Lr, gWr, gar = ref_loss_grad(p, W, a)
    for path in ("fused", "blas"):
        L, gW, ga = loss_grad(p, W, a, path=path)
        assert L == pytest.approx(Lr, rel=1e-13)
        np.testing.assert_allclose(gW, gWr, rtol=1e-12, atol=1e-14 * np.abs(gWr).max())
        np.testing.assert_allclose(ga, gar, rtol=1e-12, atol=1e-14 * max(np.abs(gar).max(), 1))
    assert loss_value(p, W, a) == pytest.approx(Lr, rel=1e-13)
    np.testing.assert_allclose(forward(p, W, a), p.c * np.maximum(p.X @ W.T, gamma * p.X @ W.T)
                               @ a, rtol=1e-13)
    # central finite differences
    L, gW, ga = loss_grad(p, W, a)
    eps = 1e-6
    fdW = np.zeros_like(W)
    for idx in np.ndindex(W.shape):
        E = np.zeros_like(W)
        E[idx] = eps
        fdW[idx] = (loss_value(p, W + E, a) - loss_value(p, W - E, a)) / (2 * eps)
    np.testing.assert_allclose(gW, fdW, rtol=1e-6, atol=1e-8 * max(1.0, abs(L)))
    if train_output:
        fda = np.array([(loss_value(p, W, a + eps * e) - loss_value(p, W, a - eps * e))
                        / (2 * eps) for e in np.eye(len(a))])
        np.testing.assert_allclose(ga, fda, rtol=1e-6, atol=1e-8 * max(1.0, abs(L)))
    else:
        assert np.all(ga == 0.0)


def test_dead_relu_neuron_has_zero_gradient():
    """σ'(0) = 0 for ReLU: a neuron with z_ij = 0 on all samples gets no gradient."""
    p = three_points()
    W = np.array([[1.0, 0.0], [0.3, 1.0]])
    X = np.array([[0.0, 1.0], [0.0, 2.0], [0.0, -1.0]])
    p = Problem(X, p.y, p.sw, 0.0, 1.0, "square", "mean", True)
    _, gW, ga = loss_grad(p, W, np.array([1.0, 1.0]))
    assert np.all(gW[0] == 0.0) and ga[0] == 0.0
    assert np.any(gW[1] != 0.0)


def test_logistic_and_exponential_are_stable_for_large_margins():
    p, W, a = random_problem(5, 2, 3, "logistic", "mean", 0.0, True)
    L, gW, ga = loss_grad(p, 1e3 * W, 1e3 * a)
    assert np.isfinite(L) and np.all(np.isfinite(gW)) and np.all(np.isfinite(ga))


# --------------------------------------------------------------------------- GD


@pytest.mark.parametrize(("n", "d", "m", "path"),
                         [(3, 2, 8, "fused"), (3, 2, 8, "blas"), (200, 20, 100, None)])
@pytest.mark.parametrize("loss", ["square", "logistic"])
def test_gd_matches_numpy_loop(n, d, m, path, loss):
    p, W, a = random_problem(n, d, m, loss, "mean", 0.1, True, seed=3, c=1.0)
    W, a = W / np.sqrt(d), a / np.sqrt(m)
    gd = GDStepper(p, W, a, 0.05, path=path)
    if path is None:
        assert gd.use_blas
    Wr, ar = W, a
    for _ in range(5):  # compare after every chunk of steps
        res = gd.take_steps(20, EMPTY)
        assert res.status == "ok"
        Wr, ar = ref_gd(p, Wr, ar, 0.05, 20)
        np.testing.assert_allclose(gd.W, Wr, rtol=0, atol=1e-12 * np.abs(Wr).max())
        np.testing.assert_allclose(gd.a, ar, rtol=0, atol=1e-12 * np.abs(ar).max())
    assert gd.k == 100 and gd.t == 100 * 0.05
    assert gd.n_evals == 101  # one per step, plus the cached gradient at the end point
    assert not np.shares_memory(gd.W, W)


def test_gd_paths_agree():
    p, W, a = random_problem(40, 5, 30, "square", "mean", 0.0, True)
    f = GDStepper(p, W, a, 0.02, path="fused")
    b = GDStepper(p, W, a, 0.02, path="blas")
    grid = np.linspace(0.0, 10.0, 21)
    rf, rb = f.take_steps(500, grid), b.take_steps(500, grid)
    np.testing.assert_allclose(f.W, b.W, rtol=0, atol=1e-12 * np.abs(b.W).max())
    np.testing.assert_allclose(rf.samples.loss, rb.samples.loss, rtol=1e-12)


def test_gd_frozen_output_keeps_a():
    p, W, a = random_problem(10, 3, 5, "exponential", "sum", 0.0, False)
    gd = GDStepper(p, W, a, 0.01)
    gd.take_steps(50, EMPTY)
    assert np.array_equal(gd.a, a) and not np.array_equal(gd.W, W)


# --------------------------------------------------------------------------- GF


def test_gf_invariants_small_init_default_tolerance():
    """Balanced start, entries ~1e-3: a_j² − ‖w_j‖² conserved, signs fixed, loss decreasing."""
    p = three_points()
    W0, a0 = balanced(50, 2, 1e-3, seed=4)
    rtol, atol = default_tolerances(W0, a0)
    gf = GFStepper(p, W0, a0, rtol, atol)
    grid = np.geomspace(1e-2, 60.0, 300)
    res = gf.advance(60.0, 2_000_000, grid)
    assert res.status == "ok" and gf.t == 60.0
    inv0 = a0**2 - np.sum(W0**2, axis=1)
    inv = gf.a**2 - np.sum(gf.W**2, axis=1)
    scale = np.max(gf.a**2 + np.sum(gf.W**2, axis=1))
    assert np.max(np.abs(inv - inv0)) / scale < 1e-6
    assert np.all(np.sign(gf.a) == np.sign(a0))
    L = res.samples.loss
    assert np.all(np.diff(L) <= 1e-12 * L[0])
    beta = np.linalg.lstsq(p.X, p.y, rcond=None)[0]
    ols = 0.5 * np.mean((p.X @ beta - p.y) ** 2)
    assert L[-1] < 1.001 * ols  # it learned: reached the OLS plateau (B&F section 4)
    assert L[-1] == pytest.approx(loss_value(p, gf.W, gf.a), rel=1e-14)


def test_gf_matches_solve_ivp():
    p = three_points(gamma=0.1)
    W0, a0 = balanced(6, 2, 0.3, seed=1)
    m = len(a0)

    def rhs(_t, th):
        _, gW, ga = loss_grad(p, th[: 2 * m].reshape(m, 2), th[2 * m:])
        return -np.r_[gW.ravel(), ga]

    T = 8.0
    sol = solve_ivp(rhs, (0.0, T), np.r_[W0.ravel(), a0], method="RK45", rtol=1e-12,
                    atol=1e-14)
    gf = GFStepper(p, W0, a0, 1e-10, 1e-13)
    assert gf.advance(T, 10**7, EMPTY).status == "ok"
    ref = sol.y[:, -1]
    err = np.max(np.abs(np.r_[gf.W.ravel(), gf.a] - ref)) / np.max(np.abs(ref))
    assert err < 1e-7
    # and at a loose tolerance the error is larger but controlled
    loose = GFStepper(p, W0, a0, 1e-4, 1e-7)
    loose.advance(T, 10**6, EMPTY)
    err_l = np.max(np.abs(np.r_[loose.W.ravel(), loose.a] - ref)) / np.max(np.abs(ref))
    assert err < err_l < 1e-2


def test_gd_converges_to_gf_first_order():
    """‖θ_GD(T) − θ_GF(T)‖ = O(η). Neurons are chosen to cross no kink on [0, T]: at a
    kink the flow is non-smooth and the GD error constant becomes erratic."""
    p = three_points(gamma=0.1)
    rng = np.random.default_rng(0)
    m = 8
    W0 = np.c_[rng.uniform(-0.3, 0.3, m), rng.choice([-1, 1], m) * rng.uniform(0.5, 1.0, m)]
    a0 = rng.normal(0.0, 0.7, m)
    T = 2.0
    gf = GFStepper(p, W0, a0, 1e-11, 1e-14)
    assert gf.advance(T, 10**6, EMPTY).status == "ok"
    assert np.array_equal(p.X @ gf.W.T > 0, p.X @ W0.T > 0)
    assert loss_value(p, gf.W, gf.a) < 0.5 * loss_value(p, W0, a0)  # it moved
    ref = np.r_[gf.W.ravel(), gf.a]
    dists = []
    for lr in (0.02, 0.01, 0.005):
        gd = GDStepper(p, W0, a0, lr)
        gd.take_steps(round(T / lr), EMPTY)
        assert gd.t == pytest.approx(T, abs=1e-12)
        dists.append(np.linalg.norm(np.r_[gd.W.ravel(), gd.a] - ref))
    for big, small in itertools.pairwise(dists):
        assert 1.6 < big / small < 2.5


def test_gf_advance_lands_exactly_and_chunks():
    p = three_points()
    W0, a0 = balanced(10, 2, 1e-2, seed=5)
    gf = GFStepper(p, W0, a0, 1e-6, 1e-11)
    for T in (0.1, 1.2345, 1.2345, 7.0 / 3.0, 10.0):
        res = gf.advance(T, 10**6, EMPTY)
        assert res.status == "ok"
        assert gf.t == T
        assert gf.h > 0.0
    assert gf.n_evals == 1 + 1 + 3 * (gf.n_accepted + gf.n_rejected)  # f0 + h0 probe + 3/step


def test_gf_budget_then_resume():
    p = three_points()
    W0, a0 = balanced(10, 2, 1e-2, seed=5)
    gf = GFStepper(p, W0, a0, 1e-6, 1e-11)
    res = gf.advance(50.0, 30, EMPTY)
    assert res.status == "budget" and 0.0 < gf.t < 50.0 and gf.n_evals <= 30
    res = gf.advance(50.0, 10**6, EMPTY)
    assert res.status == "ok" and gf.t == 50.0


def test_gf_frozen_output():
    p, W, a = random_problem(8, 3, 4, "logistic", "mean", 0.1, False)
    gf = GFStepper(p, W, a, 1e-6, 1e-9)
    assert gf.advance(0.5, 10**6, EMPTY).status == "ok"
    assert np.array_equal(gf.a, a) and not np.array_equal(gf.W, W)


# --------------------------------------------------------------------------- sampling


def test_gd_grid_sampling_semantics():
    p, W, a = random_problem(5, 2, 4, "square", "mean", 0.0, True)
    gd = GDStepper(p, W, a, 0.1)
    grid = np.array([0.0, 0.05, 0.1, 0.15, 0.151, 0.35, 10.0])
    res = gd.take_steps(3, grid)
    # 0.0 is the start (not in the segment); 0.05, 0.1 -> t=0.1; 0.15, 0.151 -> t=0.2
    np.testing.assert_array_equal(res.samples.t, [0.1, 2 * 0.1])
    res2 = gd.take_steps(1, grid)
    np.testing.assert_array_equal(res2.samples.t, [4 * 0.1])
    assert res2.samples.loss[0] == pytest.approx(loss_value(p, gd.W, gd.a), rel=1e-14)
    _, gW, _ = loss_grad(p, gd.W, gd.a)
    nr = np.sum(2 * np.sum(-gW * gd.W, axis=1))
    wn = np.linalg.norm(gd.W, axis=1)
    perp = -gW - (np.sum(-gW * gd.W, axis=1) / wn**2)[:, None] * gd.W
    dr = np.sum(np.linalg.norm(perp, axis=1) / wn)
    assert res2.samples.norm_rate[0] == pytest.approx(nr, rel=1e-10)
    assert res2.samples.dir_rate[0] == pytest.approx(dr, rel=1e-10)


def test_gf_grid_sampling_semantics():
    p = three_points()
    W0, a0 = balanced(10, 2, 1e-2, seed=6)
    gf = GFStepper(p, W0, a0, 1e-6, 1e-11)
    grid = np.r_[0.0, np.linspace(0.001, 3.0, 400), 3.0, 5.0]
    res = gf.advance(3.0, 10**6, grid)
    t = res.samples.t
    assert t[-1] == 3.0 and np.all(np.diff(t) > 0)
    assert len(t) <= gf.n_accepted and len(t) < 400  # several grid points share a step end
    # each in-segment grid point maps to the first sample time >= it
    g_in = grid[(grid > 0.0) & (grid <= 3.0)]
    idx = np.searchsorted(t, g_in, side="left")
    assert np.all(idx < len(t)) and set(idx) == set(range(len(t)))
    assert res.samples.loss[-1] == pytest.approx(loss_value(p, gf.W, gf.a), rel=1e-14)
    res2 = gf.advance(6.0, 10**6, grid)
    assert len(res2.samples.t) == 1 and res2.samples.t[0] >= 5.0


# --------------------------------------------------------------------------- divergence


@pytest.mark.parametrize("loss", ["square", "exponential"])
def test_gd_divergence_reported(loss):
    p, W, a = random_problem(20, 3, 10, loss, "sum", 0.0, True)
    gd = GDStepper(p, W * 10, a * 10, 10.0)
    res = gd.take_steps(10_000, np.linspace(0, 1e5, 50))
    assert res.status == "diverged"
    assert gd.k < 10_000
    bad = ~np.isfinite(np.r_[gd.W.ravel(), gd.a]) | (np.abs(np.r_[gd.W.ravel(), gd.a]) > 1e150)
    assert bad.any() or not np.isfinite(loss_value(p, gd.W, gd.a))


def test_gf_exponential_overflow_no_exception():
    p, W, a = random_problem(20, 3, 10, "exponential", "sum", 0.0, True)
    gf = GFStepper(p, -300 * W, 300 * a, 1e-6, 1e-9)
    res = gf.advance(1.0, 10**5, EMPTY)
    assert res.status == "diverged"


# --------------------------------------------------------------------------- determinism


def _run_pair(p, W, a):
    gd = GDStepper(p, W, a, 0.01)
    gd.take_steps(300, EMPTY)
    gf = GFStepper(p, W, a, 1e-6, 1e-9)
    gf.advance(3.0, 600, EMPTY)  # "ok" or "budget": either way it must be reproducible
    return gd.W.copy(), gd.a.copy(), gf.W.copy(), gf.a.copy()


@pytest.mark.parametrize("size", [(3, 2, 8), (100, 20, 30)])
def test_deterministic_across_threads(size):
    p, W, a = random_problem(*size, "logistic", "mean", 0.1, True)
    serial = _run_pair(p, W, a)
    out: list = [None, None]

    def work(i):
        out[i] = _run_pair(p, W, a)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for res in out:
        for x, y in zip(res, serial, strict=True):
            assert np.array_equal(x, y)


# --------------------------------------------------------------------------- one protocol


def test_gd_advance_by_time_and_budget_equals_take_steps():
    """advance(t_target, budget, grid) = take_steps to k = round(t/η), cut by the budget into
    any number of calls without changing the bits."""
    p, W, a = random_problem(5, 2, 4, "square", "mean", 0.0, True)
    grid = np.linspace(0.0, 3.0, 13)
    ref = GDStepper(p, W, a, 0.1)
    ref_s = ref.take_steps(30, grid)
    gd = GDStepper(p, W, a, 0.1)
    res = [gd.advance(3.0, 7, grid)]
    assert res[0].status == StepStatus.BUDGET and gd.k == 6  # first call: 1 eval + 6 steps
    while res[-1].status is StepStatus.BUDGET:
        res.append(gd.advance(3.0, 7, grid))
    assert res[-1].status is StepStatus.OK and gd.k == 30 and gd.t == ref.t
    assert np.array_equal(gd.W, ref.W) and np.array_equal(gd.a, ref.a)
    assert np.array_equal(np.concatenate([r.samples.loss for r in res]), ref_s.samples.loss)
    assert gd.advance(3.0, 7, grid).status is StepStatus.OK  # already there: nothing to do
    assert (gd.n_steps, gd.n_forced) == (30, 0)
    np.testing.assert_array_equal(gd.landing_times(np.array([0.01, 0.26, 0.3, 2.0])),
                                  np.array([1, 3, 20]) * 0.1)


def test_step_limits_and_the_method_table():
    p = three_points()
    W0, a0 = balanced(6, 2, 1e-2, seed=1)

    class It:
        lr, rtol, atol, max_steps = 0.01, 1e-6, None, 20

    gd = make_stepper("gd", p, W0, a0, It())
    gf = make_stepper("gf", p, W0, a0, It())
    assert isinstance(gd, GDStepper) and isinstance(gf, GFStepper)
    assert set(METHODS) == {"gd", "gf"}
    assert gd.advance(1.0, 10**6, EMPTY).status is StepStatus.MAX_STEPS and gd.n_steps == 20
    statuses = [gf.advance(50.0, 10**6, EMPTY).status for _ in range(4)]
    # the evaluation budget of the last allowed step may end a call first (3 per step)
    assert statuses[:2] in ([StepStatus.BUDGET, StepStatus.MAX_STEPS],
                            [StepStatus.MAX_STEPS, StepStatus.MAX_STEPS])
    assert statuses[2:] == [StepStatus.MAX_STEPS] * 2  # stays at its limit
    assert gf.t < 50.0 and gf.n_accepted + gf.n_rejected == 20
    assert gf.n_steps == gf.n_accepted and np.isfinite(gf.loss)
