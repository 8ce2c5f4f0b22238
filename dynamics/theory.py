"""Theory for small initialisation: the direction field, extremal vectors, and each paper's
predicted directions, times and limits, computed from the data (never typed in).

Conventions (as in `core.py`): h(x) = c Σ_j a_j σ(⟨w_j, x⟩), σ(u) = max(u, γu),
σ'(u) = 1 if u > 0 else γ; L = R Σ_i s_i ℓ(h_i, y_i) with R = 1/n ("mean") or 1 ("sum").
Time is our gradient-flow time t (GD: t = kη).

**Direction field at θ = 0.** With b_i := −R s_i ∂_ŷℓ(0, y_i) (∂_ŷℓ(0, y) = −y for square,
−y/2 for logistic, −y for exponential)::

    D(w) = Σ_i b_i σ'(⟨w, x_i⟩) x_i,     G(w) = ⟨w, D(w)⟩ = Σ_i b_i σ(⟨w, x_i⟩).

While the outputs are ≈ 0, dw_j/dt = c a_j D(w_j), so d w̄_j/dt = c (a_j/‖w_j‖) P_{w̄_j} D(w̄_j)
and d ln‖w_j‖/dt = c (a_j/‖w_j‖) G(w̄_j). For a balanced start (|a_j| = ‖w_j‖) the time unit of
the alignment is 1/c: neurons with a_j > 0 do a (Clarke) gradient ascent of G on the sphere,
neurons with a_j < 0 a descent. With a frozen output layer (Wang & Ma) the angular speed is
c |a_j| ‖P D‖ / ‖w_j‖, large while ‖w_j‖ is small.

**Extremal vectors** are the Clarke-critical points of G on the unit sphere: w with some
g ∈ ∂G(w) parallel to w (then g = G(w) w). G is linear, G = ⟨w, f_u⟩, inside each activation
cone u, so interior critical points are ±f_u/‖f_u‖ lying in u (a strict max if +, min if −);
the others sit on cone boundaries {⟨w, x_i⟩ = 0}, where ∂G adds Σ_{i∈B} t_i b_i x_i, t_i ∈ [γ, 1].
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from .config import Config
from .data import Dataset, build_dataset, signal_sums

Kind = Literal["max", "min", "saddle"]
_TINY = 1e-300


# ----------------------------------------------------------------------------- direction field
def loss_slope_at_zero(loss: str, y: np.ndarray) -> np.ndarray:
    """∂_ŷ ℓ(0, y): square −y; logistic −y/2; exponential −y."""
    y = np.asarray(y, dtype=float)
    if loss == "square":
        return -y
    if loss == "logistic":
        return -0.5 * y
    if loss == "exponential":
        return -y
    raise ValueError(f"unknown loss {loss!r}")


def field_weights(y: np.ndarray, sw: np.ndarray, loss: str, reduction: str) -> np.ndarray:
    """b_i = −R s_i ∂_ŷℓ(0, y_i), R = 1/n (mean) or 1 (sum): D(w) = Σ_i b_i σ'(⟨w, x_i⟩) x_i."""
    y = np.asarray(y, dtype=float)
    R = 1.0 / len(y) if reduction == "mean" else 1.0
    return -R * np.asarray(sw, dtype=float) * loss_slope_at_zero(loss, y)


def config_field(config: Config, ds: Dataset | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(X, b) of the config's small-initialisation field (the output scale c is NOT included:
    the true initial velocity is c a_j D(w_j))."""
    ds = build_dataset(config) if ds is None else ds
    return ds.X, field_weights(ds.y, ds.sw, config.loss.kind, config.loss.reduction)


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


# ----------------------------------------------------------------------------- extremal vectors
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


def classify(w: np.ndarray, X: np.ndarray, b: np.ndarray, gamma: float, *,
             delta: float = 1e-4, n_dirs: int = 96, seed: int = 0) -> Kind:
    """Classify a critical point by perturbation: G(normalise(w + δu)) − G(w) for tangent
    directions u (random, and ± the projected normals of data points with ⟨w, x_i⟩ ≈ 0).
    All decreases → max, all increases → min, mixed → saddle. The tolerance is relative
    (1e-9 · δ² · Σ|b_i|‖x_i‖), far below the O(δ²)·|G| interior curvature term."""
    d = len(w)
    rng = np.random.default_rng(seed)
    U = rng.standard_normal((n_dirs, d))
    xn = np.linalg.norm(X, axis=1)
    near = np.flatnonzero(np.abs(X @ w) <= 1e-7 * np.maximum(xn, _TINY))
    if near.size:
        U = np.vstack([U, X[near], -X[near]])
        # directions inside the face as well (along which G may rise or fall)
        Q = _complement_basis(X[near], d)
        if Q.shape[1]:
            U = np.vstack([U, (rng.standard_normal((n_dirs, Q.shape[1])) @ Q.T)])
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


def _complement_basis(A: np.ndarray, d: int) -> np.ndarray:
    """Orthonormal basis (d, k) of the orthogonal complement of the row span of A."""
    if A.size == 0:
        return np.eye(d)
    _, s, vt = np.linalg.svd(np.atleast_2d(A), full_matrices=True)
    rank = int(np.sum(s > 1e-10 * max(s.max(initial=0.0), _TINY)))
    return vt[rank:].T


def _kkt_point(w: np.ndarray, X: np.ndarray, b: np.ndarray, gamma: float,
               B: np.ndarray, sign: float, Q: np.ndarray | None = None) -> np.ndarray | None:
    """Exact critical point near w whose boundary set is B (points with ⟨w, x_i⟩ = 0).

    With f = Σ_{i∉B} b_i σ'_i x_i (pattern of w off B) and P the projector onto span{x_i: i∈B}^⊥,
    w* = sign·Pf/‖Pf‖ is critical iff Σ_{i∈B} t_i b_i x_i = Pf − f (then g = G(w*)w* ∈ ∂G(w*))
    for some t ∈ [γ, 1]^B, and w* keeps the pattern of w off B. Returns w* or None."""
    d = X.shape[1]
    z = X @ w
    off = np.ones(len(b), bool)
    off[B] = False
    s = np.where(z > 0, 1.0, gamma)
    f = ((s * b)[off]) @ X[off]
    Q = _complement_basis(X[B], d) if Q is None else Q
    if Q.shape[1] == 0:
        return None
    pf = Q @ (Q.T @ f)
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


def _exact_2d(X: np.ndarray, b: np.ndarray, gamma: float) -> list[Extremal]:
    """d = 2, exactly: between kinks (angles ⊥ to data points) G(θ) = ⟨u(θ), v⟩ = ‖v‖cos(θ−θ_v)
    with v the arc's f_u; its critical points θ_v (max) and θ_v + π (min) count if inside the
    arc. A kink is a local max when G' ≥ 0 on its left and ≤ 0 on its right (min: reversed),
    not both zero. Arcs with v = 0 (G ≡ 0, the ReLU dead cone) and kinks bordering them are
    not reported: neurons there do not move."""
    keep = np.linalg.norm(X, axis=1) > 0
    idx = np.flatnonzero(keep)
    if idx.size == 0:
        return []
    phi = np.arctan2(X[idx, 1], X[idx, 0])
    kinks = np.mod(np.r_[phi + np.pi / 2, phi - np.pi / 2], 2 * np.pi)
    kinks = np.sort(kinks)
    merged = [kinks[0]]
    for k in kinks[1:]:
        if k - merged[-1] > 1e-12:
            merged.append(k)
    if len(merged) > 1 and merged[0] + 2 * np.pi - merged[-1] <= 1e-12:
        merged.pop()
    K = np.array(merged)
    nk = len(K)
    scale = float(np.sum(np.abs(b) * np.linalg.norm(X, axis=1)))
    ftol = 1e-12 * max(scale, _TINY)

    def u(th: float) -> np.ndarray:
        return np.array([np.cos(th), np.sin(th)])

    arcs = []  # (start, length, v)
    for k in range(nk):
        a0 = K[k]
        a1 = K[(k + 1) % nk] + (2 * np.pi if k + 1 == nk else 0.0)
        mid = 0.5 * (a0 + a1)
        z = X @ u(mid)
        v = (np.where(z > 0, 1.0, gamma) * b) @ X
        arcs.append((a0, a1 - a0, v))
    out: list[Extremal] = []
    for a0, length, v in arcs:
        nv = np.linalg.norm(v)
        if nv <= ftol:
            continue
        thv = np.arctan2(v[1], v[0])
        turns: tuple[tuple[float, Kind], ...] = ((thv, "max"), (thv + np.pi, "min"))
        for th, kind in turns:
            rel = np.mod(th - a0, 2 * np.pi)
            if 1e-9 < rel < length - 1e-9:
                w = u(th)
                out.append(Extremal(w, kind, float(G_value(w, X, b, gamma)[0])))
    for k in range(nk):
        vl = arcs[k - 1][2]
        vr = arcs[k][2]
        if np.linalg.norm(vl) <= ftol or np.linalg.norm(vr) <= ftol:
            continue
        th = K[k]
        du = np.array([-np.sin(th), np.cos(th)])
        dl, dr = float(du @ vl), float(du @ vr)
        dl = 0.0 if abs(dl) <= ftol else dl
        dr = 0.0 if abs(dr) <= ftol else dr
        if dl == 0.0 and dr == 0.0:
            continue
        w = u(th)
        B = tuple(int(i) for i in np.flatnonzero(np.abs(X @ w) <= 1e-9 * np.linalg.norm(X, axis=1)))
        if dl >= 0.0 and dr <= 0.0:
            out.append(Extremal(w, "max", float(G_value(w, X, b, gamma)[0]), B))
        elif dl <= 0.0 and dr >= 0.0:
            out.append(Extremal(w, "min", float(G_value(w, X, b, gamma)[0]), B))
    return _dedupe(out)


def _dedupe(items: list[Extremal], tol: float = 1e-7) -> list[Extremal]:
    out: list[Extremal] = []
    for e in items:
        if all(np.linalg.norm(e.vector - o.vector) > tol for o in out):
            out.append(e)
    order = {"max": 0, "min": 1, "saddle": 2}
    return sorted(out, key=lambda e: (order[e.kind], -abs(e.value)))


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
    nearly orthogonal to w (growing thresholds), then the interior candidate."""
    xn = np.maximum(np.linalg.norm(X, axis=1), _TINY)
    cosz = np.abs(X @ w) / xn
    for thr in (0.0, 1e-6, 1e-4, 1e-3, 1e-2, 3e-2):
        B = np.flatnonzero(cosz <= thr) if thr > 0 else np.zeros(0, int)
        if B.size >= X.shape[1]:
            continue
        ws = _kkt_point(w, X, b, gamma, B, sign)
        if ws is not None:
            return ws
    return None


def _face_search(X: np.ndarray, b: np.ndarray, gamma: float, faces: list[tuple[int, ...]],
                 starts_per_face: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Critical points on faces {⟨w, x_i⟩ = 0, i ∈ B}: fixed-point iteration
    w ← ±P_B f(pattern(w))/‖·‖ from starts in the face (±first basis vector and random ones,
    all at once), then the exact KKT check of `_kkt_point` on the distinct end points."""
    d = X.shape[1]
    found: list[np.ndarray] = []
    for B in faces:
        Bi = np.array(B, dtype=int)
        Q = _complement_basis(X[Bi], d)
        if Q.shape[1] == 0:
            continue
        W0 = np.vstack([Q[:, 0], -Q[:, 0], (rng.standard_normal((starts_per_face, Q.shape[1]))
                                            @ Q.T)])
        W = _unit_rows(np.vstack([W0, W0]))
        sign = np.r_[np.ones(len(W0)), -np.ones(len(W0))][:, None]
        bb = b.copy()
        bb[Bi] = 0.0
        for _it in range(30):
            Z = W @ X.T
            F = (np.where(Z > 0, 1.0, gamma) * bb) @ X
            PF = (F @ Q) @ Q.T
            nxt = sign * _unit_rows(PF)
            if np.allclose(nxt, W, atol=1e-13):
                break
            W = nxt
        ends = np.unique(np.hstack([np.round(W, 12), sign]), axis=0)
        for row in ends:
            w, sgn = row[:-1], float(row[-1])
            if np.linalg.norm(w) < 0.5:
                continue
            ws = _kkt_point(w / np.linalg.norm(w), X, b, gamma, Bi, sgn, Q)
            if ws is not None:
                found.append(ws)
    return found


def extremal_vectors(X: np.ndarray, b: np.ndarray, gamma: float = 0.0, *,
                     n_starts: int = 48, iters: int = 300, max_faces: int = 120,
                     budget: float = 3e8, seed: int = 0,
                     method: Literal["auto", "exact", "search"] = "auto") -> list[Extremal]:
    """Critical points of G(w) = Σ_i b_i σ(⟨w, x_i⟩) on the unit sphere (Clarke sense).

    d = 2 ("exact"): piecewise-sinusoidal analysis (see `_exact_2d`), boundary kinks included.
    d > 2 ("search"): multi-start projected subgradient ascent (maxima) and descent (minima)
    from random directions and ±x_i, each endpoint snapped to an exact KKT point (interior
    ±f_u/‖f_u‖ or on a face ⟨w, x_i⟩ = 0 with multipliers t_i ∈ [γ, 1]); plus a fixed-point
    search on faces of one or two data points (this finds saddles, which ascent cannot);
    de-duplicated and classified by perturbation (`classify`). `budget` caps the work
    (multiply-adds, ≈ 1 s per 1e9): the number of starts (random first, then ±x_i) and of faces
    shrink to fit, so in high dimension the search is partial. Critical points with G = 0 in
    the ReLU dead cone are not reported.
    """
    X = np.asarray(X, dtype=float)
    b = np.asarray(b, dtype=float)
    d = X.shape[1]
    if method == "exact" or (method == "auto" and d == 2):
        if d != 2:
            raise ValueError("the exact method needs d = 2")
        return _exact_2d(X, b, gamma)
    rng = np.random.default_rng(seed)
    n = X.shape[0]
    nz = X[np.linalg.norm(X, axis=1) > 0]
    starts = np.vstack([rng.standard_normal((n_starts, d)), nz, -nz]) if nz.size else \
        rng.standard_normal((n_starts, d))
    per_start = 4.0 * iters * n * d  # two signs, forward and back products
    starts = starts[: int(np.clip(0.5 * budget / per_start, 4, len(starts)))]
    per_face = 8.0 * (30.0 * n * d + d**3) + 2e6  # + Python overhead (≈ 2 ms)
    max_faces = int(min(max_faces, 0.3 * budget / per_face))
    cands: list[tuple[np.ndarray, float]] = []
    for sign in (1.0, -1.0):
        W = _ascent(starts, X, b, gamma, sign, iters)
        for w in W:
            ws = _refine(w, X, b, gamma, sign)
            if ws is not None:
                cands.append((ws, sign))
    # interior candidates ±f_u/‖f_u‖ of the activation patterns u met by random directions
    probe = [_unit_rows(rng.standard_normal((max(8 * n_starts, 256), d)))]
    # and points just off each face ⟨w, x_i⟩ = 0 (tiny cones always border some face)
    xn = np.linalg.norm(X, axis=1)
    for i in np.flatnonzero(xn > 0)[:400]:
        Q = _complement_basis(X[i:i + 1], d)
        F0 = np.vstack([Q[:, 0], -Q[:, 0], rng.standard_normal((2, Q.shape[1])) @ Q.T])
        F0 = _unit_rows(F0)
        off = 1e-7 * X[i] / xn[i]
        probe.append(np.vstack([F0 + off, F0 - off]))
    pats = np.unique(np.vstack(probe) @ X.T > 0, axis=0)
    F = (np.where(pats, 1.0, gamma) * b) @ X
    for u_pat, f in zip(pats, F, strict=True):
        nf = np.linalg.norm(f)
        if nf <= _TINY:
            continue
        for sign in (1.0, -1.0):
            ws = sign * f / nf
            if np.array_equal(X @ ws > 0, u_pat) and np.all(np.abs(X @ ws) > 0):
                cands.append((ws, sign))
    faces: list[tuple[int, ...]] = [(i,) for i in range(n)]
    if d >= 3:
        faces += [(i, j) for i in range(n) for j in range(i + 1, n)]
    if len(faces) > max_faces:
        pick = rng.choice(len(faces), max(max_faces, 0), replace=False)
        faces = [faces[k] for k in sorted(pick)]
    for ws in _face_search(X, b, gamma, faces, 2, rng):
        cands.append((ws, 0.0))
    out: list[Extremal] = []
    scale = float(np.sum(np.abs(b) * np.linalg.norm(X, axis=1)))
    uniq: list[np.ndarray] = []
    for ws, _s in cands:
        if all(np.linalg.norm(ws - o) > 1e-7 for o in uniq):
            uniq.append(ws)
    for ws in uniq:
        val = float(G_value(ws, X, b, gamma)[0])
        if abs(val) <= 1e-12 * max(scale, _TINY) and gamma == 0.0:
            continue
        kind = classify(ws, X, b, gamma)
        B = tuple(int(i) for i in np.flatnonzero(
            np.abs(X @ ws) <= 1e-9 * np.maximum(np.linalg.norm(X, axis=1), _TINY)))
        out.append(Extremal(ws, kind, val, B))
    return _dedupe(out)


def extremal_for_config(config: Config, ds: Dataset | None = None, **kw: object
                        ) -> list[Extremal]:
    """Extremal vectors of the config's data, loss, reduction and leaky slope γ."""
    X, b = config_field(config, ds)
    return extremal_vectors(X, b, float(config.model.gamma), **kw)  # type: ignore[arg-type]


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


# ----------------------------------------------------------------------------- scale maps
def entry_std(config: Config, d: int) -> float:
    """Per-entry std σ₀ of the first layer at t = 0 (see init.py)."""
    m, s = config.model.width, config.init.scale
    return {"none": s, "sqrt_m": s / np.sqrt(m), "sqrt_dm": s / np.sqrt(d * m)}[
        config.init.normalisation]


def time_per_sum_unit(config: Config, n: int) -> float:
    """Our time per unit of time of the same flow written with the SUM loss and c = 1.

    Ours: L = R Σ ℓ with R = 1/n (mean) or 1; with output scale c the substitution
    θ' = √c θ turns our flow into the c = 1 flow in time c·t (and the init scale into √c ε).
    So t_ours = t_sum / (R c)."""
    R = 1.0 / n if config.loss.reduction == "mean" else 1.0
    return 1.0 / (R * config.model.c)


# ----------------------------------------------------------------------------- Min et al.
@dataclass(frozen=True)
class MinBound:
    """Min et al.'s Lemma 1 / Theorem 1 time T = log(1/(√h ε)) / (4 n X_max) (their time,
    SUM loss, c = 1), the ε it uses (theory init W(0) = ε W₀, W₀ ~ N(0, 1/D) entries: ε =
    σ₀ √D · √c for our entry std σ₀ and output scale c), and T in our time units."""

    T_theirs: float
    T_ours: float
    epsilon: float
    h: int
    n: int
    X_max: float
    W_max: float
    lemma_condition: bool  # ε ≤ 1/(4 √h X_max W_max²)
    note: str = ""


def min_signals(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x₊ = Σ_{y_i = +1} x_i, x₋ = Σ_{y_i = −1} x_i (sums, as in the paper)."""
    return signal_sums(X, y)


def min_cones(W: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Cone of each neuron: "S+" (active exactly on y > 0), "S-" (exactly on y < 0),
    "dead" (⟨w, x_i⟩ ≤ 0 for all i) or "none"."""
    act = (np.atleast_2d(W) @ X.T) > 0
    pos = y > 0
    out = np.full(act.shape[0], "none", dtype=object)
    out[np.all(act == pos, axis=1)] = "S+"
    out[np.all(act == ~pos, axis=1)] = "S-"
    out[~act.any(axis=1)] = "dead"
    return out


def min_alignment_bound(config: Config, ds: Dataset | None = None,
                        W0: np.ndarray | None = None) -> MinBound:
    """T = log(1/(√h ε))/(4 n X_max) for the config, with ε from the configured entry std
    (ε = σ₀√D: their example W₀ has N(0, 1/D) entries) — or, when the initial W is given,
    W_max from W₀ = W(0)/ε. Their loss is a SUM with c = 1: T_ours = T · time_per_sum_unit.
    The bound is stated for balanced starts and ±1 labels."""
    ds = build_dataset(config) if ds is None else ds
    n, D = ds.X.shape
    h = config.model.width
    c = config.model.c
    eps = entry_std(config, D) * np.sqrt(D) * np.sqrt(c)
    x_max = float(np.linalg.norm(ds.X, axis=1).max())
    if W0 is not None:
        w_max = float(np.linalg.norm(W0 * np.sqrt(c), axis=1).max() / eps)
    else:
        w_max = float("nan")
    T = float(np.log(1.0 / (np.sqrt(h) * eps)) / (4.0 * n * x_max))
    cond = bool(np.isfinite(w_max) and eps <= 1.0 / (4.0 * np.sqrt(h) * x_max * w_max**2))
    return MinBound(T_theirs=T, T_ours=T * time_per_sum_unit(config, n), epsilon=float(eps),
                    h=h, n=n, X_max=x_max, W_max=w_max, lemma_condition=cond,
                    note="ε = σ₀√D·√c (theory W(0) = εW₀ with W₀ entries N(0, 1/D)); T in "
                         "their time (sum loss, c = 1), T_ours = T/(R c)")


# ----------------------------------------------------------------------------- Chistikov et al.
def gamma_n(X: np.ndarray, y: np.ndarray, sw: np.ndarray | None = None) -> np.ndarray:
    """γ_[n] = (1/n) Σ_i s_i y_i x_i (s_i = 1 in the paper)."""
    sw = np.ones(len(y)) if sw is None else sw
    return (sw[:, None] * y[:, None] * X).mean(axis=0)


def chistikov_lambda(config: Config, d: int) -> float:
    """Their λ for our init: w_j = λ z_j, z_j ~ N(0, I/(dm)) ⇒ λ = σ₀ √(dm) (= scale with the
    sqrt_dm normalisation)."""
    return entry_std(config, d) * np.sqrt(d * config.model.width)


def chistikov_alignment_time(config: Config, ds: Dataset | None = None) -> float:
    """ln(1/λ)/‖γ_[n]‖ (the time scale of their Lemma 5, T₁ = ε ln(1/λ)/‖γ_[n]‖ with their
    analysis constant ε ≤ 1/4 dropped) in our time. Their loss (1/2n)Σ(y−h)² is our square
    loss with mean and c = 1; in general t_ours = t_theirs/(n R c), and λ becomes √c λ."""
    ds = build_dataset(config) if ds is None else ds
    n, d = ds.X.shape
    lam = chistikov_lambda(config, d) * np.sqrt(config.model.c)
    g = np.linalg.norm(gamma_n(ds.X, ds.y))
    t_theirs = float(np.log(1.0 / lam) / g)
    return t_theirs * time_per_sum_unit(config, n) / n


def chistikov_limit(vstar: np.ndarray, c: float = 1.0) -> dict[str, float]:
    """The rank-1 limit Θ_{v*}: balanced neurons along v* with c Σ_j ‖w_j‖² = ‖v*‖ (so that
    h(x) = c Σ_j a_j ⟨w_j, x⟩ = ⟨v*, x⟩). W = u v̄*ᵀ with u_j = ‖w_j‖ has one singular value
    ‖u‖ = √(Σ‖w_j‖²) (the nuclear norm), and ‖θ‖² = Σ a_j² + Σ‖w_j‖² = 2 Σ‖w_j‖². For the
    paper's ‖v*‖ = 1, c = 1: 1, 1 and 2."""
    s = float(np.linalg.norm(vstar)) / c
    return {"sum_w_sq": s, "nuclear_norm": float(np.sqrt(s)), "theta_sq": 2.0 * s}


# ------------------------------------------------------------------ Boursier & Flammarion
@dataclass(frozen=True)
class OLSFit:
    """Weighted least squares of y on the inputs (bias column included in X), its fitted
    pre-activations ⟨β, x_i⟩, whether all are > 0 (one ReLU unit active on every point then
    represents it), and its loss under the config's normalisation."""

    beta: np.ndarray
    fitted: np.ndarray
    all_positive: bool
    loss: float


def ols_fit(config: Config, ds: Dataset | None = None) -> OLSFit:
    """β = argmin Σ_i s_i (⟨β, x_i⟩ − y_i)² by np.linalg.lstsq; loss = R Σ_i s_i ℓ(⟨β,x_i⟩, y_i)
    with our square loss ½(ŷ−y)² (Boursier & Flammarion's MSELoss(mean) is 2× the mean value)."""
    ds = build_dataset(config) if ds is None else ds
    sq = np.sqrt(ds.sw)
    beta, *_ = np.linalg.lstsq(ds.X * sq[:, None], ds.y * sq, rcond=None)
    fitted = ds.X @ beta
    R = 1.0 / ds.n if config.loss.reduction == "mean" else 1.0
    loss = float(R * np.sum(ds.sw * 0.5 * (fitted - ds.y) ** 2))
    return OLSFit(beta=beta, fitted=fitted, all_positive=bool(np.all(fitted > 0)), loss=loss)


def boursier_time_factor(config: Config, n: int) -> float:
    """Our time per unit of Boursier & Flammarion's time (their L_B = (1/n)Σ(h−y)², GD lr·k).
    Ours is L = k L_B with k = 1/2 (mean) or n/2 (sum), times c² in the output scale... we use
    c = 1 here: dθ/dt = −k ∇L_B, so t_ours = t_B / k: 2 (mean) or 2/n (sum)."""
    k = 0.5 if config.loss.reduction == "mean" else 0.5 * n
    return 1.0 / (k * config.model.c)


def polar_angle_deg(v: np.ndarray) -> float:
    """Angle of a 2D (x, bias) vector in degrees in [0, 360) (the notebook's plot angle)."""
    return float(np.mod(np.degrees(np.arctan2(v[1], v[0])), 360.0))


# ----------------------------------------------------------------------------- Wang & Ma
@dataclass(frozen=True)
class DerivedDirection:
    name: str
    vector: np.ndarray
    note: str
    tag: str = "derived"


@dataclass(frozen=True)
class WangMaGeometry:
    """Derived (not the paper's) directions for two-signal data. Unknown quantities of the
    paper (κ1, κ2, δ, p's meaning, the phase times) are config parameters, never predicted."""

    x_plus: np.ndarray
    x_minus: np.ndarray
    p: float
    directions: tuple[DerivedDirection, ...] = field(default_factory=tuple)


def wang_ma_geometry(ds: Dataset) -> WangMaGeometry:
    """μ ∝ p x₊ − x₋ (label-weighted direction for a neuron active on both signals, p = the
    class weight s₊/s₋) and x₋^⊥ = x₊ − (⟨x₊, x₋⟩/‖x₋‖²) x₋ (Gram–Schmidt), both [derived]."""
    xp = ds.directions.get("x₊ signal", ds.X[ds.y > 0].mean(axis=0))
    xm = ds.directions.get("x₋ signal", ds.X[ds.y < 0].mean(axis=0))
    sp = float(ds.sw[ds.y > 0].mean())
    sm = float(ds.sw[ds.y < 0].mean())
    p = sp / sm
    mu = p * xp - xm
    perp = xp - (xp @ xm) / max(xm @ xm, _TINY) * xm
    dirs = (
        DerivedDirection("μ ∝ p x₊ − x₋", mu / max(np.linalg.norm(mu), _TINY),
                         "[derived] label-weighted direction of a neuron active on both"),
        DerivedDirection("x₋^⊥", perp / max(np.linalg.norm(perp), _TINY),
                         "[derived] Gram–Schmidt: x₊ minus its projection on x₋"),
    )
    return WangMaGeometry(x_plus=xp, x_minus=xm, p=p, directions=dirs)
