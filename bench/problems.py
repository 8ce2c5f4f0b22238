"""The benchmark problems: random GD problems, Boursier & Flammarion's three points, and the
project's example configs turned into kernel inputs (a `Problem` and initial weights)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from dynamics.kernels import Problem

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
#: The empty time grid: kernels record nothing when advanced on it.
EMPTY = np.empty(0)


def gd_problem(n: int, d: int, m: int, seed: int = 0) -> tuple[Problem, np.ndarray, np.ndarray]:
    """Random data (x ~ N(0, I/d)), targets N(0, 1), weights N(0, 1e-4): ReLU, c = 1."""
    rng = np.random.default_rng(seed)
    X = np.ascontiguousarray(rng.normal(size=(n, d)) / np.sqrt(d))
    p = Problem(X, rng.normal(size=n), np.ones(n), 0.0, 1.0, "square", "mean", True)
    return p, rng.normal(size=(m, d)) * 1e-2, rng.normal(size=m) * 1e-2


def three_point(m: int = 200, seed: int = 0) -> tuple[Problem, np.ndarray, np.ndarray]:
    """B&F's x = (−0.75, −0.5, 0.125) with a bias input, y = (1.1, 0.1, 0.8), balanced,
    λ = 1e-3/√m."""
    x = np.array([-0.75, -0.5, 0.125])
    p = Problem(np.ascontiguousarray(np.c_[x, np.ones(3)]), np.array([1.1, 0.1, 0.8]),
                np.ones(3), 0.0, 1.0, "square", "mean", True)
    rng = np.random.default_rng(seed)
    W0 = rng.normal(0.0, 1e-3 / np.sqrt(m), (m, 2))
    a0 = np.linalg.norm(W0, axis=1) * rng.choice([-1.0, 1.0], m)
    return p, W0, a0


def from_config(path: Path, **updates: Any) -> tuple[Any, Problem, np.ndarray, np.ndarray]:
    """(Config, Problem, W0, a0) of a config JSON file, with dotted-key `updates` applied."""
    from dynamics.config import Config
    from dynamics.data import build_dataset
    from dynamics.init import init_weights
    from dynamics.simulate import build_problem

    cfg = Config.from_json(path.read_text())
    if updates:
        cfg = cfg.with_updates({k: json.dumps(v) if not isinstance(v, str) else v
                                for k, v in updates.items()})
    ds = build_dataset(cfg)
    W0, a0 = init_weights(cfg, ds.d)
    return cfg, build_problem(cfg, ds), W0, a0


#: The largest dashboard-size run of the end-to-end table: the teacher run at m = 1000 (the
#: Explorer's width goes to 5000, but a wider run costs diffrax tens of seconds per solve).
DASHBOARD_RUN = "teacher, m = 1000"
#: The goals per end-to-end run: simulate() at least this many times faster than
#: diffrax; simulate() ≤ 1.3× the bare stepper on the runs with the 3× goal. Runs not listed
#: are reported only.
FLOW_GOALS = {"three-point": 3.0, "teacher": 3.0, DASHBOARD_RUN: 1.0}


def flow_runs(quick: bool = False) -> dict[str, Any]:
    """The end-to-end runs as Configs (adaptive gf, the configs' frames):
    Boursier & Flammarion's three points (m = 200, balanced λ = 1e-3/√m, t = 4000), a
    Chistikov et al. teacher run (d = 16, λ = 4⁻⁶ with their √(dm) normalisation, m = 200,
    t = 1000), Wang & Ma's two signals (its `four_phases` preset, integrated by gf) and the
    same teacher run at m = 1000 (`DASHBOARD_RUN`). ``quick`` shrinks widths and times (smoke
    tests)."""
    from dynamics.config import Config
    from dynamics.papers import PAPERS

    def load(name: str) -> Config:
        return Config.from_json((EXAMPLES / name).read_text())

    teacher = load("teacher.json").with_updates({"integrator.t_end": "1000"})
    runs = {"three-point": load("three_point.json"),
            "teacher": teacher,
            "Wang & Ma": PAPERS["wang_ma"].presets(True)["four_phases"].with_updates(
                {"integrator.method": "gf"}),
            DASHBOARD_RUN: teacher.with_updates({"model.width": "1000"})}
    if quick:
        runs = {k: c.with_updates({"model.width": "24" if k == DASHBOARD_RUN else "12",
                                   "record.frames": "12",
                                   "integrator.t_end": json.dumps(c.integrator.t_end / 100)})
                for k, c in runs.items()}
    return runs
