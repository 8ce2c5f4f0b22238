"""Kunin, Raventós, Dominé, Chen, Klindt, Saxe & Ganguli (NeurIPS 2024, arXiv 2406.06158),
"Get rich quick: exact solutions reveal how unbalanced initializations promote rapid feature
learning".

What we read (docs/papers/kunin.md): the abstract and the first page of the introduction
[paper]; the authors' code `allanraventos/getrichquick` [code]: the two-layer ReLU experiment
of Fig. 1 (a 3-neuron ReLU teacher with unit input weights and ±1 outputs, inputs on the unit
sphere, a student of width 50 started symmetrised with w_j = τα u_j, a_j = ±τ/α, so
|a_j|‖w_j‖ = τ² and a_j² − ‖w_j‖² = δ; full-batch GD on mean((f − y)²); the kernel distance
1 − ⟨K₀, K_t⟩/(‖K₀‖‖K_t‖) of the network's tangent kernel and the activation Hamming
distance) and the single-neuron notebook (its closed-form ν(t) for a linear neuron with
conserved R = a² − ‖w‖²). The theorems' text was not readable. Checked here:

(D1) [derived] With per-layer rates η_w, η_a (dθ/dt = −D∇L) a neuron keeps
     δ_j = η_w a_j² − η_a ‖w_j‖² (1-homogeneity of σ: d(a²)/dt and d‖w‖²/dt are both
     −2c a Σ_i r_i σ(z_ij), times η_a and η_w). The abstract's "conserved quantities".
(D2) [derived; the notebook's formula for η = 1] One neuron active on every point of whitened
     data (X X^T/n = I, our mean loss: L = ½‖a w − β*‖² + const): u = ⟨w, β*⟩/a obeys the
     Riccati equation du/dt = η_w s² − δ u − η_a u² (s = ‖β*‖), so with D = √(δ² + 4 η_w η_a
     s²) and roots r± = (−δ ± D)/(2η_a): (u − r₊)/(u − r₋) = K e^{−D t} — the exact solution.
(D3) [abstract: "in nonlinear networks, unbalanced initializations that promote faster
     learning in earlier layers can accelerate rich learning"; code, Fig. 1] At a small
     overall scale τ, the upstream start δ > 0 (a larger than w: w moves fast) changes the
     tangent kernel sooner than the balanced δ = 0, and the downstream start δ < 0 stays lazy
     (kernel and activation pattern barely move: Fig. 1a's "Lazy (τ = 0.1, δ = −1)").
Time: their loss mean((f − y)²) is twice our mean ½(f − y)², so their GD time (lr·steps) is
half ours.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..annotations import Analysis, Phase, PhaseText, TimeMarker
from ..config import Config
from ..data import held_out
from ..figure_spec import Axis, FigureSpec, Line, Panel, Points
from ..phases import PhaseRules
from ..readouts import network_output, regime_curves
from ..trajectory import Trajectory
from .base import (
    BuiltinSweep,
    Comparison,
    Knob,
    Paper,
    PaperOverlay,
    Published,
    ReportFigure,
    Run,
    Section,
    Showcase,
    Summary,
    Tolerances,
    full_w,
    gate,
    loss_and_series,
    run_label,
    run_name,
)
from .claims import Claim
from .experiments import Experiment

_CODE = "authors' code allanraventos/getrichquick"
NUMBERS: dict[str, Published] = {
    "fig1b_max_kernel_distance": Published(
        0.615, _CODE + ", two-layer-relu/plot_supporting.ipynb output: the largest mean "
        "kernel distance over the (τ, δ) grid at 1e6 steps (d = 100, n = 1000, m = 50)"),
    "fig1b_min_kernel_distance": Published(
        8.0e-4, _CODE + ", the same output: the smallest (the lazy corner)"),
    "fig1a_lazy_corner": Published("τ = 0.1, δ = −1: lazy", _CODE + ", two-layer-relu/"
                                   "plot_fig1a.ipynb titles: Rich (τ = 0.1, δ = 0), Lazy (τ = 2,"
                                   " δ = 0), Rich (τ = 0.1, δ = 1), Lazy (τ = 0.1, δ = −1)"),
    "upstream_faster": Published(True, "abstract: unbalanced initializations that promote "
                                 "faster learning in earlier layers can accelerate rich "
                                 "learning"),
}
PHASE_TEXT: dict[str, PhaseText] = {
    "lazy": PhaseText("the kernel barely moves"),
}
"""The phase's plain words (`Phase.plain`)."""
TOLERANCES = {"half": 0.5, "lazy_kd": 0.01, "lazy_pattern": 0.02}
"""`half`: the kernel's "rich" time is when its distance from t = 0 first reaches half of its
final value; `lazy_kd` / `lazy_pattern`: a run counts as lazy when the kernel distance stays
below 0.01 and under 2 % of the activations change — an order below the balanced runs (0.04 –
0.4 and 16 – 24 % on the presets' seeds)."""


# ----------------------------------------------------------------------------- presets
def config(delta: float = 1.0, tau: float = 0.1, *, seed: int = 0, width: int = 50,
           n: int = 20, d: int = 2, t_end: float = 200.0, method: str = "gf",
           lr: float = 0.01, **updates: Any) -> Config:
    """Fig. 1a: a 3-neuron ReLU teacher on n inputs of the unit circle, a width-50 student
    from the (τ, δ) start, mirrored (h ≡ 0 at t = 0), square loss (mean), gf at rtol 1e-7;
    t = 200 is their 1e6 steps of 1e-4 on mean((f − y)²)."""
    cfg = Config.from_dict({
        "data": {"kind": "generated", "generator": "relu_teacher", "n": n, "d": d,
                 "teacher_width": 3},
        "model": {"width": width}, "loss": {"kind": "square", "reduction": "mean"},
        "init": {"scheme": "tau_delta", "scale": tau, "normalisation": "none",
                 "imbalance": delta, "mirror": True},
        "integrator": {"method": method, "t_end": t_end, "lr": lr, "rtol": 1e-7},
        "record": {"frames": 60, "t_first": 0.01}, "seed": seed})
    return cfg.with_updates(updates) if updates else cfg


BETA = (0.6, 0.8)  # the single neuron's target β* (‖β*‖ = 1)


def single_config(delta: float = 0.5, *, lr_w: float = 1.0, lr_a: float = 1.0,
                  method: str = "gf", lr: float = 0.01, **updates: Any) -> Config:
    """(D2): one ReLU neuron on whitened data x_i = √2 e_i, y_i = √2 β*_i (so
    L = ½‖a w − β*‖² while the neuron is active on both points), (τ, δ) start; seed 1
    puts w(0) in the positive quadrant."""
    cfg = Config.from_dict({
        "data": {"kind": "vectors", "points": [[2**0.5, 0.0], [0.0, 2**0.5]],
                 "labels": [2**0.5 * BETA[0], 2**0.5 * BETA[1]]},
        "model": {"width": 1}, "loss": {"kind": "square", "reduction": "mean"},
        "init": {"scheme": "tau_delta", "scale": 0.3, "normalisation": "none",
                 "imbalance": delta},
        "integrator": {"method": method, "t_end": 10.0, "lr": lr, "rtol": 1e-9,
                       "lr_w": lr_w, "lr_a": lr_a},
        "record": {"frames": 60, "t_first": 0.01}, "seed": 1})
    return cfg.with_updates(updates) if updates else cfg


def presets(quick: bool = True) -> dict[str, Config]:
    """Fig. 1a's three starts at τ = 0.1 (upstream δ = 1, balanced, downstream δ = −1) and
    the exact single neuron (δ = 0.5, rates η_w = 2, η_a = 0.5)."""
    return {"upstream": config(1.0), "balanced": config(0.0), "downstream": config(-1.0),
            "single_neuron": single_config(lr_w=2.0, lr_a=0.5)}


# ----------------------------------------------------------------------------- theory
def riccati(t: np.ndarray, u0: float, s: float, delta: float, lw: float, la: float
            ) -> np.ndarray:
    """(D2): u(t) with du/dt = η_w s² − δ u − η_a u², u(0) = u0."""
    t = np.asarray(t, float)
    D = math.sqrt(delta * delta + 4.0 * lw * la * s * s)
    if D == 0.0:  # δ = 0 and β* = 0: du/dt = −η_a u²
        with np.errstate(divide="ignore", invalid="ignore"):
            return u0 / (1.0 + la * u0 * t)
    rp, rm = (-delta + D) / (2.0 * la), (-delta - D) / (2.0 * la)
    if u0 == rm:  # the unstable root: u stays there
        return np.full_like(t, rm)
    K = (u0 - rp) / (u0 - rm)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        e = K * np.exp(-D * t)
        return (rp - rm * e) / (1.0 - e)


def deltas(traj: Trajectory, frame: int) -> np.ndarray:
    """δ_j = η_w a_j² − η_a ‖w_j‖² at a frame (D1)."""
    it = traj.config.integrator
    return it.lr_w * np.asarray(traj.a[frame]) ** 2 - it.lr_a * np.asarray(
        traj.norms[frame]) ** 2


def rich_time(traj: Trajectory, level: float = TOLERANCES["half"]) -> float:
    """First stored time the tangent-kernel distance from t = 0 reaches `level` × its final
    value (NaN when it does not move)."""
    r = regime_curves(traj)
    kd, t = r["kernel_distance"], r["t"]
    if not kd.size or not (kd[-1] > 0):
        return float("nan")
    hit = np.flatnonzero(kd >= level * kd[-1])
    return float(t[hit[0]]) if hit.size else float("nan")


def test_loss(traj: Trajectory, n: int = 2000) -> float:
    """½ mean (h − y)² on n fresh points of the teacher (NaN for data without one)."""
    got = held_out(traj.config, n)
    if got is None:
        return float("nan")
    h = network_output(traj, traj.n_frames - 1, got[0])
    return float(0.5 * np.mean((h - got[1]) ** 2)) if h is not None else float("nan")


# ----------------------------------------------------------------------------- hypotheses
def applies_to(config: Config) -> bool:
    """A (τ, δ) start (Kunin et al.'s parameterisation) with the square loss."""
    return config.init.scheme == "tau_delta" and config.loss.kind == "square"


def setting_failures(traj: Trajectory) -> list[str]:
    cfg = traj.config
    out = []
    if cfg.model.gamma != 0:
        out.append(f"γ = {cfg.model.gamma:g}: leaky ReLU (the paper's nets are ReLU)")
    if not cfg.model.train_output:
        out.append("the output layer is frozen")
    if cfg.init.scheme != "tau_delta":
        out.append(f"the start is {cfg.init.scheme}, not a (τ, δ) start")
    return out


def _single_failures(traj: Trajectory) -> list[str]:
    out = setting_failures(traj)
    if traj.width != 1:
        out.append(f"width {traj.width}: the exact solution is for one neuron")
    X = np.asarray(traj.X, float)
    if traj.W_at(0) is None or not np.allclose(X.T @ X / len(X), np.eye(X.shape[1])):
        out.append("the data are not whitened (X^T X/n ≠ I)")
    elif any((full_w(traj, f) @ X.T <= 0).any() for f in range(traj.n_frames)):
        out.append("the neuron is not active on every point throughout")
    a = np.asarray(traj.a, float)[:, 0]
    if not (np.all(a > 0) or np.all(a < 0)):
        out.append("a crosses 0: u = ⟨w, β*⟩/a is not defined throughout")
    return out


def _name(base: str, tr: Trajectory) -> str:
    return f"{base}[{run_name(presets, tr.config)}]"


# ----------------------------------------------------------------------------- claims
def conservation_claim(traj: Trajectory) -> Claim:
    """[derived, (D1)] δ_j = η_w a_j² − η_a ‖w_j‖² is conserved (gf: to its tolerance)."""
    d0 = deltas(traj, 0)
    drift = max(float(np.abs(deltas(traj, f) - d0).max()) for f in range(traj.n_frames))
    scale = max(float(np.abs(d0).max()), float((np.asarray(traj.a) ** 2).max()), 1e-300)
    rel = drift / scale
    gd = traj.config.integrator.method == "gd"
    bound = 1e-3 if gd else 1e-4
    return gate(Claim(
        _name("kunin.conserved", traj),
        "[derived] each neuron keeps δ_j = η_w a_j² − η_a ‖w_j‖² (the paper's conserved "
        "quantity, with per-layer rates η_w, η_a)", f"max |Δδ_j| / max(|δ|, a²) = {rel:.2g}",
        "0", f"≤ {bound:g}", rel <= bound,
        f"rates η_w = {traj.config.integrator.lr_w:g}, η_a = {traj.config.integrator.lr_a:g}",
        justification="exact for the flow; gf follows it to rtol per step, plus the "
        "GD-like steps at ReLU kinks (0.1 rtol^(1/3) of the time scale: ~1e-5); GD with step "
        "η drifts by O(η) per unit time (η ≤ 0.01 here)", integrator=run_label(traj.config)),
        [f for f in setting_failures(traj) if "frozen" in f or "leaky" in f])


def single_neuron_claim(traj: Trajectory) -> Claim:
    """[derived, (D2)] u(t) = ⟨w, β*⟩/a follows the exact Riccati solution."""
    X, y = np.asarray(traj.X, float), np.asarray(traj.y, float)
    beta = (X.T @ y) / len(y)  # whitened: β* = X^T y / n
    it = traj.config.integrator
    W0, a0 = full_w(traj, 0), float(traj.a[0, 0])
    d0 = it.lr_w * a0**2 - it.lr_a * float(W0[0] @ W0[0])
    frames = [f for f in range(traj.n_frames) if traj.W_at(f) is not None]
    t = np.asarray(traj.t, float)[frames]
    with np.errstate(divide="ignore", invalid="ignore"):
        u = np.array([float(full_w(traj, f)[0] @ beta) / float(traj.a[f, 0]) for f in frames])
        want = riccati(t, u[0], float(np.linalg.norm(beta)), d0, it.lr_w, it.lr_a)
        err = float(np.max(np.abs(u - want)) / max(np.abs(want).max(), 1e-300))
    bound = 1e-6 if it.method == "gf" else it.lr
    root = riccati(np.array([1e9]), u[0], float(np.linalg.norm(beta)), d0, it.lr_w, it.lr_a)
    return gate(Claim(
        _name("kunin.single_neuron", traj),
        "[derived; the authors' notebook for η = 1] one neuron on whitened data: "
        "u = ⟨w, β*⟩/a solves du/dt = η_w‖β*‖² − δu − η_a u² in closed form",
        f"max |u − u_exact| / max|u| = {err:.2g}", "0", f"≤ {bound:g}", err <= bound,
        f"δ = {d0:.4g}, η_w = {it.lr_w:g}, η_a = {it.lr_a:g}, ‖β*‖ = "
        f"{np.linalg.norm(beta):.4g}; u(0) = {u[0]:.4g} → {u[-1]:.4g} (the root r₊ = "
        f"{root[0]:.4g})",
        justification="exact: gf at rtol 1e-9 has a global error of a few 1e-8 on this "
        "smooth flow (no kink is crossed); GD with step η errs at first order, η·|u''|/2 "
        "per unit time on an O(1) transient (|u''| ≤ D² r₊ ≈ 2.5 here): below η",
        integrator=run_label(traj.config)),
        _single_failures(traj))


def rich_claim(up: Trajectory, bal: Trajectory, down: Trajectory,
               tol: Tolerances | None = None) -> Claim:
    """[abstract + Fig. 1, (D3)] On the same data and directions at τ = 0.1: the upstream
    start's kernel moves sooner than the balanced one's, and the downstream start is lazy."""
    tol = {**TOLERANCES, **(tol or {})}
    t_up, t_bal = rich_time(up, tol["half"]), rich_time(bal, tol["half"])
    rd = regime_curves(down)
    kd_down, pc_down = float(rd["kernel_distance"][-1]), float(rd["pattern_change"][-1])
    rb = regime_curves(bal)
    lazy = kd_down <= tol["lazy_kd"] and pc_down <= tol["lazy_pattern"]
    ok = bool(t_up < t_bal) and lazy
    row = {"seed": up.config.seed, "rich time δ=+1": t_up, "rich time δ=0": t_bal,
           "kernel distance δ=0": float(rb["kernel_distance"][-1]),
           "kernel distance δ=−1": kd_down, "activations changed δ=−1": pc_down,
           "test loss δ=+1": test_loss(up), "test loss δ=0": test_loss(bal),
           "test loss δ=−1": test_loss(down)}
    fails = sorted(set(setting_failures(up) + setting_failures(bal) + setting_failures(down)))
    same = (up.config.seed == bal.config.seed == down.config.seed
            and up.config.init.scale == bal.config.init.scale == down.config.init.scale)
    if not same:
        fails.append("the three runs differ in seed or τ")
    return gate(Claim(
        f"kunin.upstream_rich[{run_name(presets, bal.config)}]",
        "at a small scale τ an upstream start (δ > 0: the first layer learns faster) makes "
        "the network's kernel move sooner than the balanced one; a downstream start (δ < 0) "
        "stays lazy", f"rich times {t_up:.3g} (δ = +1) vs {t_bal:.3g} (δ = 0); δ = −1: "
        f"kernel distance {kd_down:.2g}, {pc_down:.1%} of activations changed",
        "δ = +1 sooner; δ = −1 lazy", f"rich time (kernel distance at {tol['half']:.0%} of "
        f"its final value) strictly sooner for δ = +1; lazy: kernel distance ≤ "
        f"{tol['lazy_kd']:g} and ≤ {tol['lazy_pattern']:.0%} of activations changed", ok,
        f"τ = {up.config.init.scale:g}; the balanced kernel moves by "
        f"{row['kernel distance δ=0']:.3g}.", [row],
        justification="the ordering is the paper's statement; 'lazy' is an order of "
        "magnitude below the balanced runs' kernel distance (0.04–0.4) and activation change "
        "(16–24 %) on the presets' seeds, checked on new seeds",
        integrator=run_label(up.config)), fails)


def claims(quick: bool, run: Run) -> list[Claim]:
    p = presets(quick)
    up, bal, down = run(p["upstream"]), run(p["balanced"]), run(p["downstream"])
    return [rich_claim(up, bal, down), conservation_claim(up), conservation_claim(down),
            single_neuron_claim(run(p["single_neuron"]))]


def claims_for_run(traj: Trajectory) -> list[Claim]:
    out = [conservation_claim(traj)]
    if traj.width == 1:
        out.append(single_neuron_claim(traj))
    return out


# ----------------------------------------------------------------------------- overlay
def annotate(traj: Trajectory, rules: PhaseRules, tol: Tolerances) -> PaperOverlay:
    """The rich time (the kernel half way to its final distance) and the regime's numbers."""
    out = PaperOverlay()
    r = regime_curves(traj)
    if not r["t"].size:
        return out
    tr = rich_time(traj, float(tol.get("half", 0.5)))
    if np.isfinite(tr) and tr > 0:
        out.markers.append(TimeMarker("kernel half way", tr, "detected",
                                      "Kunin et al.: the tangent kernel's distance from t = 0 "
                                      "reaches half of its final value"))
    kd, pc = float(r["kernel_distance"][-1]), float(r["pattern_change"][-1])
    lazy = kd <= float(tol.get("lazy_kd", 0.01)) and pc <= float(tol.get("lazy_pattern", 0.02))
    if lazy and traj.t[-1] > 0:
        out.phases.append(Phase("lazy", 0.0, float(traj.t[-1]), "detected",
                                f"kernel distance {kd:.2g}, {pc:.1%} of activations changed "
                                "(Kunin et al.)", PHASE_TEXT["lazy"].plain))
    d = deltas(traj, 0)
    out.notes.append(f"(τ, δ) start: δ_j = η_w a_j² − η_a ‖w_j‖² = {np.median(d):.3g} "
                     f"(median); kernel distance at the end {kd:.3g}, activations changed "
                     f"{pc:.1%}")
    return out


# ----------------------------------------------------------------------------- figures
def _time(t: np.ndarray) -> np.ndarray:
    t = np.asarray(t, float)
    return np.maximum(t, float(t[1]) * 0.5) if t.size > 1 else t


def regime_figure(traj: Trajectory, _an: Analysis | None = None) -> FigureSpec | None:
    """Kernel distance and activation change against t (log t)."""
    if not applies_to(traj.config):
        return None
    r = regime_curves(traj)
    if r["t"].size < 2:
        return None
    t = _time(r["t"])
    panel = Panel("how far from lazy", Axis("t", "log"), Axis("distance from t = 0",
                  range=(0.0, 1.0)),
                  (Line(t, r["kernel_distance"], "kernel distance S(0, t)", "positive"),
                   Line(t, r["pattern_change"], "activations changed", "negative", "dash")))
    return FigureSpec(f"Rich or lazy: δ = {traj.config.init.imbalance:g}, τ = "
                      f"{traj.config.init.scale:g}", (panel,),
                      caption="The tangent kernel's distance from its start (Kunin et al.'s "
                      "S(0, t)) and the share of (neuron, point) activations that changed.")


def single_figure(traj: Trajectory, _an: Analysis | None = None) -> FigureSpec | None:
    """(D2): u(t) from the run against the exact solution."""
    if traj.width != 1 or _single_failures(traj):
        return None
    X, y = np.asarray(traj.X, float), np.asarray(traj.y, float)
    beta = X.T @ y / len(y)
    it = traj.config.integrator
    u = np.array([float(full_w(traj, f)[0] @ beta) / float(traj.a[f, 0])
                  for f in range(traj.n_frames)])
    t = np.asarray(traj.t, float)
    d0 = float(deltas(traj, 0)[0])
    fine = np.linspace(0.0, float(t[-1]), 400)
    exact = riccati(fine, u[0], float(np.linalg.norm(beta)), d0, it.lr_w, it.lr_a)
    panel = Panel("one neuron", Axis("t"), Axis("u = ⟨w, β*⟩ / a"),
                  (Line(fine, exact, "exact solution (D2)", "theory"),
                   Points(t, u, "the run", "ink", size=6)))
    return FigureSpec("The exact single neuron", (panel,))


def report_figure(quick: bool = True) -> ReportFigure:
    def series(tr: Trajectory) -> dict[str, np.ndarray]:
        r = regime_curves(tr)
        return {"kernel distance": np.interp(tr.t, r["t"], r["kernel_distance"]),
                "activations changed": np.interp(tr.t, r["t"], r["pattern_change"])}
    return ReportFigure(config(1.0), loss_and_series("kunin", "distance from t = 0", series))


# ----------------------------------------------------------------------------- sweeps
def _final(name: str) -> Any:
    def f(tr: Trajectory, _p: Sequence[Phase], _o: object) -> float:
        if not applies_to(tr.config):
            return float("nan")
        r = regime_curves(tr)
        return float(r[name][-1]) if r[name].size else float("nan")
    return f


def _test(tr: Trajectory, _p: Sequence[Phase], _o: object) -> float:
    return test_loss(tr) if applies_to(tr.config) else float("nan")


def _rich(tr: Trajectory, _p: Sequence[Phase], _o: object) -> float:
    return rich_time(tr) if applies_to(tr.config) else float("nan")


SUMMARIES = (
    Summary("kunin_kernel_distance", "Kunin et al.: tangent-kernel distance from t = 0 at "
            "the end (S(0, t))", _final("kernel_distance")),
    Summary("kunin_pattern_change", "Kunin et al.: share of activations changed since t = 0 "
            "at the end", _final("pattern_change")),
    Summary("kunin_rich_time", "Kunin et al.: first time the kernel distance reaches half "
            "its final value", _rich),
    Summary("kunin_test_loss", "Kunin et al.: ½ mean (h − y)² on 2000 fresh points of the "
            "teacher", _test),
)


def _sweep_grid(quick: bool) -> dict[str, Any]:
    base = config(0.0).to_dict()
    base["record"] = {"frames": 20, "t_first": 0.01}
    return {"name": "rich vs lazy over (τ, δ)",
            "description": "Fig. 1b in small: the kernel distance, the activation change, the "
                           "rich time and the test loss over the overall scale τ and the "
                           "imbalance δ (ReLU teacher, mirrored start).",
            "base": base,
            "axes": [{"field": "init.scale", "log": [0.1, 2.0, 3] if quick else [0.1, 2.0, 9]},
                     {"field": "init.imbalance", "linear": [-1.0, 1.0, 3] if quick
                      else [-1.0, 1.0, 9]}],
            "seeds": 1 if quick else 4,
            "record": ["final_loss", "kunin_kernel_distance", "kunin_pattern_change",
                       "kunin_rich_time", "kunin_test_loss"]}


EXPERIMENTS = {
    "upstream": (
        Experiment("lazy_scale", "Large scale: τ = 2", {"init.scale": 2.0},
                   "At a large overall scale even an upstream start is lazy: the neurons "
                   "barely turn and the kernel distance stays near 0 (Fig. 1a's inset).",
                   "kunin.upstream_rich"),
        Experiment("rates", "Same δ by rates: η_w = 4, η_a = 1, δ = 1",
                   {"integrator.lr_w": 4.0},
                   "A faster first layer is another way to be upstream: δ = η_w a² − η_a "
                   "‖w‖² is set with the rates in the start, and it stays constant.",
                   "kunin.conserved"),
    ),
    "balanced": (
        Experiment("up", "Unbalance it upstream: δ = 1", {"init.imbalance": 1.0},
                   "The kernel moves sooner: the rich phase comes earlier than in the "
                   "balanced run.", "kunin.upstream_rich"),
        Experiment("down", "Unbalance it downstream: δ = −1", {"init.imbalance": -1.0},
                   "Now only the output weights learn: the kernel and the activation pattern "
                   "stay where they started (lazy).", "kunin.upstream_rich"),
    ),
    "downstream": (
        Experiment("balanced", "Back to balanced: δ = 0", {"init.imbalance": 0.0},
                   "The neurons turn towards the teacher's directions again: the kernel "
                   "distance leaves 0.", "kunin.upstream_rich"),
        Experiment("slow_a", "Slow the output: η_a = 0.1", {"integrator.lr_a": 0.1},
                   "With the output layer slowed the imbalance δ = η_w a² − η_a‖w‖² shifts "
                   "upstream (the start is rebuilt for the same δ), and the run turns rich.",
                   "kunin.conserved"),
    ),
    "single_neuron": (
        Experiment("balanced", "Balanced: δ = 0", {"init.imbalance": 0.0},
                   "The same exact solution with δ = 0: u rises along a tanh; the run's "
                   "points stay on the curve.", "kunin.single_neuron"),
        Experiment("gd", "Gradient descent, η = 0.05", {"integrator.method": "gd",
                                                        "integrator.lr": 0.05},
                   "Fixed steps follow the exact curve to first order in η: the points lie "
                   "a hair off it.", "kunin.single_neuron"),
    ),
}


PAPER = Paper(
    key="kunin",
    order=55,
    title="Kunin et al. (NeurIPS 2024) — get rich quick: unbalanced starts and layer rates",
    short="Kunin et al. 2024",
    text=(
        "A start is set by its overall scale τ (|aⱼ|‖wⱼ‖ = τ²) and its imbalance "
        "δ = η_w aⱼ² − η_a ‖wⱼ‖², which gradient flow **conserves** (η: per-layer learning "
        "rates). At a small τ the **upstream** start δ > 0 (the first layer moves faster) "
        "turns rich **sooner** than the balanced one, while the **downstream** δ < 0 stays "
        "lazy: the network's tangent kernel and its activation pattern barely move. One "
        "neuron on whitened data is solved exactly (a Riccati equation). Below: the kernel "
        "distance and the activation change; the exact single neuron."),
    presets=presets,
    claims=claims,
    claims_for_run=claims_for_run,
    annotate=annotate,
    phase_text=PHASE_TEXT,
    applies_to=applies_to,
    tolerances=TOLERANCES,
    report_figure=report_figure,
    numbers=NUMBERS,
    summaries=SUMMARIES,
    sections=(
        Section("Rich or lazy", "How far the tangent kernel and the activations have moved "
                "from t = 0.", regime_figure),
        Section("The exact single neuron", "u(t) of the run against the closed form (D2).",
                single_figure),
    ),
    experiments=EXPERIMENTS,
    knobs=(
        Knob("delta", "imbalance δ", "init.imbalance", options=(-1.0, -0.5, 0.0, 0.5, 1.0),
             format="%g", help="δ > 0 upstream, δ < 0 downstream."),
        Knob("tau", "overall scale τ", "init.scale", options=(0.03, 0.1, 0.3, 1.0, 2.0),
             format="%g", help="Small τ: rich; large τ: lazy."),
    ),
    preset_titles={
        "upstream": "Upstream start δ = 1 · rich learning sooner (Fig. 1)",
        "balanced": "Balanced start δ = 0 · the reference case (Fig. 1)",
        "downstream": "Downstream start δ = −1 · lazy, the kernel barely moves (Fig. 1)",
        "single_neuron": "One neuron · the exact solution of the conserved flow",
    },
    showcases=(
        Showcase("upstream", "Kunin et al. 2024 · upstream gets rich quick",
                 "A small start whose first layer moves fast: the neurons turn to the "
                 "teacher's directions almost at once."),
    ),
    comparisons={
        "kunin_updown": Comparison(
            "Upstream (δ = 1) vs downstream (δ = −1) at τ = 0.1",
            "The same data, directions and τ: upstream turns rich at once, downstream stays "
            "lazy (the output layer does the work).", config(1.0), config(-1.0)),
    },
    builtin_sweeps=(
        BuiltinSweep("kunin_tau_delta", "Rich vs lazy over the scale τ and the imbalance δ",
                     "Kunin et al. (2024)", "unbalanced upstream starts accelerate rich "
                     "learning; small scale is rich, large scale lazy", _sweep_grid),
    ),
)
