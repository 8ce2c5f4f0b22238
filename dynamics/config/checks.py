"""Checks of a configuration that involve several fields, and the server's size limits.

They run once every field is valid by itself (as `Config`'s last validator), so they may read
any field; each problem is a (dotted path, sentence) pair saying what to change, and to what.
Compute is counted in multiply-adds: one gradient evaluation costs n·d·m (a forward pass,
roughly); gd takes t_end/lr steps of one evaluation, gf at least `gf_min_evaluations`.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from ..limits import Limits, get_limits
from .errors import above, count, over_limit, round_down
from .formula import FormulaError, formula_values
from .sections import (
    DataConfig,
    InitConfig,
    IntegratorConfig,
    LossConfig,
    ModelConfig,
    RecordConfig,
)


class Run(Protocol):
    """The sections of a run, as the checks read them (a `Config` is one; the checks cannot
    name `Config`, whose validation calls them)."""

    @property
    def data(self) -> DataConfig: ...
    @property
    def model(self) -> ModelConfig: ...
    @property
    def loss(self) -> LossConfig: ...
    @property
    def init(self) -> InitConfig: ...
    @property
    def integrator(self) -> IntegratorConfig: ...
    @property
    def record(self) -> RecordConfig: ...


def labels_are_pm1(data: Any) -> bool:
    """Whether the data's labels are all ±1 (classification)."""
    if data.kind in ("two_signals", "digits"):
        return True
    if data.kind in ("teacher", "three_point", "function"):
        return False
    if data.kind == "generated":
        if data.generator in ("symmetric_separable", "skew_xor"):
            return True
        if data.generator == "orthogonal":
            return data.labels == "sign"
        return False
    if data.kind == "array":  # an upload: up to n = 20,000 labels, one vectorised pass
        return bool(data.y.size) and bool(np.all(np.abs(data.y) == 1.0))
    labels = data.labels
    return len(labels) > 0 and all(v in (-1.0, 1.0) for v in labels)


def data_shape(data: Any) -> tuple[int, int]:
    """(n, d) of the data the config builds, bias coordinate included."""
    b = 1 if data.bias else 0
    k = data.kind
    if k == "points":
        n, d = len(data.angles_deg), 2
    elif k == "clusters":
        n, d = len(data.angles_deg) * data.n_per, 2
    elif k == "two_signals":
        n, d = 2 * data.n_per, 2
    elif k == "teacher":
        n, d = (data.n if data.n is not None else data.d), data.d
    elif k == "three_point":
        n, d = len(data.x), 1
    elif k == "function":
        n, d = data.n, 1
    elif k == "digits":
        n, d = 2 * (data.n_per_class or 180), 64
    elif k == "vectors":
        n, d = len(data.points), (len(data.points[0]) if data.points else 0)
    elif k == "generated":
        n, d = data.n, data.d
    else:
        n, d = len(data.y), (data.X.shape[1] if data.X.ndim == 2 else 0)
    return n, d + b


def cross_field_errors(c: Run) -> list[tuple[str, str]]:
    """Checks that involve several fields, and the size limits."""
    lim = get_limits()
    errs: list[tuple[str, str]] = []
    data = c.data
    # data consistency
    if data.kind == "points":
        if len(data.angles_deg) == 0:
            errs.append(("data.angles_deg", "give at least one point"))
        if not (len(data.angles_deg) == len(data.radii) == len(data.labels)):
            errs.append(("data.labels", f"every point needs an angle, a radius and a label; got "
                         f"{len(data.angles_deg)} angles, {len(data.radii)} radii and "
                         f"{len(data.labels)} labels"))
    elif data.kind == "clusters":
        if len(data.angles_deg) == 0:
            errs.append(("data.angles_deg", "give at least one cluster"))
        if len(data.angles_deg) != len(data.labels):
            errs.append(("data.labels", f"one label per cluster: {len(data.angles_deg)} clusters "
                         f"but {len(data.labels)} labels"))
    elif data.kind == "three_point":
        if len(data.x) != len(data.y) or len(data.x) == 0:
            errs.append(("data.y", f"x and y must have the same, nonzero length; got {len(data.x)}"
                         f" and {len(data.y)}"))
    elif data.kind == "function":
        if not data.x_min < data.x_max:
            errs.append(("data.x_max", f"the inputs run from x_min to x_max: make x_max "
                         f"({data.x_max:g}) larger than x_min ({data.x_min:g})"))
        elif data.n <= lim.max_points:
            errs.extend(_formula_errors(data))
    elif data.kind == "teacher":
        if data.d > lim.max_dim:
            errs.append(("data.d", over_limit(lim, "max_dim", data.d, "input dimensions")))
    elif data.kind == "digits":
        if data.classes[0] == data.classes[1]:
            errs.append(("data.classes", "pick two different digit classes"))
    elif data.kind == "vectors":
        dims = sorted({len(p) for p in data.points})
        if not data.points:
            errs.append(("data.points", "give at least one point"))
        elif dims[0] == 0:
            errs.append(("data.points", "a point has no coordinates; give each at least one"))
        elif len(dims) > 1:
            errs.append(("data.points", f"every point needs the same number of coordinates; "
                         f"got rows of {', '.join(map(str, dims))}"))
        if len(data.labels) != len(data.points):
            errs.append(("data.labels", f"one label per point: {len(data.points)} points but "
                         f"{len(data.labels)} labels"))
    elif data.kind == "generated":
        if data.generator == "symmetric_separable" and data.n % 2:
            errs.append(("data.n", f"symmetric data come in pairs (x, −x): make n even (got "
                         f"{data.n})"))
        if data.generator == "orthogonal" and data.n > data.d:
            errs.append(("data.n", f"at most d = {data.d} inputs of R^{data.d} are pairwise "
                         f"orthogonal: lower data.n to {data.d} or raise data.d to {data.n}"))
        if data.generator == "skew_xor":
            if data.n % 4:
                errs.append(("data.n", f"skew-XOR data come in four equal blobs: make n a "
                             f"multiple of 4 (got {data.n})"))
            if data.d < 2:
                errs.append(("data.d", "skew-XOR data live in a plane: give d ≥ 2"))
        if data.d > lim.max_dim:
            errs.append(("data.d", over_limit(lim, "max_dim", data.d, "input dimensions")))
    elif data.kind == "array":
        if len(data.y) == 0:
            errs.append(("data.y", "the data has no rows"))
        if len(data.X) != len(data.y):
            errs.append(("data.y", f"X has {len(data.X)} rows but y has {len(data.y)} labels; "
                         "give one label per row"))
        if len(data.X) and data.X.shape[1] == 0:
            errs.append(("data.X", "rows of X are empty; give at least one input column"))
    if errs:
        return errs
    n, d = data_shape(data)
    if n > lim.max_points:
        errs.append(("data", over_limit(lim, "max_points", n, "data points")))
    if d > lim.max_dim:
        errs.append(("data", over_limit(lim, "max_dim", d, "input dimensions (bias included)")))
    # model / init / loss consistency
    if c.model.width > lim.max_width:
        errs.append(("model.width", over_limit(lim, "max_width", c.model.width, "hidden neurons")))
    if c.init.mirror and c.model.width % 2:
        errs.append(("init.mirror", f"mirrored neurons come in pairs (w_j, ±a_j): make the "
                     f"width even (got {c.model.width}) or turn init.mirror off"))
    if c.init.scheme == "fixed_output" and c.model.train_output:
        errs.append(("model.train_output", "the fixed_output initialisation keeps the output "
                     "layer fixed: set model.train_output to false"))
    if c.loss.kind != "square" and not labels_are_pm1(data):
        errs.append(("loss.kind", f"the {c.loss.kind} loss needs labels ±1, but this "
                     f"{data.kind} data has other labels; use the square loss"))
    # recording
    if c.record.frames > lim.max_frames:
        errs.append(("record.frames", over_limit(lim, "max_frames", c.record.frames, "frames")))
    if c.record.scalars > lim.max_scalars:
        errs.append(("record.scalars", over_limit(lim, "max_scalars", c.record.scalars,
                                             "scalar samples")))
    if c.record.t_first is not None and c.record.t_first >= c.integrator.t_end:
        errs.append(("record.t_first", f"the first recorded time {c.record.t_first:g} must be "
                     f"before the end time {c.integrator.t_end:g}"))
    if c.record.plane == "teacher" and data.kind != "teacher":
        errs.append(("record.plane", "the teacher plane needs teacher data"))
    if not any(p in ("data", "data.d", "model.width") for p, _ in errs):  # sizes first
        errs.extend(_compute_errors(c, n, d, lim))
    return errs


FORMULA_PROBES = 201
"""Points of [x_min, x_max] a formula is checked at (besides the inputs of an evenly spaced
set): a formula that fails there is refused before any run."""


def _formula_errors(data: Any) -> list[tuple[str, str]]:
    """The formula's problems: unreadable, an unknown name or function, or no finite value
    at the data's evenly spaced inputs or at FORMULA_PROBES points of its range."""
    xs = list(np.linspace(data.x_min, data.x_max, FORMULA_PROBES))
    if data.spacing == "even":
        xs += list(np.linspace(data.x_min, data.x_max, data.n))
    try:
        formula_values(data.formula, xs)
    except FormulaError as e:
        return [("data.formula", f"the formula {e}")]
    return []


GF_MIN_STEPS = 200
"""The steps (3 gradient evaluations each) the compute limit counts for any gf run, or one per
recorded frame if more. Measured: a default run (t_end 60) takes about 350 steps, short ones
(t_end 5) about 100, long ones 10³–10⁵. The limit thus bounds the cost of one evaluation
(n·d·m ≤ max_compute / 600, about a second here) before any work is done; the deadline
bounds how many are taken."""


def gf_min_evaluations(c: Run) -> int:
    """Gradient evaluations the compute limit counts for a gf run of `c`."""
    return 3 * max(GF_MIN_STEPS, c.record.frames)


def _compute_errors(c: Run, n: int, d: int, lim: Limits) -> list[tuple[str, str]]:
    """Step and compute limits: gd's exact step count, gf's floor on evaluations
    (`gf_min_evaluations`); one gradient evaluation counts n·d·m multiply-adds (a forward
    pass, roughly)."""
    errs: list[tuple[str, str]] = []
    it, m = c.integrator, c.model.width
    per_eval = n * d * m
    cap_c = lim.max_compute
    if it.method == "gd":
        steps = it.t_end / it.lr
        cap = min(it.max_steps, lim.max_steps)
        if steps > cap + 0.5:
            errs.append(("integrator.t_end", f"gd needs t_end/lr = {steps:.3g} steps, more than "
                         f"the step limit {cap:.3g} (integrator.max_steps, EAE_MAX_STEPS): lower "
                         f"integrator.t_end to at most {round_down(cap * it.lr)}, raise "
                         f"integrator.lr to at least {above(it.t_end / cap, it.lr)}, or use "
                         "gf"))
        work = steps * per_eval
        if work > cap_c:
            fixes = [f"lower integrator.t_end to at most {round_down(cap_c / per_eval * it.lr)}",
                     f"raise integrator.lr to at least {above(work / cap_c * it.lr, it.lr)}"]
            m_max = min(int(cap_c // (steps * n * d)), lim.max_width)
            if m_max >= 1:
                fixes.append(f"lower model.width to at most {count(m_max)}")
            errs.append(("integrator", f"this run needs about {above(work, cap_c)} "
                         f"multiply-adds ({steps:.3g} steps of n·d·m = {count(per_eval)}), over "
                         f"the compute limit {cap_c:.3g} (the server's max_compute, "
                         f"EAE_MAX_COMPUTE): {', '.join(fixes[:-1])} or {fixes[-1]}"))
    else:
        if it.max_steps > lim.max_steps:
            errs.append(("integrator.max_steps",
                         over_limit(lim, "max_steps", it.max_steps, "steps")))
        evals = gf_min_evaluations(c)
        work = evals * per_eval
        if work > cap_c:
            m_max = min(int(cap_c // (evals * n * d)), lim.max_width)
            head = (f"a gf run takes hundreds of gradient evaluations (the limit counts "
                    f"{count(evals)}) of n·d·m = {count(per_eval)} multiply-adds each, about "
                    f"{above(work, cap_c)} in all, over the compute limit {cap_c:.3g} (the "
                    f"server's max_compute, EAE_MAX_COMPUTE)")
            if m_max >= 1:
                errs.append(("model.width", f"{head}: lower model.width to at most "
                             f"{count(m_max)}, or use fewer data points or dimensions"))
            else:
                errs.append(("data", f"{head}: use fewer data points or dimensions (n·d at "
                             f"most {count(cap_c // (evals * m))} at this width)"))
    return errs
