"""The zero-output directional flow (`dynamics.papers.zero_output`): its event-by-event exact
integration against the closed form on one cone and against an independent fine-step
integration of d w̄/dt = c s P D(w̄) across kinks; sliding detected; bounds that say so."""

from __future__ import annotations

import numpy as np
import pytest

from dynamics.papers.zero_output import directional_flow


def test_one_cone_follows_the_closed_form():
    """One point, a neuron active on it: w̄ turns on the great circle to x̂ with
    tan(θ/2) = tan(θ₀/2) e^{−c‖b x‖ t} (towards, s = +1) or e^{+…} (away, s = −1)."""
    x = np.array([[2.0, 0.0, 0.0]])
    w0 = np.array([[np.cos(1.0), np.sin(1.0), 0.0]])
    for s, sign in ((1.0, -1.0), (-1.0, 1.0)):
        fl = directional_flow(x, np.array([0.5]), w0, np.array([s]), c=1.5, t_end=0.3)
        theta = np.arctan2(fl.U[0, 1], fl.U[0, 0])
        kappa = 1.5 * 0.5 * 2.0
        assert theta == pytest.approx(2 * np.arctan(np.tan(0.5) * np.exp(sign * kappa * 0.3)),
                                      rel=1e-12)
        assert fl.changes[0] == 0 and fl.t_end == 0.3


def _reference(X, b, W0, s, c, t_end, dt=4e-4):
    """Independent reference: classic RK4 on the unit sphere with the field frozen at the
    step's start pattern, renormalised each step; the first step whose pattern differs
    from the last is a crossing (times to ~dt)."""
    U = W0 / np.linalg.norm(W0, axis=1, keepdims=True)
    last = np.zeros(len(U))
    pat = (U @ X.T) > 0

    def f(V, P):
        D = (P * b) @ X
        return c * s[:, None] * (D - np.einsum("ij,ij->i", V, D)[:, None] * V)

    t = 0.0
    while t < t_end - 1e-15:
        k1 = f(U, pat)
        k2 = f(U + dt / 2 * k1, pat)
        k3 = f(U + dt / 2 * k2, pat)
        k4 = f(U + dt * k3, pat)
        U = U + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        U /= np.linalg.norm(U, axis=1, keepdims=True)
        t += dt
        new = (U @ X.T) > 0
        changed = (new != pat).any(axis=1)
        last[changed] = t
        pat = new
    return U, pat, last


def test_crossings_agree_with_a_fine_step_integration():
    """Random acute data in R³ (every pair positively correlated, like Chistikov et al.'s
    inputs): positive neurons gain points, negative ones lose them; the exact flow's
    patterns, last-crossing times and directions match a fine RK4 run."""
    rng = np.random.default_rng(7)
    X = np.array([1.0, 0.0, 0.0]) + 0.45 * rng.standard_normal((5, 3))
    assert (X @ X.T > 0).all()
    y = np.abs(X[:, 0])
    b = y / len(y)
    W0 = rng.standard_normal((12, 3))
    s = np.where(np.arange(12) % 2, -1.0, 1.0)
    fl = directional_flow(X, b, W0, s, c=1.0, t_end=3.0)
    U, pat, last = _reference(X, b, W0, s, 1.0, 3.0)
    assert not fl.sliding.any() and fl.decided
    assert (fl.active == pat).all()
    assert fl.changes.sum() > 10  # the test crosses many kinks
    # the reference's error is O(dt) per kink crossed (its field is frozen over a step)
    np.testing.assert_allclose(fl.last_change, last, atol=1e-3)
    np.testing.assert_allclose(fl.U, U, atol=1e-3)
    # the flow to ∞: positive neurons that saw a point end active on every point, negatives
    # on none (Chistikov et al.'s Lemmas 4-5 for this flow)
    inf = directional_flow(X, b, W0, s)
    seen = ((W0 @ X.T) > 0).any(axis=1)
    assert inf.active[seen & (s > 0)].all() and not inf.active[s < 0].any()
    assert np.all(inf.last_change >= fl.last_change - 1e-12)


def test_a_neuron_that_would_slide_is_stopped_and_marked():
    """Two inputs at 120°: a negative neuron at 17° leaving x₁ (at 0°) reaches the kink of
    x₂ (at 30°, x₂ being obtuse to x₁), whose own field then pushes it back out — a sliding
    mode, not a crossing. Started at −17° it leaves x₁ the other way and dies at −90°."""
    X = np.array([[1.0, 0.0], [np.cos(2 * np.pi / 3), np.sin(2 * np.pi / 3)]])
    w0 = np.array([[np.cos(0.3), np.sin(0.3)], [np.cos(-0.3), np.sin(-0.3)]])
    fl = directional_flow(X, np.array([1.0, 1.0]), w0, np.array([-1.0, -1.0]))
    assert fl.sliding.tolist() == [True, False] and fl.changes.tolist() == [1, 1]
    assert np.degrees(np.arctan2(fl.U[0, 1], fl.U[0, 0])) == pytest.approx(30.0)
    assert not fl.active[1].any() and fl.U[1] == pytest.approx([0.0, -1.0])


def test_bounds_stop_the_flow_and_say_so():
    rng = np.random.default_rng(3)
    X = np.array([1.0, 0.0, 0.0]) + 0.45 * rng.standard_normal((5, 3))
    W0 = rng.standard_normal((8, 3))
    s = np.ones(8)
    b = np.ones(5) / 5
    tight = directional_flow(X, b, W0, s, work=100.0)
    assert not tight.decided and "not reached within the work budget" in tight.stopped
    few = directional_flow(X, b, W0, s, max_events=1)
    assert "not reached within 1 pattern changes" in few.stopped
    full = directional_flow(X, b, W0, s)
    assert full.decided and full.changes.max() > 1
