"""Numba kernels for two-layer (leaky) ReLU networks behind one stepper protocol.

Modules, one job each (imports only go down this list, no circles):

* ``problem``  — Problem, Samples, Advance, StepStatus and the ``Stepper`` protocol (with its
  multi-frame advance and ``FramewiseAdvance``, its default of one ``advance`` per frame);
* ``cache``    — ``jit`` (no fast-math) and numba's disk cache keyed on the whole package;
* ``threads``  — BLAS and worker threads (from ``limits.get_settings()``; never change bits);
* ``loss``     — loss/gradient kernels, the packed layout, ``Workspace`` (a run's state) and
  the records kernels take (``Net``, ``Point``, ``Recorder``, ``GDState``: named tuples,
  typed by numba field by field);
* ``gd_split`` — the multi-block GD step for large problems (block count fixed by the size);
* ``gd``       — ``GDStepper``: θ_{k+1} = θ_k − η∇L(θ_k), t = kη;
* ``gf``       — ``GFStepper``: adaptive Bogacki–Shampine 3(2) on dθ/dt = −∇L(θ) (its tableau
  and controller constants named as SciPy's ``rk.py``; its state in records);
* ``measure``  — ``FrameProbe``: the measurements of one frame in one compiled pass (angles,
  singular values, cosines, rates; used by ``simulate``, imported from
  ``dynamics.kernels.measure``).

``METHODS`` maps ``integrator.method`` to its builder; ``make_stepper`` is the one chooser.
Every kernel is compiled without value-changing fast-math, so a config gives the same bits in
any process, compiled or loaded from numba's cache, with any thread count
(tests/test_determinism.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from .gd import GDStepper
from .gd_split import MAX_BLOCKS, SPLIT_MIN_WORK, blocks_for
from .gf import (
    DEFAULT_ATOL_SCALE,
    DEFAULT_RTOL,
    KINK_REL,
    KINK_STREAK,
    PI_ALPHA,
    PI_BETA,
    GFStepper,
    default_atol,
    default_tolerances,
    kink_streak_for,
)
from .loss import BLAS_MIN_WORK, Workspace, forward, loss_grad, loss_value, use_blas_path
from .problem import (
    DIVERGENCE_BOUND,
    LOSS_CODES,
    Advance,
    FramesAdvance,
    FrameStates,
    FramewiseAdvance,
    Problem,
    Samples,
    Stepper,
    StepStatus,
)
from .threads import usable_cpus, worker_threads


class IntegratorSettings(Protocol):
    """The integrator fields a stepper is built from (``config.IntegratorConfig`` has them)."""

    @property
    def lr(self) -> float: ...

    @property
    def rtol(self) -> float: ...

    @property
    def atol(self) -> float | None: ...

    @property
    def max_steps(self) -> int: ...


@dataclass(frozen=True)
class Method:
    """One integrator: its builder and how to say what divergence means for it."""

    build: Callable[[Problem, np.ndarray, np.ndarray, IntegratorSettings], Stepper]
    label: str  # "gradient descent", "the adaptive integrator"
    diverged_why: str  # the usual cause, for the divergence message


def _build_gd(p: Problem, W0: np.ndarray, a0: np.ndarray, it: IntegratorSettings) -> GDStepper:
    return GDStepper(p, W0, a0, it.lr, max_steps=it.max_steps)


def _build_gf(p: Problem, W0: np.ndarray, a0: np.ndarray, it: IntegratorSettings) -> GFStepper:
    atol = it.atol if it.atol is not None else default_atol(W0, a0, it.rtol)
    return GFStepper(p, W0, a0, it.rtol, atol, max_steps=it.max_steps)


METHODS: dict[str, Method] = {
    "gd": Method(_build_gd, "gradient descent",
                 "the learning rate is too large for this data and scale"),
    "gf": Method(_build_gf, "the adaptive integrator",
                 "the flow blows up (e.g. exponential loss overflow)"),
}


def make_stepper(method: str, problem: Problem, W0: np.ndarray, a0: np.ndarray,
                 integrator: IntegratorSettings) -> Stepper:
    """The stepper of ``method`` ("gd" or "gf") from W0, a0 (copied) and the settings."""
    return METHODS[method].build(problem, W0, a0, integrator)


__all__ = [
    "BLAS_MIN_WORK", "DEFAULT_ATOL_SCALE", "DEFAULT_RTOL", "DIVERGENCE_BOUND", "KINK_REL",
    "KINK_STREAK", "LOSS_CODES", "MAX_BLOCKS", "METHODS", "PI_ALPHA", "PI_BETA", "SPLIT_MIN_WORK",
    "Advance", "FrameStates", "FramesAdvance", "FramewiseAdvance", "GDStepper", "GFStepper",
    "IntegratorSettings", "Method", "Problem", "Samples", "StepStatus", "Stepper", "Workspace",
    "blocks_for", "default_atol", "default_tolerances", "forward", "kink_streak_for",
    "loss_grad", "loss_value", "make_stepper", "usable_cpus", "use_blas_path", "worker_threads",
]
