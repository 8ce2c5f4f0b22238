"""Initialisation schemes: (W, a) from Config.init, Config.model and the input dimension d.

Entry std σ₀ = scale · {1, 1/√m, 1/√(dm)} for normalisation {none, sqrt_m, sqrt_dm}
(Boursier & Flammarion's code uses λ/√m; Chistikov et al. use λ·N(0, I/(dm))).

- balanced: w_j ~ N(0, σ₀² I), a_j = s_j ‖w_j‖ with s_j uniform ±1 (a_j² − ‖w_j‖² = 0).
- gaussian: w_j ~ N(0, σ_w² I), a_j ~ N(0, σ_a²) independent, σ_w = σ₀ m^−w_power and
  σ_a = σ₀ m^−a_power (powers 0: Min et al.'s experiments; Luo et al.'s β₂ and β₁ otherwise).
- dominated: w entries U(−σ₀, σ₀), a_j = s_j σ₀ √d, so |a_j| ≥ ‖w_j‖ (the code's option).
- fixed_output: w_j ~ N(0, σ₀² I), a_j = s_j · output_value / {1, √m, m}; the output layer is
  not trained (Wang & Ma).
- exp_margin (Dana et al.'s code): w_j ~ N(0, σ₀² I), a_j = s_j (‖w_j‖ + output_value·E_j),
  E_j ~ Exp(1): |a_j| > ‖w_j‖, so a_j never changes sign (a_j² − ‖w_j‖² > 0 is conserved).
- tau_delta (Kunin et al.'s code): w_j = ‖w‖ u_j, u_j uniform on the sphere, a_j = s_j |a| with
  |a|·‖w‖ = τ² (τ = σ₀) and η_w a² − η_a ‖w‖² = δ (`imbalance`; η the integrator's lr_w,
  lr_a): a² = (δ + √(δ² + 4 η_w η_a τ⁴)) / (2 η_w), ‖w‖² = τ⁴ / a².
- `mirror`: the second half of the neurons copies the first half's w_j with −a_j, so
  h ≡ 0 at t = 0 (Kunin et al.'s `symmetrize`, Luo et al.'s ASI).
The generator is Config.seed's stream 1, so initialisation is independent of the data draw.
"""

from __future__ import annotations

import numpy as np

from .config import Config
from .data import rng_for


def entry_std(config: Config, d: int) -> float:
    m = config.model.width
    s = config.init.scale
    norm = config.init.normalisation
    if norm == "sqrt_m":
        return s / np.sqrt(m)
    if norm == "sqrt_dm":
        return s / np.sqrt(d * m)
    return s


def tau_delta_norms(tau: float, delta: float, lr_w: float = 1.0,
                    lr_a: float = 1.0) -> tuple[float, float]:
    """(|a|, ‖w‖) with |a|‖w‖ = τ² and η_w a² − η_a ‖w‖² = δ (the positive root)."""
    t4 = tau ** 4
    a2 = (delta + np.sqrt(delta * delta + 4.0 * lr_w * lr_a * t4)) / (2.0 * lr_w)
    if a2 <= 0.0:  # δ ≪ −τ²: cancellation; the other form of the same root
        a2 = 2.0 * lr_a * t4 / (np.sqrt(delta * delta + 4.0 * lr_w * lr_a * t4) - delta)
    a = float(np.sqrt(a2))
    return a, float(t4 / a2) ** 0.5


def init_weights(config: Config, d: int) -> tuple[np.ndarray, np.ndarray]:
    """(W (m, d), a (m,)) for the config; deterministic for Config.seed."""
    rng = rng_for(config.seed, 1)
    m = config.model.width
    mirror = bool(config.init.mirror)
    k = m // 2 if mirror else m  # neurons drawn (the mirror copies the rest)
    std = entry_std(config, d)
    ic = config.init
    scheme = ic.scheme
    if scheme == "dominated":
        W = rng.uniform(-std, std, size=(k, d))
    elif scheme == "gaussian" and ic.w_power != 0.0:
        W = (std * float(m) ** (-ic.w_power)) * rng.standard_normal((k, d))
    else:
        W = std * rng.standard_normal((k, d))
    signs = rng.choice(np.array([-1.0, 1.0]), size=k)
    if scheme == "balanced":
        a = signs * np.linalg.norm(W, axis=1)
    elif scheme == "gaussian":
        sa = std if ic.a_power == 0.0 else std * float(m) ** (-ic.a_power)
        a = sa * rng.standard_normal(k)
    elif scheme == "dominated":
        a = signs * std * np.sqrt(d)
    elif scheme == "exp_margin":
        a = signs * (np.linalg.norm(W, axis=1) + ic.output_value * rng.exponential(1.0, k))
    elif scheme == "tau_delta":
        it = config.integrator
        an, wn = tau_delta_norms(std, ic.imbalance, it.lr_w, it.lr_a)
        nw = np.linalg.norm(W, axis=1)
        nw[nw == 0.0] = 1.0
        W = W * (wn / nw)[:, None]
        a = signs * an
    else:  # fixed_output
        div = {"none": 1.0, "sqrt_m": np.sqrt(m), "m": float(m)}[config.init.output_norm]
        a = signs * config.init.output_value / div
    if mirror:
        W = np.vstack([W, W])
        a = np.r_[a, -a]
    return np.ascontiguousarray(W), np.ascontiguousarray(a)
