"""Dataset builders: Config.data -> arrays (X, y, sample weights) and named directions.

All randomness comes from the generator passed in (seeded from Config.seed, stream 0), so a
config builds the same data in any thread or process. A bias is an appended coordinate 1.
Labels are ±1 for classification and reals for regression. Sample weights s_i enter the loss
as R Σ_i s_i ℓ_i (R = 1/n or 1); they carry Wang & Ma's class weight p.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from .config import (
    ClustersData,
    Config,
    DigitsData,
    FunctionData,
    GeneratedData,
    PointsData,
    TeacherData,
    ThreePointData,
    TwoSignalsData,
    VectorsData,
    labels_are_pm1,
)
from .config.formula import formula_values


@dataclass(frozen=True)
class Dataset:
    X: np.ndarray  # (n, d), bias coordinate included when asked for
    y: np.ndarray  # (n,)
    sw: np.ndarray  # (n,) sample weights
    classification: bool  # labels are all ±1
    directions: dict[str, np.ndarray] = field(default_factory=dict)  # named vectors in R^d
    meta: dict[str, object] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        return int(self.X.shape[1])


def rng_for(seed: int, stream: int) -> np.random.Generator:
    """Independent, reproducible streams: 0 = data, 1 = initialisation, 2 = held-out test
    points (`held_out`)."""
    return np.random.default_rng(np.random.SeedSequence([int(seed), int(stream)]))


def _unit(angle_deg: np.ndarray) -> np.ndarray:
    th = np.deg2rad(np.asarray(angle_deg, dtype=float))
    return np.stack([np.cos(th), np.sin(th)], axis=-1)


@lru_cache(maxsize=1)
def _digits() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits  # ships with scikit-learn; no download

    d = load_digits()
    return np.asarray(d.data, dtype=float) / 16.0, np.asarray(d.target, dtype=int)


def signal_sums(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Min et al.'s x₊ = Σ_{y_i=+1} x_i and x₋ = Σ_{y_i=−1} x_i (sums, not means)."""
    return X[y > 0].sum(axis=0), X[y < 0].sum(axis=0)


def build_dataset(config: Config) -> Dataset:
    """Build the data a config describes (deterministic for the config)."""
    data = config.data
    rng = rng_for(config.seed, 0)
    meta: dict[str, object] = {}
    directions: dict[str, np.ndarray] = {}
    # isinstance (not `data.kind ==`) so the type checker narrows the union; the two are
    # equivalent because each data class pins its own `kind` literal.
    if isinstance(data, PointsData):
        X = _unit(np.array(data.angles_deg)) * np.array(data.radii)[:, None]
        y = np.array(data.labels, dtype=float)
        sw = np.ones(len(y))
    elif isinstance(data, ClustersData):
        centres = _unit(np.array(data.angles_deg)) * data.radius
        X = np.repeat(centres, data.n_per, axis=0)
        X = X + data.noise * rng.standard_normal(X.shape)
        y = np.repeat(np.array(data.labels, dtype=float), data.n_per)
        sw = np.ones(len(y))
    elif isinstance(data, TwoSignalsData):
        xp = np.array([data.norm_plus, 0.0])
        xm = data.norm_minus * _unit(np.array([data.angle_deg]))[0]
        X = np.vstack([np.repeat(xp[None], data.n_per, 0), np.repeat(xm[None], data.n_per, 0)])
        X = X + data.noise * rng.standard_normal(X.shape)
        y = np.r_[np.ones(data.n_per), -np.ones(data.n_per)]
        sw = np.r_[np.full(data.n_per, data.p), np.ones(data.n_per)]
        directions["x₊ signal"] = xp
        directions["x₋ signal"] = xm
    elif isinstance(data, TeacherData):
        X, y, vstar = _teacher(data.d, data.n if data.n is not None else data.d,
                               data.scheme, data.rho, rng)
        sw = np.ones(len(y))
        directions["v*"] = vstar
    elif isinstance(data, ThreePointData):
        X = np.array(data.x, dtype=float)[:, None]
        y = np.array(data.y, dtype=float)
        sw = np.ones(len(y))
    elif isinstance(data, FunctionData):
        X, y = function_points(data, rng)
        sw = np.ones(len(y))
    elif isinstance(data, DigitsData):
        imgs, target = _digits()
        a, b = data.classes
        ia, ib = np.flatnonzero(target == a), np.flatnonzero(target == b)
        if data.n_per_class is not None:
            ia, ib = ia[: data.n_per_class], ib[: data.n_per_class]
        X = np.vstack([imgs[ia], imgs[ib]])
        y = np.r_[np.ones(len(ia)), -np.ones(len(ib))]
        if data.centre:
            X = X - X.mean(axis=0)
        sw = np.ones(len(y))
        meta["image_shape"] = (8, 8)
        meta["classes"] = (a, b)
    elif isinstance(data, VectorsData):
        X = np.array(data.points, dtype=float).reshape(len(data.points), -1)
        y = np.array(data.labels, dtype=float)
        sw = np.ones(len(y))
    elif isinstance(data, GeneratedData):
        X, y, extra = generate(data, rng)
        directions.update(extra)
        sw = np.ones(len(y))
        meta["generator"] = data.generator
    else:  # ArrayData (the union is exhausted)
        X = np.array(data.X, dtype=float)
        y = np.array(data.y, dtype=float)
        sw = np.ones(len(y))
    if data.bias:
        X = np.hstack([X, np.ones((X.shape[0], 1))])
        directions = {k: np.r_[v, 0.0] for k, v in directions.items()}
        meta["bias"] = True
    X = np.ascontiguousarray(X, dtype=float)
    cls = labels_are_pm1(data)
    if cls:
        xp, xm = signal_sums(X, y)
        directions.setdefault("x₊", xp)
        directions.setdefault("x₋", xm)
    return Dataset(X=X, y=np.ascontiguousarray(y), sw=np.ascontiguousarray(sw, dtype=float),
                   classification=cls, directions=directions, meta=meta)


def function_points(data: FunctionData, rng: np.random.Generator,
                    n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(X (n, 1), y) of a 1-D formula: n inputs evenly spaced on [x_min, x_max] (both ends
    included) or drawn uniformly from the generator, y = formula(x)."""
    n = data.n if n is None else n
    if data.spacing == "even":
        x = np.linspace(data.x_min, data.x_max, n)
    else:
        x = np.sort(rng.uniform(data.x_min, data.x_max, n))
    return x[:, None], np.array(formula_values(data.formula, x.tolist()), dtype=float)


def generator_noise(data: GeneratedData) -> float:
    """The noise std a generator uses (`data.noise`)."""
    return float(data.noise)


def _skew_xor(data: GeneratedData, rng: np.random.Generator
              ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """Four blobs of n/4 points: ±e₁ (label −1) and ±u, u = (cos α, sin α, 0, …) (label +1);
    the noise (std σ per coordinate) is redrawn where ‖z[:2]‖ ≥ 2√2σ (their truncation)."""
    n, d = data.n, data.d
    sigma = generator_noise(data)
    k = n // 4
    Z = sigma * rng.standard_normal((k, d))
    if sigma > 0:
        radius = 2.0 * np.sqrt(2.0) * sigma
        for _ in range(1000):  # each row falls outside with probability e^−4 ≈ 2 %
            bad = np.hypot(Z[:, 0], Z[:, 1]) >= radius
            if not bad.any():
                break
            Z[bad] = sigma * rng.standard_normal((int(bad.sum()), d))
        r = np.hypot(Z[:, 0], Z[:, 1])  # (never after 1000 redraws) pull the rest inside
        Z[:, :2] *= np.where(r >= radius, 0.999 * radius / np.maximum(r, 1e-300), 1.0)[:, None]
    al = np.deg2rad(data.angle_deg)
    e1 = np.zeros(d)
    e1[0] = 1.0
    u = np.zeros(d)
    u[0], u[1] = np.cos(al), np.sin(al)
    R = np.eye(d)
    R[:2, :2] = [[np.cos(al), np.sin(al)], [np.sin(al), -np.cos(al)]]  # the reflection e₁ ↔ u
    neg = np.vstack([e1 + Z, -(e1 + Z)])
    X = np.vstack([neg, neg @ R])
    y = np.r_[-np.ones(2 * k), np.ones(2 * k)]
    return X, y, {"e₁ (label −1)": e1, "u (label +1)": u}


def generate(data: GeneratedData, rng: np.random.Generator
             ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """The points of a named generator (see `config.GeneratedData`): (X, y, named directions).

    symmetric_separable: rows 0..n/2−1 are the drawn points, rows n/2.. their mirror images, in
    the same order; the separating direction u is returned as "u (generator)". orthogonal: the
    rows are orthogonal to machine precision (columns of a QR factor), or (labels "dana") the
    axes scaled by U[1, 2]. skew_xor: the two blobs of label −1 first (+e₁, then −e₁), then
    their reflections (label +1). relu_teacher: the teacher's neurons as "u_k (teacher)".
    linear_teacher: β* as "β* (teacher)"."""
    n, d = data.n, data.d
    if data.generator == "skew_xor":
        return _skew_xor(data, rng)
    if data.generator == "relu_teacher":
        X = rng.standard_normal((n, d))
        X /= np.linalg.norm(X, axis=1, keepdims=True)
        U = rng.standard_normal((data.teacher_width, d))
        U /= np.linalg.norm(U, axis=1, keepdims=True)
        s = rng.choice(np.array([-1.0, 1.0]), size=data.teacher_width)
        y = np.maximum(X @ U.T, 0.0) @ s
        return X, y, {f"u_{k + 1} (teacher)": U[k] for k in range(min(3, len(U)))}
    if data.generator == "linear_teacher":
        beta = np.full(d, 1.0 / np.sqrt(d))
        X = rng.standard_normal((n, d))
        y = X @ beta + generator_noise(data) * rng.standard_normal(n)
        return X, y, {"β* (teacher)": beta}
    if data.generator == "symmetric_separable":
        u = rng.standard_normal(d)
        u /= np.linalg.norm(u)
        z = rng.standard_normal((n // 2, d))
        s = np.where(z @ u >= 0, 1.0, -1.0)
        half = z + (s * data.margin)[:, None] * u
        lab = np.where(half @ u >= 0, 1.0, -1.0)
        return np.vstack([half, -half]), np.r_[lab, -lab], {"u (generator)": u}
    if data.labels == "dana":  # Dana et al.'s code: x_k = r_k e_k, y_k = ±U[1, 2]
        X = np.eye(n, d) * rng.uniform(1.0, 2.0, n)[:, None]
        y = rng.choice(np.array([-1.0, 1.0]), size=n) * rng.uniform(1.0, 2.0, n)
        return np.ascontiguousarray(X), y, {}
    q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    r = rng.uniform(0.5, 1.5, n)
    X = (q[:, :n] * r).T
    signs = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    y = signs if data.labels == "sign" else signs * rng.uniform(0.2, 1.0, n)
    return np.ascontiguousarray(X), y, {}


TEACHER_TRIES = 1000
"""Draws of Chistikov et al.'s data at most, while some ∠(v*, x_i) ≥ 90° (rare when n ≈ d)."""
TEACHER_DRAW_BUDGET = 1 << 22
"""Normal variates the redraws may take in all (≈ 4·10⁶: tens of ms): the tries are
`TEACHER_TRIES` while (n + 1)·d ≤ 4,194 — every draw of the papers' n = d ≤ 64 data
unchanged — and
fewer above, at least one, so building the data costs O(n·d) whatever n is. At n = 20,000,
d = 8 the redraws never succeed (each point fails with probability Φ(−√(d/ρ)) ≈ 0.2 %), and
1,000 of them took seconds on every page that asked for the data."""


def teacher_tries(n: int, d: int) -> int:
    """How many times `_teacher` may draw (n, d) data: `TEACHER_TRIES`, fewer when n·d is
    large (see `TEACHER_DRAW_BUDGET`), at least 1."""
    return max(1, min(TEACHER_TRIES, TEACHER_DRAW_BUDGET // max(1, (n + 1) * d)))


def _teacher(d: int, n: int, scheme: str, rho: float | None, rng: np.random.Generator,
             tries: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Chistikov et al.'s data; redraws until every ∠(v*, x_i) < 90°, at most
    `teacher_tries(n, d)` times; after the last, the labels are relu(⟨v*, x_i⟩)."""
    if rho is None:
        rho = 1.0 if scheme == "centred" else float(np.sqrt(2.0) - 1.0)
    mu = rng.standard_normal(d)
    mu /= np.linalg.norm(mu)
    for _ in range(teacher_tries(n, d) if tries is None else tries):
        X = mu + np.sqrt(rho / d) * rng.standard_normal((n, d))
        if scheme == "centred":
            vstar = mu
        else:
            x0 = mu + np.sqrt(rho / d) * rng.standard_normal(d)
            vstar = x0 / np.linalg.norm(x0)
        proj = X @ vstar
        if np.all(proj > 0):
            return X, proj, vstar
    # keep going with the last draw, labels still relu(<v*, x>)
    return X, np.maximum(proj, 0.0), vstar


def held_out(config: Config, n: int) -> tuple[np.ndarray, np.ndarray] | None:
    """n held-out points (X with the bias coordinate when the data has one, y) drawn like the
    training data from the run's seed on stream 2 (independent of the training draw), for the
    generators and formulas that define a distribution (relu_teacher, linear_teacher,
    skew_xor, a 1-D formula on its range); None for data that is a fixed set."""
    data = config.data
    rng = rng_for(config.seed, 2)
    if isinstance(data, GeneratedData) and data.generator in ("relu_teacher",
                                                              "linear_teacher", "skew_xor"):
        if data.generator == "relu_teacher":  # the run's teacher: stream 0 replayed
            r0 = rng_for(config.seed, 0)
            r0.standard_normal((data.n, data.d))  # the training inputs come first
            U = r0.standard_normal((data.teacher_width, data.d))
            U /= np.linalg.norm(U, axis=1, keepdims=True)
            s = r0.choice(np.array([-1.0, 1.0]), size=data.teacher_width)
            X = rng.standard_normal((n, data.d))
            X /= np.linalg.norm(X, axis=1, keepdims=True)
            y = np.maximum(X @ U.T, 0.0) @ s
        else:
            gen = data.model_copy(update={"n": n - n % 4 if data.generator == "skew_xor"
                                          else n})
            X, y, _ = generate(gen, rng)
    elif isinstance(data, FunctionData):
        X, y = function_points(data.model_copy(update={"spacing": "uniform"}), rng, n)
    else:
        return None
    if data.bias:
        X = np.hstack([X, np.ones((X.shape[0], 1))])
    return np.ascontiguousarray(X, dtype=float), np.ascontiguousarray(y, dtype=float)
