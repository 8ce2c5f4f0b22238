"""Extremal vectors of the small-initialisation field: the critical points of
G(w) = Σ_i b_i σ(⟨w, x_i⟩) on the unit sphere (Clarke sense), with a cost known in advance.

Conventions as in `theory.py` (which re-exports everything here): σ(u) = max(u, γu),
σ'(0) = γ (0 for ReLU), D(w) = Σ_i b_i σ'(⟨w, x_i⟩) x_i and G(w) = ⟨w, D(w)⟩.

Cost. Work is counted in multiply-adds; one *pass* over the data (a product of one direction
with every x_i) costs n·d. Two methods:

- d = 2, exact: a sweep around the circle. The activation pattern changes only at the kinks
  θ = φ_i ± π/2 (φ_i the angle of x_i), so the arc vectors v (G = ⟨u(θ), v⟩ on an arc) follow
  from one sort and a cumulative sum of the ±(1 − γ) b_i x_i each kink adds, re-anchored to an
  exact sum every `_RESYNC` kinks (rounding then stays below 10⁻¹³·Σ|b_i|‖x_i‖). Time
  O(n log n), memory O(n), whatever n is.
- d > 2, search: `plan_search` fixes, before any work, how many starts, iterations, probe
  directions, faces and candidates fit `budget` multiply-adds at this (n, d) (`SearchPlan`,
  `SearchPlan.cost`). When even the smallest useful search over all n points exceeds the
  budget, it runs on a uniform sample of n_s points with weights b_i·n/n_s (so the sample's G
  is an unbiased estimate of G; the reported values are those estimates): a stated
  approximation (`SearchPlan.note`). Peak memory is about 8·budget/d bytes plus the sample.

Every large product is one NumPy/BLAS call, which releases the GIL; the Python loops between
them do small work each (one candidate, one face), so the interpreter is never held for long.
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Literal

import numpy as np

Kind = Literal["max", "min", "saddle"]
_TINY = 1e-300
_RESYNC = 256  # kinks between exact re-anchorings of the 2-D sweep's cumulative sum
_B_MAX = 16  # largest boundary set (points with ⟨w, x_i⟩ ≈ 0) a KKT snap considers
_NEAR_MAX = 16  # boundary points `classify` perturbs along (a sample when more)
_MIN_POINTS = 8  # smallest sample the d > 2 search runs on
_FACE_ITERS = 30  # fixed-point iterations per face
_CLASSIFY_DIRS = 96  # random tangent directions per classification (and as many in-face)


# ----------------------------------------------------------------------------- the field
def direction_field(W: np.ndarray, X: np.ndarray, b: np.ndarray, gamma: float) -> np.ndarray:
    """D(w) for each row w of W (shape (k, d) → (k, d)), σ'(0) = γ (so 0 for ReLU)."""
    W = np.atleast_2d(W)
    Z = W @ X.T
    S = np.where(Z > 0, 1.0, gamma)
    return (S * b) @ X


def G_value(W: np.ndarray, X: np.ndarray, b: np.ndarray, gamma: float) -> np.ndarray:
    """G(w) = Σ_i b_i σ(⟨w, x_i⟩) for each row w of W (positively 1-homogeneous)."""
    Z = np.atleast_2d(W) @ X.T
    return np.where(Z > 0, Z, gamma * Z) @ b


def _unit_rows(W: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(W, axis=-1, keepdims=True)
    return W / np.maximum(n, _TINY)


@dataclass(frozen=True)
class Extremal:
    """A critical point of G on the unit sphere.

    kind: "max" (attracts a_j > 0), "min" (attracts a_j < 0) or "saddle"; value = G(vector);
    boundary = indices i with ⟨vector, x_i⟩ = 0 (empty: inside an activation cone).
    """

    vector: np.ndarray
    kind: Kind
    value: float
    boundary: tuple[int, ...] = ()
    note: str = ""


# ----------------------------------------------------------------------------- the plan
@dataclass(frozen=True)
class SearchPlan:
    """What the d > 2 search does within its budget, fixed from (n, d, budget) alone.

    n_used: points searched (n, or a uniform sample); starts: ascent and descent starts (random
    directions first, then ±x_i); iters: (sub)gradient steps per start; probes: directions
    whose activation patterns give interior candidates ±f_u/‖f_u‖; faces: faces
    {⟨w, x_i⟩ = 0} (one or two points) searched; classified: candidates classified (the
    largest |G| first); cost: the multiply-adds this plan takes (≤ the budget)."""

    n: int
    d: int
    n_used: int
    starts: int
    iters: int
    probes: int
    faces: int
    classified: int
    cost: float

    @property
    def sampled(self) -> bool:
        return self.n_used < self.n

    def note(self) -> str:
        """The approximation in words ("" when every point is used)."""
        if not self.sampled:
            return ""
        return (f"extremal vectors from a uniform sample of {self.n_used:,} of the {self.n:,} "
                f"points (G estimated by n/{self.n_used:,} × the sample's sum), to keep the "
                "search within its compute budget")


def _passes(starts: int, iters: int, probes: int, faces: int, classified: int) -> float:
    """Passes over the data (n·d multiply-adds each) of a search with these counts: ascent and
    descent (2 products per step, both signs), KKT snaps of their end points (≤ 6 boundary sets,
    3 products each), probes (pattern, f_u and two checks), faces (8 rows, 2 products per
    iteration, plus 8 snaps) and G of every candidate, classifications (2·96 + 2·16 tangent
    directions)."""
    ascent = 4.0 * starts * iters + 2 * starts * 6 * 3
    probe = 4.0 * probes
    face = faces * (8 * 2 * _FACE_ITERS + 8 * 3)
    values = 2 * starts + 2 * probes + 8 * faces
    cls = classified * (2 * _CLASSIFY_DIRS + 2 * _NEAR_MAX + 4)
    return ascent + probe + face + values + cls


def plan_search(n: int, d: int, budget: float, *, n_starts: int = 48, iters: int = 300,
                max_faces: int = 120) -> SearchPlan:
    """The plan of the d > 2 search of n points in dimension d within `budget` multiply-adds
    (≈ 1 s per 10⁹ on one busy core). Shares: 40 % ascent, 10 % probes, 25 % faces, 20 %
    classification (the rest is the small linear algebra of the snaps). Counts shrink to fit,
    down to a floor (4 starts, 32 probes, 2 faces, 4 candidates); below that the points are
    sampled (at least 8), and then the iterations cut (at least 20). Only a budget below that
    floor (about 4·10⁷ multiply-adds at d = 1,024) is exceeded, and `cost` says by how much."""
    n, d = max(int(n), 1), max(int(d), 1)
    budget = max(float(budget), 1.0)
    floor = (4, 32, 2, 4)

    def snap(nu: int) -> float:  # SVD + lstsq of ≤ 6 boundary sets, per end point
        return 6 * 2 * min(_B_MAX, nu, d - 1) ** 2 * d

    def counts(nu: int, it: int) -> tuple[int, int, int, int]:
        p = float(nu) * d
        s_all = n_starts + 2 * nu
        p_all = max(8 * n_starts, 256) + 8 * min(nu, 400)
        f_all = nu + (nu * (nu - 1) // 2 if d >= 3 else 0)
        s = int(np.clip(0.40 * budget / (p * (4 * it + 38) + 2 * snap(nu)), floor[0], s_all))
        pr = int(np.clip(0.10 * budget / (p * 6), floor[1], p_all))
        f = int(np.clip(0.25 * budget / (p * (16 * _FACE_ITERS + 32) + 8 * snap(nu)), floor[2],
                        min(max_faces, f_all)))
        k = int(np.clip(0.20 * budget / (p * 240), floor[3], 64))
        return min(s, s_all), min(pr, p_all), min(f, f_all), k

    def cost(nu: int, it: int, c: tuple[int, int, int, int]) -> float:
        return (float(nu) * d * _passes(c[0], it, c[1], c[2], c[3])
                + (2 * c[0] + 8 * c[2]) * snap(nu))

    nu, it = n, max(int(iters), 1)
    c = counts(nu, it)
    while cost(nu, it, c) > budget and nu > _MIN_POINTS:  # sample fewer points first
        nu = max(_MIN_POINTS, min(nu - 1, int(nu * 0.8)))
        c = counts(nu, it)
    while cost(nu, it, c) > budget and it > 20:  # then take fewer steps
        it = max(20, it * 2 // 3)
        c = counts(nu, it)
    return SearchPlan(n=n, d=d, n_used=nu, starts=c[0], iters=it, probes=c[1], faces=c[2],
                      classified=c[3], cost=cost(nu, it, c))


# ----------------------------------------------------------------------------- linear algebra
def _span_basis(A: np.ndarray) -> np.ndarray:
    """Orthonormal basis (d, r) of the row span of A (k, d): from the SVD of the small k × d
    matrix (k·d·min(k, d) work), rank by a relative 1e-10 cut."""
    A = np.atleast_2d(A)
    if A.size == 0:
        return np.zeros((A.shape[1], 0))
    _, s, vt = np.linalg.svd(A, full_matrices=False)
    rank = int(np.sum(s > 1e-10 * max(s.max(initial=0.0), _TINY)))
    return vt[:rank].T


def _project_off(V: np.ndarray, R: np.ndarray) -> np.ndarray:
    """Rows of V projected onto the orthogonal complement of span(R) (R orthonormal columns)."""
    return V - (V @ R) @ R.T if R.shape[1] else V


# ----------------------------------------------------------------------------- classification
def classify(w: np.ndarray, X: np.ndarray, b: np.ndarray, gamma: float, *,
             delta: float = 1e-4, n_dirs: int = _CLASSIFY_DIRS, seed: int = 0) -> Kind:
    """Classify a critical point by perturbation: G(normalise(w + δu)) − G(w) for tangent
    directions u (random, and ± the projected normals of data points with ⟨w, x_i⟩ ≈ 0, at
    most 16 of them, plus random directions inside that face). All decreases → max, all
    increases → min, mixed → saddle. The tolerance is relative (1e-9 · δ² · Σ|b_i|‖x_i‖), far
    below the O(δ²)·|G| interior curvature term."""
    d = len(w)
    rng = np.random.default_rng(seed)
    U = rng.standard_normal((n_dirs, d))
    xn = np.linalg.norm(X, axis=1)
    near = np.flatnonzero(np.abs(X @ w) <= 1e-7 * np.maximum(xn, _TINY))
    if near.size > _NEAR_MAX:
        near = np.sort(rng.choice(near, _NEAR_MAX, replace=False))
    if near.size:
        U = np.vstack([U, X[near], -X[near]])
        R = _span_basis(X[near])  # directions inside the face as well
        if R.shape[1] < d:
            U = np.vstack([U, _project_off(rng.standard_normal((n_dirs, d)), R)])
    U = U - (U @ w)[:, None] * w
    U = _unit_rows(U[np.linalg.norm(U, axis=1) > 1e-12])
    g0 = float(G_value(w, X, b, gamma)[0])
    dG = G_value(_unit_rows(w + delta * U), X, b, gamma) - g0
    tol = 1e-9 * delta**2 * float(np.sum(np.abs(b) * xn))
    up, down = bool(np.any(dG > tol)), bool(np.any(dG < -tol))
    if down and not up:
        return "max"
    if up and not down:
        return "min"
    return "saddle"


def _kkt_point(w: np.ndarray, X: np.ndarray, b: np.ndarray, gamma: float,
               B: np.ndarray, sign: float, R: np.ndarray | None = None) -> np.ndarray | None:
    """Exact critical point near w whose boundary set is B (points with ⟨w, x_i⟩ = 0).

    With f = Σ_{i∉B} b_i σ'_i x_i (pattern of w off B) and P the projector onto span{x_i: i∈B}^⊥,
    w* = sign·Pf/‖Pf‖ is critical iff Σ_{i∈B} t_i b_i x_i = Pf − f (then g = G(w*)w* ∈ ∂G(w*))
    for some t ∈ [γ, 1]^B, and w* keeps the pattern of w off B. Returns w* or None. `R`: an
    orthonormal basis of span{x_i: i ∈ B} when the caller has it."""
    d = X.shape[1]
    z = X @ w
    off = np.ones(len(b), bool)
    off[B] = False
    s = np.where(z > 0, 1.0, gamma)
    f = ((s * b)[off]) @ X[off]
    R = _span_basis(X[B]) if R is None else R
    if R.shape[1] >= d:
        return None
    pf = f - R @ (R.T @ f) if R.shape[1] else f
    npf = np.linalg.norm(pf)
    if npf <= 1e-12 * max(float(np.sum(np.abs(b) * np.linalg.norm(X, axis=1))), _TINY):
        return None
    ws = sign * pf / npf
    zs = X @ ws
    scale = np.linalg.norm(X, axis=1)
    if np.any((zs[off] > 0) != (z[off] > 0)) or np.any(np.abs(zs[off]) <= 1e-9 * scale[off]):
        return None
    if B.size:
        A = (b[B][:, None] * X[B]).T  # (d, |B|)
        t, *_ = np.linalg.lstsq(A, pf - f, rcond=None)
        resid = float(np.linalg.norm(A @ t - (pf - f)))
        if resid > 1e-8 * max(float(np.linalg.norm(f)), _TINY):
            return None
        if np.any(t < gamma - 1e-8) or np.any(t > 1 + 1e-8):
            return None
    return ws


# ----------------------------------------------------------------------------- d = 2: exact
def _exact_2d(X: np.ndarray, b: np.ndarray, gamma: float) -> list[Extremal]:
    """d = 2, exactly: between kinks (angles ⊥ to data points) G(θ) = ⟨u(θ), v⟩ = ‖v‖cos(θ−θ_v)
    with v the arc's f_u; its critical points θ_v (max) and θ_v + π (min) count if inside the
    arc. A kink is a local max when G' ≥ 0 on its left and ≤ 0 on its right (min: reversed),
    not both zero. Arcs with v = 0 (G ≡ 0, the ReLU dead cone) and kinks bordering them are
    not reported: neurons there do not move. One sweep (see the module docstring)."""
    xn = np.linalg.norm(X, axis=1)
    idx = np.flatnonzero(xn > 0)
    if idx.size == 0:
        return []
    Xi, bi = X[idx], b[idx]
    m = len(idx)
    phi = np.arctan2(Xi[:, 1], Xi[:, 0])
    # events: ⟨u(θ), x_i⟩ turns positive at φ_i − π/2 (+1) and negative at φ_i + π/2 (−1)
    ang = np.mod(np.r_[phi - np.pi / 2, phi + np.pi / 2], 2 * np.pi)
    sgn = np.r_[np.ones(m), -np.ones(m)]
    who = np.r_[np.arange(m), np.arange(m)]
    order = np.argsort(ang, kind="stable")
    ang, sgn, who = ang[order], sgn[order], who[order]
    # put the origin in the widest gap, so that no group of coincident kinks wraps around
    gaps = np.diff(np.r_[ang, ang[0] + 2 * np.pi])
    j = int(np.argmax(gaps))
    origin = ang[j] + 0.5 * gaps[j]
    ang = np.mod(ang - origin, 2 * np.pi) + origin
    order = np.argsort(ang, kind="stable")
    ang, sgn, who = ang[order], sgn[order], who[order]
    first = np.r_[True, np.diff(ang) > 1e-12]  # kinks closer than 1e-12 merge
    starts = np.flatnonzero(first)
    K = ang[starts]
    nk = len(K)
    ends = np.r_[K[1:], K[0] + 2 * np.pi]
    mids = 0.5 * (K + ends)
    lengths = ends - K
    scale = float(np.sum(np.abs(b) * xn))
    ftol = 1e-12 * max(scale, _TINY)
    # arc vectors: exact at every _RESYNC-th arc, cumulative kink increments in between
    contrib = (sgn * (1.0 - gamma) * bi[who])[:, None] * Xi[who]
    inc = np.add.reduceat(contrib, starts, axis=0)  # what group k adds entering arc k
    V = np.empty((nk, 2))
    for a0 in range(0, nk, _RESYNC):
        a1 = min(a0 + _RESYNC, nk)
        u0 = np.array([np.cos(mids[a0]), np.sin(mids[a0])])
        v0 = (np.where(Xi @ u0 > 0, 1.0, gamma) * bi) @ Xi
        V[a0:a1] = v0 + np.r_[np.zeros((1, 2)), np.cumsum(inc[a0 + 1:a1], axis=0)]
    vnorm = np.linalg.norm(V, axis=1)
    live = vnorm > ftol
    out_vec: list[np.ndarray] = []
    out_kind: list[str] = []
    out_val: list[np.ndarray] = []
    out_at: list[np.ndarray] = []  # angle of a kink, NaN for an interior point
    # interior critical points θ_v (max) and θ_v + π (min) inside their arcs
    thv = np.arctan2(V[:, 1], V[:, 0])
    for shift, kind, sign in ((0.0, "max", 1.0), (np.pi, "min", -1.0)):
        rel = np.mod(thv + shift - K, 2 * np.pi)
        ok = live & (rel > 1e-9) & (rel < lengths - 1e-9)
        th = thv[ok] + shift
        out_vec.append(np.c_[np.cos(th), np.sin(th)])
        out_kind += [kind] * int(ok.sum())
        out_val.append(sign * vnorm[ok])
        out_at.append(np.full(int(ok.sum()), np.nan))
    # kinks: the one-sided slopes of G along the tangent, from the arcs on either side
    left = np.roll(np.arange(nk), 1)
    du = np.c_[-np.sin(K), np.cos(K)]
    dl = np.sum(du * V[left], axis=1)
    dr = np.sum(du * V, axis=1)
    dl[np.abs(dl) <= ftol] = 0.0
    dr[np.abs(dr) <= ftol] = 0.0
    ok = live & live[left] & ~((dl == 0.0) & (dr == 0.0))
    is_max = ok & (dl >= 0.0) & (dr <= 0.0)
    is_min = ok & ~is_max & (dl <= 0.0) & (dr >= 0.0)
    for sel, kind in ((is_max, "max"), (is_min, "min")):
        th = K[sel]
        w = np.c_[np.cos(th), np.sin(th)]
        out_vec.append(w)
        out_kind += [kind] * int(sel.sum())
        out_val.append(np.sum(w * V[sel], axis=1))  # G is continuous: ⟨u(θ_k), v_right⟩
        out_at.append(th)
    vecs = np.vstack(out_vec)
    vals = np.concatenate(out_val)
    at = np.concatenate(out_at)
    out = []
    for k in _dedupe_order(vecs, out_kind, vals):
        B: tuple[int, ...] = ()
        if np.isfinite(at[k]):  # the points whose kink is within 1e-9 of this one
            lo, hi = np.searchsorted(ang, [at[k] - 1e-9, at[k] + 1e-9 + 1e-12])
            B = tuple(sorted({int(i) for i in idx[who[lo:hi]]}))
        out.append(Extremal(vecs[k], out_kind[k], float(vals[k]), B))  # type: ignore[arg-type]
    return out


# ----------------------------------------------------------------------------- d > 2: search
def _dedupe_order(vecs: np.ndarray, kinds: list[str], vals: np.ndarray,
                  tol: float = 1e-7) -> list[int]:
    """Indices of the distinct vectors (a later one within `tol` of a kept one is dropped),
    ordered max, min, saddle, then by decreasing |G|. Rounded duplicates go in one step, the
    rest by comparing against the kept ones (few)."""
    if len(vecs) == 0:
        return []
    _, first = np.unique(np.round(vecs, 9), axis=0, return_index=True)
    kept: list[int] = []
    K = np.zeros((0, vecs.shape[1]))
    for k in np.sort(first):
        if K.shape[0] and float(np.min(np.linalg.norm(K - vecs[k], axis=1))) <= tol:
            continue
        kept.append(int(k))
        K = np.vstack([K, vecs[k]])
    rank = {"max": 0, "min": 1, "saddle": 2}
    return sorted(kept, key=lambda k: (rank[kinds[k]], -abs(float(vals[k]))))


def _ascent(W: np.ndarray, X: np.ndarray, b: np.ndarray, gamma: float, sign: float,
            iters: int) -> np.ndarray:
    """Projected (sub)gradient ascent (sign +1) or descent (−1) of G on the sphere, step
    η_k = 0.5/(S √(1+k/20)) with S = Σ|b_i|‖x_i‖ (a bound on ‖D‖), all starts at once."""
    S = max(float(np.sum(np.abs(b) * np.linalg.norm(X, axis=1))), _TINY)
    W = _unit_rows(W)
    for k in range(iters):
        D = direction_field(W, X, b, gamma)
        g = D - np.sum(D * W, axis=1, keepdims=True) * W
        W = _unit_rows(W + sign * (0.5 / (S * np.sqrt(1.0 + k / 20.0))) * g)
    return W


def _refine(w: np.ndarray, X: np.ndarray, b: np.ndarray, gamma: float,
            sign: float) -> np.ndarray | None:
    """Snap an approximate critical point to an exact one: try boundary sets B of points
    nearly orthogonal to w (growing thresholds; at most `_B_MAX` points), then the interior
    candidate."""
    xn = np.maximum(np.linalg.norm(X, axis=1), _TINY)
    cosz = np.abs(X @ w) / xn
    for thr in (0.0, 1e-6, 1e-4, 1e-3, 1e-2, 3e-2):
        B = np.flatnonzero(cosz <= thr) if thr > 0 else np.zeros(0, int)
        if B.size >= X.shape[1] or B.size > _B_MAX:
            continue
        ws = _kkt_point(w, X, b, gamma, B, sign)
        if ws is not None:
            return ws
    return None


def _pick_faces(n: int, d: int, count: int, rng: np.random.Generator) -> list[tuple[int, ...]]:
    """`count` faces drawn uniformly (without replacement, no list of all of them is made)
    among the n single points and, for d ≥ 3, the n(n−1)/2 pairs; in index order."""
    total = n + (n * (n - 1) // 2 if d >= 3 else 0)
    picks: range | list[int]
    if count >= total:
        picks = range(total)
    else:
        picks = sorted(int(k) for k in rng.choice(total, count, replace=False))
    faces: list[tuple[int, ...]] = []
    for k in picks:
        if k < n:
            faces.append((k,))
            continue
        k -= n  # pair number in the order (0,1), (0,2), …, (1,2), …
        i = int(n - 2 - math.floor(math.sqrt(-8 * k + 4 * n * (n - 1) - 7) / 2.0 - 0.5))
        j = int(k + i + 1 - n * (n - 1) // 2 + (n - i) * (n - i - 1) // 2)
        faces.append((i, j))
    return faces


def _face_search(X: np.ndarray, b: np.ndarray, gamma: float, faces: list[tuple[int, ...]],
                 starts_per_face: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Critical points on faces {⟨w, x_i⟩ = 0, i ∈ B}: fixed-point iteration
    w ← ±P_B f(pattern(w))/‖·‖ from starts in the face (± the coordinate direction least in
    span{x_i: i ∈ B}, projected, and random ones, all at once), then the exact KKT check of
    `_kkt_point` on the distinct end points."""
    d = X.shape[1]
    found: list[np.ndarray] = []
    for face in faces:
        Bi = np.array(face, dtype=int)
        R = _span_basis(X[Bi])
        if R.shape[1] >= d:
            continue
        e = np.zeros(d)
        e[int(np.argmin(np.sum(R * R, axis=1)))] = 1.0
        q = _unit_rows(_project_off(e[None, :], R))[0]
        W0 = np.vstack([q, -q, _project_off(rng.standard_normal((starts_per_face, d)), R)])
        W = _unit_rows(np.vstack([W0, W0]))
        sign = np.r_[np.ones(len(W0)), -np.ones(len(W0))][:, None]
        bb = b.copy()
        bb[Bi] = 0.0
        for _it in range(_FACE_ITERS):
            Z = W @ X.T
            F = (np.where(Z > 0, 1.0, gamma) * bb) @ X
            nxt = sign * _unit_rows(_project_off(F, R))
            if np.allclose(nxt, W, atol=1e-13):
                break
            W = nxt
        ends = np.unique(np.hstack([np.round(W, 12), sign]), axis=0)
        for row in ends:
            w, sgn = row[:-1], float(row[-1])
            if np.linalg.norm(w) < 0.5:
                continue
            ws = _kkt_point(w / np.linalg.norm(w), X, b, gamma, Bi, sgn, R)
            if ws is not None:
                found.append(ws)
    return found


def _probe_directions(X: np.ndarray, count: int, n_random: int,
                      rng: np.random.Generator) -> np.ndarray:
    """`count` probe directions: random ones (up to `n_random`, at least half), then, per data
    point, 4 directions inside its face ⟨w, x_i⟩ = 0 nudged 1e-7 to either side (tiny cones
    always border some face)."""
    d = X.shape[1]
    r = min(n_random, max(count - 8 * min(400, len(X)), (count + 1) // 2))
    probe = [_unit_rows(rng.standard_normal((max(r, 1), d)))]
    xn = np.linalg.norm(X, axis=1)
    rows = np.flatnonzero(xn > 0)[: max(0, (count - r) // 8)]
    if rows.size:
        xh = X[rows] / xn[rows, None]
        F0 = rng.standard_normal((rows.size, 4, d))
        F0 = _unit_rows(F0 - np.einsum("kjd,kd->kj", F0, xh)[:, :, None] * xh[:, None, :])
        off = 1e-7 * xh[:, None, :]
        probe.append(np.concatenate([F0 + off, F0 - off], axis=1).reshape(-1, d))
    return np.vstack(probe)


MEMO_ENTRIES = 64  # data sets whose extremal vectors are kept (per process)
_memo: OrderedDict[tuple[object, ...], tuple[Extremal, ...]] = OrderedDict()
_memo_lock = threading.Lock()


def extremal_vectors(X: np.ndarray, b: np.ndarray, gamma: float = 0.0, *,
                     n_starts: int = 48, iters: int = 300, max_faces: int = 120,
                     budget: float = 3e8, seed: int = 0,
                     method: Literal["auto", "exact", "search"] = "auto") -> list[Extremal]:
    """Critical points of G(w) = Σ_i b_i σ(⟨w, x_i⟩) on the unit sphere (`search`), kept per
    data, weights and settings (the last MEMO_ENTRIES): they depend on the data, the loss and γ
    only, so every run on the same data — another ε, width, seed or end time, a class that
    changes the width — reuses them. The search is deterministic (seeded), so a kept answer is
    the one it would give again; its vectors are read-only."""
    X = np.asarray(X, dtype=float)
    b = np.asarray(b, dtype=float)
    key = (_digest(X), X.shape, _digest(b), float(gamma), n_starts, iters, max_faces,
           float(budget), seed, method)
    with _memo_lock:
        got = _memo.get(key)
        if got is not None:
            _memo.move_to_end(key)
            return list(got)
    found = tuple(search(X, b, gamma, n_starts=n_starts, iters=iters, max_faces=max_faces,
                         budget=budget, seed=seed, method=method))
    for e in found:
        e.vector.setflags(write=False)
    with _memo_lock:
        _memo[key] = found
        while len(_memo) > MEMO_ENTRIES:
            _memo.popitem(last=False)
    return list(found)


def _digest(a: np.ndarray) -> str:
    """sha256 of an array's values, without a copy of it (a non-contiguous one a block of
    rows at a time)."""
    h = hashlib.sha256()
    if a.flags.c_contiguous:
        h.update(a.data.cast("B"))
    else:
        for lo in range(0, a.shape[0], 4096):
            h.update(np.ascontiguousarray(a[lo:lo + 4096]).tobytes())
    return h.hexdigest()


def forget() -> None:
    """Drop every kept answer (benchmarks measure a data set met for the first time)."""
    with _memo_lock:
        _memo.clear()


def search(X: np.ndarray, b: np.ndarray, gamma: float = 0.0, *,
           n_starts: int = 48, iters: int = 300, max_faces: int = 120,
           budget: float = 3e8, seed: int = 0,
           method: Literal["auto", "exact", "search"] = "auto") -> list[Extremal]:
    """Critical points of G(w) = Σ_i b_i σ(⟨w, x_i⟩) on the unit sphere (Clarke sense).

    d = 2 ("exact"): the piecewise-sinusoidal sweep (`_exact_2d`), boundary kinks included,
    O(n log n) whatever the budget. d > 2 ("search"): the plan of `plan_search` for `budget`
    multiply-adds (≈ 1 s per 10⁹): multi-start projected subgradient ascent (maxima) and
    descent (minima) from random directions and ±x_i, each end point snapped to an exact KKT
    point (interior ±f_u/‖f_u‖ or on a face ⟨w, x_i⟩ = 0 with multipliers t_i ∈ [γ, 1]); the
    interior candidates of the activation patterns met by probe directions; a fixed-point
    search on sampled faces of one or two data points (this finds saddles, which ascent cannot);
    de-duplicated and the largest |G| classified by perturbation (`classify`). In high
    dimension the search is partial; for large n·d it runs on a sample (`SearchPlan.note`).
    Critical points with G = 0 in the ReLU dead cone are not reported.
    """
    X = np.asarray(X, dtype=float)
    b = np.asarray(b, dtype=float)
    n, d = X.shape
    if method == "exact" or (method == "auto" and d == 2):
        if d != 2:
            raise ValueError("the exact method needs d = 2")
        return _exact_2d(X, b, gamma)
    plan = plan_search(n, d, budget, n_starts=n_starts, iters=iters, max_faces=max_faces)
    rng = np.random.default_rng(seed)
    sample = np.arange(n)
    if plan.sampled:
        sample = np.sort(rng.choice(n, plan.n_used, replace=False))
        X, b = X[sample], b[sample] * (n / plan.n_used)
    nz = X[np.linalg.norm(X, axis=1) > 0]
    starts = np.vstack([rng.standard_normal((n_starts, d)), nz, -nz])[: plan.starts]
    vecs: list[np.ndarray] = []
    for sign in (1.0, -1.0):
        for w in _ascent(starts, X, b, gamma, sign, plan.iters):
            ws = _refine(w, X, b, gamma, sign)
            if ws is not None:
                vecs.append(ws)
    # interior candidates ±f_u/‖f_u‖ of the activation patterns met by the probes
    probe = _probe_directions(X, plan.probes, max(8 * n_starts, 256), rng)
    pats = np.unique(probe @ X.T > 0, axis=0)
    F = (np.where(pats, 1.0, gamma) * b) @ X
    nf = np.linalg.norm(F, axis=1)
    keep = nf > _TINY
    for sign in (1.0, -1.0):
        Ws = sign * F[keep] / nf[keep, None]
        Z = Ws @ X.T
        ok = np.all((Z > 0) == pats[keep], axis=1) & np.all(np.abs(Z) > 0, axis=1)
        vecs += list(Ws[ok])
    vecs += _face_search(X, b, gamma, _pick_faces(len(X), d, plan.faces, rng), 2, rng)
    if not vecs:
        return []
    C = np.vstack(vecs)
    _, first = np.unique(np.round(C, 9), axis=0, return_index=True)
    C = C[np.sort(first)]
    vals = G_value(C, X, b, gamma)
    scale = float(np.sum(np.abs(b) * np.linalg.norm(X, axis=1)))
    live = ~((np.abs(vals) <= 1e-12 * max(scale, _TINY)) & (gamma == 0.0))
    C, vals = C[live], vals[live]
    top = np.argsort(-np.abs(vals), kind="stable")[: plan.classified]
    kinds: list[str] = []
    for k in top:
        kinds.append(classify(C[k], X, b, gamma))
    C, vals = C[top], vals[top]
    xs = np.maximum(np.linalg.norm(X, axis=1), _TINY)
    out = []
    for k in _dedupe_order(C, kinds, vals):
        B = tuple(int(sample[i]) for i in np.flatnonzero(np.abs(X @ C[k]) <= 1e-9 * xs))
        out.append(Extremal(C[k], kinds[k], float(vals[k]), B))  # type: ignore[arg-type]
    return out


def nearest_extremal(w: np.ndarray, extremals: list[Extremal], kind: Kind
                     ) -> tuple[Extremal | None, float]:
    """The extremal vector of `kind` closest in angle to w, and that angle (degrees)."""
    best, ang = None, float("inf")
    wn = w / max(np.linalg.norm(w), _TINY)
    for e in extremals:
        if e.kind != kind:
            continue
        a = float(np.degrees(np.arccos(np.clip(wn @ e.vector, -1.0, 1.0))))
        if a < ang:
            best, ang = e, a
    return best, ang


__all__ = ["Extremal", "G_value", "Kind", "SearchPlan", "classify", "direction_field",
           "extremal_vectors", "forget", "nearest_extremal", "plan_search", "search"]
