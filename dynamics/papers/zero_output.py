"""The zero-output directional flow of balanced neurons — the ε → 0 limit of the alignment
phase — integrated exactly from a run's start. It is Min et al.'s eq. (4)–(5) and Chistikov et
al.'s yardstick (their §4.2: dα/dt = s‖α‖γ_{I₊(α)}, whose direction is this flow): the
λ-free / ε-free reference the claims compare a run with and whose crossing times decide
whether the theorems' smallness assumptions hold for the run's own scale.

While the outputs are ≈ 0 a balanced neuron (|a_j| = ‖w_j‖, s = sign a_j) turns as

    d w̄/dt = c s P_w̄ D(w̄),    D(w) = Σ_i b_i σ'(⟨w, x_i⟩) x_i,

with the field weights b_i = −R s_i ∂ℓ(0, y_i) (`theory.field_weights`). D is constant while
the activation pattern is, so between two pattern changes w̄ moves on the great circle through
D̂ — towards it when s = +1, away from it when s = −1 — with

    tan(θ(t)/2) = tan(θ₀/2) e^{−s κ t},    κ = c ‖D‖,    θ = ∠(w̄, D̂),

and the next change (⟨w̄, x_i⟩ = ⟨D̂, x_i⟩ cos θ + ⟨ê, x_i⟩ sin θ reaching 0, ê the unit
part of w̄ orthogonal to D̂) has a closed form: the flow is integrated event by event, exactly
to rounding, with no step size. A crossing is transversal when the new pattern's field carries
the neuron on across the kink (s⟨D_new, x_i⟩ has the crossing's sign, or D_new = 0: a neuron
that loses its last point stops there, dead); otherwise the neuron would slide along the kink
(a Filippov sliding mode, outside both papers' settings) and is stopped there, marked.

Bounded: at most `max_events` pattern changes per neuron and `work` multiply-adds in all
(O(n d) per neuron and event); a flow stopped by a bound says so in `stopped` ("not reached
within …", which the claims' gate reads as "not decided").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .solvers import WORK

_ANGLE_TOL = 1e-12
"""A kink closer than this (radians) to the neuron is the one it is on: not a next crossing."""


@dataclass(frozen=True)
class ZeroOutputFlow:
    """The flow from the start to `t_end` (∞: until no neuron changes pattern again).

    `U`: (m, d) unit directions at `t_end` (at ∞: ±D̂ of the final pattern); `active`: (m, n)
    pattern there; `last_change`: (m,) time of each neuron's last pattern change (0: none);
    `changes`: (m,) how many; `sliding`: (m,) stopped on a kink it would slide along;
    `stopped`: "" or why a bound stopped the flow (then `t_end` is where)."""

    t_end: float
    U: np.ndarray
    active: np.ndarray
    last_change: np.ndarray
    changes: np.ndarray
    sliding: np.ndarray
    stopped: str = ""

    @property
    def decided(self) -> bool:
        return not self.stopped


def _next_crossing(theta0: np.ndarray, ga: np.ndarray, gb: np.ndarray, toward: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """For each neuron (rows): the first angle θ* past θ₀ in the direction of motion
    (`toward` True: θ decreasing to 0, else increasing to π) where some ⟨w̄(θ), x_i⟩ =
    ga_i cos θ + gb_i sin θ changes sign, and a mask of the points crossing there. θ* is NaN
    when none does before the pole."""
    phi = np.arctan2(gb, ga)  # g_i(θ) = r_i cos(θ − φ_i): zeros at φ_i ± π/2 (+ kπ)
    zeros = np.stack([phi + np.pi / 2 + k * np.pi for k in (-2, -1, 0, 1)], axis=-1)
    th = theta0[:, None, None]
    ahead = np.where(toward[:, None, None], th - zeros, zeros - th)  # distance travelled
    r = np.hypot(ga, gb)[..., None]
    ok = (ahead > _ANGLE_TOL) & (r > 0)
    # the pole (θ = 0 towards, π away) is approached, never reached
    end = np.where(toward[:, None, None], zeros > 0, zeros < np.pi)
    ok &= end
    dist = np.where(ok, ahead, np.inf).min(axis=-1)  # (m, n)
    first = dist.min(axis=1)
    hit = np.isfinite(first)
    theta = np.where(hit, np.where(toward, theta0 - first, theta0 + first), np.nan)
    cross = hit[:, None] & (dist <= first[:, None] + _ANGLE_TOL)
    return theta, cross


def directional_flow(X: np.ndarray, b: np.ndarray, W0: np.ndarray, signs: np.ndarray,
                     c: float = 1.0, gamma: float = 0.0, t_end: float = np.inf,
                     max_events: int | None = None, work: float = WORK) -> ZeroOutputFlow:
    """Integrate d w̄_j/dt = c s_j P D(w̄_j) exactly (module docstring) from the directions of
    the rows of `W0` with signs `signs` (sign a_j(0)), to `t_end`. `b`: the field weights;
    `gamma`: the leaky slope (σ' = γ off the active side)."""
    X, b = np.asarray(X, float), np.asarray(b, float)
    W0 = np.atleast_2d(np.asarray(W0, float))
    m, d = W0.shape
    n = X.shape[0]
    max_events = 4 * n + 4 if max_events is None else max_events
    nrm = np.linalg.norm(W0, axis=1)
    U = np.divide(W0, nrm[:, None], out=np.zeros_like(W0), where=nrm[:, None] > 0)
    act = (U @ X.T) > 0
    s = np.where(np.asarray(signs, float) >= 0, 1.0, -1.0)
    t = np.zeros(m)
    last = np.zeros(m)
    changes = np.zeros(m, int)
    sliding = np.zeros(m, bool)
    live = nrm > 0
    stopped = ""
    spent = 0.0
    cost = 6.0 * n * d + 4.0 * d  # multiply-adds per neuron and event
    while live.any():
        if spent + live.sum() * cost > work:
            stopped = f"not reached within the work budget ({work:.2g} multiply-adds)"
            break
        idx = np.flatnonzero(live)
        spent += idx.size * cost
        A = act[idx]
        D = (np.where(A, 1.0, gamma) * b) @ X
        kappa = c * np.linalg.norm(D, axis=1)
        frozen = kappa <= 0
        Dh = np.divide(D, (kappa / c)[:, None], out=np.zeros_like(D), where=~frozen[:, None])
        u0 = U[idx]
        cos0 = np.clip(np.einsum("ij,ij->i", u0, Dh), -1.0, 1.0)
        e = u0 - cos0[:, None] * Dh
        sin0 = np.linalg.norm(e, axis=1)
        pole = frozen | (sin0 <= 1e-15)  # on ±D̂ (or no field): it stays
        eh = np.divide(e, sin0[:, None], out=np.zeros_like(e), where=~pole[:, None])
        theta0 = np.arctan2(sin0, cos0)
        toward = s[idx] > 0
        theta, cross = _next_crossing(theta0, Dh @ X.T, eh @ X.T, toward)
        u_0 = np.tan(theta0 / 2)
        with np.errstate(divide="ignore", invalid="ignore"):
            u_x = np.tan(theta / 2)
            dt = np.where(toward, np.log(u_0 / u_x), np.log(u_x / u_0)) / kappa
        dt = np.where(pole | np.isnan(theta), np.inf, dt)
        # neurons whose next change lies beyond the horizon (or never comes) stop there
        over = ~np.isfinite(dt) | (t[idx] + dt > t_end)
        if np.isfinite(t_end):
            with np.errstate(divide="ignore", invalid="ignore"):
                grow = np.exp(np.where(toward, -1.0, 1.0) * kappa * (t_end - t[idx]))
                th_h = 2 * np.arctan(u_0 * grow)
            th_h = np.where(pole, theta0, th_h)
        else:
            th_h = np.where(pole, theta0, np.where(toward, 0.0, np.pi))
        th_new = np.where(over, th_h, theta)
        U[idx] = np.cos(th_new)[:, None] * Dh + np.sin(th_new)[:, None] * eh
        U[idx[pole & over]] = u0[pole & over]
        done = idx[over]
        t[done] = t_end
        live[done] = False
        go = ~over
        if not go.any():
            break
        j = idx[go]
        t[j] = t[j] + dt[go]
        flip = cross[go]
        act[j] ^= flip
        last[j] = t[j]
        changes[j] += 1
        # transversal? the new field must carry the neuron on across each crossed kink
        Dn = (np.where(act[j], 1.0, gamma) * b) @ X
        normal = s[j][:, None] * (Dn @ X.T)  # s⟨D_new, x_i⟩
        entering = act[j] & flip
        leaving = ~act[j] & flip
        bad = ((entering & (normal <= 0)) | (leaving & (normal > 0))).any(axis=1)
        dead = ~act[j].any(axis=1) & (gamma == 0)
        bad &= ~dead
        sliding[j[bad]] = True
        live[j[bad]] = False
        live[j[changes[j] >= max_events]] = False
        if (changes[j] >= max_events).any() and not stopped:
            stopped = f"not reached within {max_events} pattern changes per neuron"
    end = float(t_end) if not stopped else float(t[live].min()) if live.any() else float(
        t_end)
    return ZeroOutputFlow(end, U, act, last, changes, sliding, stopped)
