"""Published numbers the tool checks against (from ../shared/papers.md; tags kept).

Only values printed in the papers (or the authors' artefacts) are here; derived quantities
(least-squares losses, extremal vectors, bounds) are computed in `theory.py`, never typed in.
"""

from __future__ import annotations

# Chistikov, Englert & Lazić (NeurIPS 2023), Appendix H, Table 1 [paper]:
# final max angle (degrees) between active neurons, centred data, n = d, m = 200,
# GD lr 0.01, balanced z_j ~ N(0, I/(dm)), median of 5 trials. Keys: (log4 λ, d).
CHISTIKOV_TABLE1_MAX_ANGLE: dict[tuple[int, int], float] = {
    (2, 4): 166.5, (2, 16): 140.5, (2, 64): 113.6, (2, 256): 103.0, (2, 1024): 96.54,
    (0, 4): 164.4, (0, 16): 133.6, (0, 64): 112.2, (0, 256): 103.7, (0, 1024): 86.95,
    (-2, 4): 99.43, (-2, 16): 111.4, (-2, 64): 99.76, (-2, 256): 98.41, (-2, 1024): 7.662,
    (-4, 4): 31.06, (-4, 16): 77.97, (-4, 64): 13.91, (-4, 256): 53.04, (-4, 1024): 0.4796,
    (-5, 4): 8.538, (-5, 16): 29.31, (-5, 64): 3.500, (-5, 256): 14.27, (-5, 1024): 0.1199,
    (-6, 4): 2.180, (-6, 16): 7.605, (-6, 64): 0.8756, (-6, 256): 3.583, (-6, 1024): 0.02998,
    (-7, 4): 0.5476, (-7, 16): 1.915, (-7, 64): 0.2189, (-7, 256): 0.8963, (-7, 1024): 0.007494,
    (-8, 4): 0.1371, (-8, 16): 0.4793, (-8, 64): 0.05473, (-8, 256): 0.2241, (-8, 1024): 1.874e-3,
    (-10, 4): 8.570e-3, (-10, 16): 2.996e-2, (-10, 64): 3.421e-3, (-10, 256): 1.401e-2,
    (-10, 1024): 1.171e-4,
    (-13, 4): 1.339e-4, (-13, 16): 4.682e-4, (-13, 64): 5.343e-5, (-13, 256): 2.188e-4,
    (-13, 1024): 3.912e-6,
}

# Table 3 [paper]: average angle between active neurons, centred, m = 200 (selected rows).
CHISTIKOV_TABLE3_MEAN_ANGLE: dict[tuple[int, int], float] = {
    (-5, 4): 0.5171, (-5, 16): 0.7332, (-5, 64): 0.1612, (-5, 256): 0.3816, (-5, 1024): 5.875e-2,
    (-8, 4): 8.199e-3, (-8, 16): 1.186e-2, (-8, 64): 2.520e-3, (-8, 256): 5.985e-3,
    (-8, 1024): 9.180e-4,
}

# Table 5 [paper]: nuclear norm of W, centred, m = 200.
CHISTIKOV_TABLE5_NUCLEAR: dict[tuple[int, int], float] = {
    (2, 4): 32.88, (2, 16): 63.14, (2, 64): 121.6, (2, 256): 200.7, (2, 1024): 220.5,
    (0, 4): 2.512, (0, 16): 4.628, (0, 64): 8.342, (0, 256): 13.34, (0, 1024): 14.61,
    (-2, 4): 1.094, (-2, 16): 1.231, (-2, 64): 1.463, (-2, 256): 1.776, (-2, 1024): 1.856,
    (-4, 4): 1.006, (-4, 16): 1.014, (-4, 64): 1.029, (-4, 256): 1.048, (-4, 1024): 1.054,
    (-6, 4): 1.000, (-6, 16): 1.001, (-6, 64): 1.002, (-6, 256): 1.003, (-6, 1024): 1.003,
    (-8, 256): 1.000, (-8, 1024): 1.000,
}

CHISTIKOV_LR = 0.01  # GD learning rate of all their runs [paper]
CHISTIKOV_MAX_ITERS = 20_000_000  # or until loss < 1e-9 [paper]
CHISTIKOV_STOP_LOSS = 1e-9

# Min, Mallada & Vidal (ICLR 2024), Figure 5 (MNIST 0 vs 1; h = 50, α = 1e-6, GD η = 2e-3):
MIN_MNIST = {
    "width": 50, "alpha": 1e-6, "lr": 2e-3,
    "aligned_by_iteration": 2000,  # "good alignment after ~2000 iterations"
    "loss_drop_from_iteration": 3000,  # "after ~3000 iterations ||W||_2^2 grows, loss decreases"
    "final_stable_rank": 1.0,  # "below 2 and ≈ 1"
}

# Boursier & Flammarion (2024): Section 5 three-point data and the author code's settings.
BOURSIER_THREE_POINT = {
    "x": (-0.75, -0.5, 0.125), "y": (1.1, 0.1, 0.8),
    "init_scale": 1e-3,  # per-entry std λ/√m
    "lr": 1e-3, "iterations": 2_000_000,
    # [derived] reference runs: OLS plateau reached (within 1e-3) by t ≈ 10–13;
    # unbalanced / leaky γ = 0.05 escape at t ≈ 100–135.
    "plateau_reached_by_t": 13.0,
    "escape_window_t": (100.0, 135.0),
    "extremal_polar_angle_deg": 111.2,  # [derived], checked against theory.py's computation
}
