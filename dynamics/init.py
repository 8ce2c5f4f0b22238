"""Initialisation schemes: (W, a) from Config.init, Config.model and the input dimension d.

Entry std σ₀ = scale · {1, 1/√m, 1/√(dm)} for normalisation {none, sqrt_m, sqrt_dm}
(Boursier & Flammarion's code uses λ/√m; Chistikov et al. use λ·N(0, I/(dm))).

- balanced: w_j ~ N(0, σ₀² I), a_j = s_j ‖w_j‖ with s_j uniform ±1 (a_j² − ‖w_j‖² = 0).
- gaussian: w_j ~ N(0, σ₀² I), a_j ~ N(0, σ₀²) independent (Min et al.'s experiments).
- dominated: w entries U(−σ₀, σ₀), a_j = s_j σ₀ √d, so |a_j| ≥ ‖w_j‖ (the code's option).
- fixed_output: w_j ~ N(0, σ₀² I), a_j = s_j · output_value / {1, √m, m}; the output layer is
  not trained (Wang & Ma).
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


def init_weights(config: Config, d: int) -> tuple[np.ndarray, np.ndarray]:
    """(W (m, d), a (m,)) for the config; deterministic for Config.seed."""
    rng = rng_for(config.seed, 1)
    m = config.model.width
    std = entry_std(config, d)
    scheme = config.init.scheme
    if scheme == "dominated":
        W = rng.uniform(-std, std, size=(m, d))
    else:
        W = std * rng.standard_normal((m, d))
    signs = rng.choice(np.array([-1.0, 1.0]), size=m)
    if scheme == "balanced":
        a = signs * np.linalg.norm(W, axis=1)
    elif scheme == "gaussian":
        a = std * rng.standard_normal(m)
    elif scheme == "dominated":
        a = signs * std * np.sqrt(d)
    else:  # fixed_output
        div = {"none": 1.0, "sqrt_m": np.sqrt(m), "m": float(m)}[config.init.output_norm]
        a = signs * config.init.output_value / div
    return np.ascontiguousarray(W), np.ascontiguousarray(a)
