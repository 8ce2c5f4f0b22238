"""Theory for small initialisation: the direction field, extremal vectors, and each paper's
predicted directions, times and limits, computed from the data (never typed in).

Conventions (as in `config/sections.py`): h(x) = c Σ_j a_j σ(⟨w_j, x⟩), σ(u) = max(u, γu),
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

import numpy as np

from .config import Config
from .data import Dataset, build_dataset, signal_sums
from .extremal import (  # noqa: F401 - the search lives there; re-exported here
    Extremal,
    G_value,
    Kind,
    SearchPlan,
    classify,
    direction_field,
    extremal_vectors,
    nearest_extremal,
    plan_search,
)
from .init import tau_delta_norms

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


def extremal_for_config(config: Config, ds: Dataset | None = None, **kw: object
                        ) -> list[Extremal]:
    """Extremal vectors of the config's data, loss, reduction and leaky slope γ."""
    X, b = config_field(config, ds)
    return extremal_vectors(X, b, float(config.model.gamma), **kw)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- scale maps
def entry_std(config: Config, d: int) -> float:
    """Per-entry std of the first layer at t = 0 (see init.py): σ₀, times m^(−w_power) for a
    Gaussian start with a width power (Luo et al.'s β₂), or ‖w‖/√d of Kunin et al.'s (τ, δ)
    start (|a|‖w‖ = τ², η_w a² − η_a ‖w‖² = δ)."""
    m, s = config.model.width, config.init.scale
    std = {"none": s, "sqrt_m": s / np.sqrt(m), "sqrt_dm": s / np.sqrt(d * m)}[
        config.init.normalisation]
    ic = config.init
    if ic.scheme == "gaussian" and ic.w_power != 0.0:
        return float(std * float(m) ** (-ic.w_power))
    if ic.scheme == "tau_delta":
        it = config.integrator
        return tau_delta_norms(float(std), ic.imbalance, it.lr_w, it.lr_a)[1] / np.sqrt(d)
    return std


def time_per_sum_unit(config: Config, n: int) -> float:
    """Our time per unit of time of the same flow written with the SUM loss and c = 1.

    Ours: L = R Σ ℓ with R = 1/n (mean) or 1; with output scale c the substitution
    θ' = √c θ turns our flow into the c = 1 flow in time c·t (and the init scale into √c ε).
    So t_ours = t_sum / (R c)."""
    R = 1.0 / n if config.loss.reduction == "mean" else 1.0
    return 1.0 / (R * config.model.output_scale)


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
    c = config.model.output_scale
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
    lam = chistikov_lambda(config, d) * np.sqrt(config.model.output_scale)
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
    return 1.0 / (k * config.model.output_scale)


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
