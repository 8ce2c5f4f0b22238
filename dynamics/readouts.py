"""Read-outs of a recorded trajectory that the figures draw: the network's function h(x) at
recorded frames, and Min et al.'s class signals, mean neurons and alignment curves.

Conventions: h(x) = c Σ_j a_j σ(⟨w_j, x⟩), σ(u) = max(u, γu) (the kernels' forward pass, so a
figure shows exactly the model that was trained); x₊ = Σ_{y_i=+1} x_i, x₋ = Σ_{y_i=−1} x_i;
V₊(t) = {j : a_j(t) > 0}, V₋(t) = {j : a_j(t) < 0}, taken at each time (Min et al.'s
unbalanced start lets a_j change sign). Everything here reads stored frames; nothing
integrates. Frames without a stored W give None or NaN, never an error.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .kernels import Problem, forward
from .trajectory import Trajectory


# ----------------------------------------------------------------------------- h(x)
def network_output(traj: Trajectory, frame: int, X: np.ndarray) -> np.ndarray | None:
    """h(x_i) for the rows of X (n, d) with the weights of `frame`; None when W is not stored
    there. Uses the run's γ and c."""
    W = traj.W_at(frame)
    if W is None:
        return None
    X = np.ascontiguousarray(X, dtype=np.float64)
    cfg = traj.config
    n = X.shape[0]
    p = Problem(X=X, y=np.zeros(n), sw=np.ones(n), gamma=float(cfg.model.gamma),
                c=float(cfg.model.c), loss=cfg.loss.kind, reduction=cfg.loss.reduction,
                train_output=bool(cfg.model.train_output))
    return forward(p, W, np.asarray(traj.a[frame], float))


OUTPUT_CHUNK = 4_000_000  # elements of frames × neurons × points evaluated at once


def network_outputs(traj: Trajectory, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """h(x_i) = c Σ_j a_j σ(⟨w_j, x_i⟩) for the rows of X (n, d) at every frame with a stored
    full W, at once: (those frames (k,), h (k, n)). The same numbers as `network_output` per
    frame (to round-off: the sums run in another order), a NumPy pass over frames in chunks of
    at most OUTPUT_CHUNK frame × neuron × point elements (memory bounded whatever the run)."""
    X = np.asarray(X, dtype=np.float64)
    frames = np.asarray(traj.W_frames, dtype=int) % max(traj.n_frames, 1)
    cfg = traj.config
    gamma, c = float(cfg.model.gamma), float(cfg.model.c)
    W = np.asarray(traj.W, dtype=np.float64)
    a = np.asarray(traj.a, dtype=np.float64)[frames]
    m, n = W.shape[1] if W.ndim == 3 else 0, X.shape[0]
    out = np.empty((frames.size, n))
    step = max(1, OUTPUT_CHUNK // max(m * n, 1))
    with np.errstate(all="ignore"):  # a diverged frame gives inf/NaN, as the kernels do
        for lo in range(0, frames.size, step):
            Wk = W[lo:lo + step]  # one BLAS product (einsum's loop is ~10× slower at d = 1024)
            Z = (Wk.reshape(-1, Wk.shape[-1]) @ X.T).reshape(Wk.shape[0], m, n)
            S = np.where(Z > 0.0, Z, gamma * Z)
            out[lo:lo + step] = c * np.matmul(a[lo:lo + step, None, :], S)[:, 0, :]
    return frames, out


def stored_frames(traj: Trajectory, k: int) -> list[int]:
    """Up to k frames with full W stored, spread over the run (first and last included)."""
    stored = np.asarray(traj.W_frames, dtype=int) % max(traj.n_frames, 1)
    stored = np.unique(stored)
    if stored.size <= k:
        return [int(f) for f in stored]
    pick = np.unique(np.round(np.linspace(0, stored.size - 1, k)).astype(int))
    return [int(stored[i]) for i in pick]


@dataclass(frozen=True)
class FunctionCurves:
    """h on the rows of X at a few recorded frames: h[k] at frame frames[k], time t[k]."""

    frames: tuple[int, ...]
    t: np.ndarray
    h: np.ndarray  # (len(frames), n)


def function_curves(traj: Trajectory, X: np.ndarray, k: int = 5) -> FunctionCurves:
    """h(x) on the rows of X at up to k stored frames spread over the run (`stored_frames`)."""
    frames: list[int] = []
    hs: list[np.ndarray] = []
    for f in stored_frames(traj, k):
        h = network_output(traj, f, X)
        if h is not None:
            frames.append(f)
            hs.append(h)
    t = np.asarray([float(traj.t[f]) for f in frames], float)
    h_arr = np.stack(hs) if hs else np.zeros((0, np.asarray(X).shape[0]))
    return FunctionCurves(tuple(frames), t, h_arr)


# ----------------------------------------------------------------------------- Min et al.
def signal_vectors(traj: Trajectory) -> tuple[np.ndarray, np.ndarray]:
    """x₊ = Σ_{y_i=+1} x_i and x₋ = Σ_{y_i=−1} x_i (as recorded, else from the data)."""
    d = traj.directions
    if "x₊" in d and "x₋" in d:
        return np.asarray(d["x₊"], float), np.asarray(d["x₋"], float)
    X, y = np.asarray(traj.X, float), np.asarray(traj.y, float)
    return X[y > 0].sum(axis=0), X[y < 0].sum(axis=0)


def class_means(traj: Trajectory) -> tuple[np.ndarray, np.ndarray]:
    """x̄₊ = x₊/|I₊| and x̄₋ = x₋/|I₋| (zeros for an empty class)."""
    y = np.asarray(traj.y, float)
    xp, xm = signal_vectors(traj)
    n_p, n_m = int((y > 0).sum()), int((y < 0).sum())
    return xp / max(n_p, 1), xm / max(n_m, 1)


def _cos(u: np.ndarray, v: np.ndarray) -> float:
    nu, nv = float(np.linalg.norm(u)), float(np.linalg.norm(v))
    return float(u @ v / (nu * nv)) if nu > 0 and nv > 0 else float("nan")


def mean_neuron(traj: Trajectory, frame: int, sign: int) -> np.ndarray | None:
    """w̄ = mean of the rows w_j of W at `frame` over j with sign(a_j(frame)) = sign;
    None when W was not stored at that frame; NaNs when no neuron has that sign."""
    W = traj.W_at(frame)
    if W is None:
        return None
    a = np.asarray(traj.a[frame], float)
    sel = a > 0 if sign > 0 else a < 0
    if not sel.any():
        return np.full(W.shape[1], np.nan)
    return np.asarray(W, float)[sel].mean(axis=0)


def mean_neurons(traj: Trajectory, sign: int) -> np.ndarray:
    """`mean_neuron` at every frame at once, (F, d): NaN rows where W was not stored or no
    neuron has that sign."""
    F, d = traj.n_frames, traj.X.shape[1]
    out = np.full((F, d), np.nan)
    frames = np.asarray(traj.W_frames, dtype=int) % max(F, 1)
    if frames.size == 0:
        return out
    a = np.asarray(traj.a, float)[frames]
    sel = (a > 0) if sign > 0 else (a < 0)
    count = sel.sum(axis=1)
    sums = np.einsum("kj,kjd->kd", sel.astype(float), np.asarray(traj.W, float))
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums / count[:, None]
    out[frames] = np.where(count[:, None] > 0, means, np.nan)
    return out


@dataclass(frozen=True)
class AlignmentCurves:
    """Per frame, for one sign: cos(w̄, x) of the mean neuron (NaN where W is not stored),
    min and max over the group of cos(w_j, x), and the group's size."""

    t: np.ndarray
    mean_neuron: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    count: np.ndarray


def alignment_curves(traj: Trajectory, sign: int) -> AlignmentCurves:
    """Min et al.'s alignment curves for V₊ (sign +1, against x₊) or V₋ (−1, against x₋).

    cos(w_j, x) comes from the recorded cosines when present, else from stored W (frames
    without W stay NaN)."""
    xp, xm = signal_vectors(traj)
    target = xp if sign > 0 else xm
    name = "x₊" if sign > 0 else "x₋"
    F = traj.n_frames
    cos_all = traj.cosines.get(name)
    if cos_all is None:  # not recorded: only frames with W
        cos_all = np.full((F, traj.width), np.nan)
        for f in range(F):
            W = traj.W_at(f)
            if W is not None:
                nw = np.linalg.norm(W, axis=1) * (np.linalg.norm(target) or 1.0)
                with np.errstate(invalid="ignore", divide="ignore"):
                    cos_all[f] = np.where(nw > 0, (W @ target) / nw, np.nan)
    cos_all = np.asarray(cos_all, float)
    a = np.asarray(traj.a, float)
    sel = (a > 0) if sign > 0 else (a < 0)
    count = sel.sum(axis=1).astype(int)
    ok = sel & np.isfinite(cos_all)
    with np.errstate(invalid="ignore"):
        lo = np.where(ok.any(axis=1), np.where(ok, cos_all, np.inf).min(axis=1), np.nan)
        hi = np.where(ok.any(axis=1), np.where(ok, cos_all, -np.inf).max(axis=1), np.nan)
    W = mean_neurons(traj, sign)
    nw = np.linalg.norm(W, axis=1) * np.linalg.norm(target)
    good = np.all(np.isfinite(W), axis=1) & (nw > 0)
    mean = np.full(F, np.nan)
    mean[good] = (W[good] @ target) / nw[good]
    return AlignmentCurves(np.asarray(traj.t, float), mean, lo, hi, count)


__all__ = ["AlignmentCurves", "FunctionCurves", "alignment_curves", "class_means",
           "function_curves", "mean_neuron", "mean_neurons", "network_output",
           "network_outputs",
           "signal_vectors", "stored_frames"]
