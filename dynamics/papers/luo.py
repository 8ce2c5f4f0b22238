"""Luo, Xu, Ma & Zhang (JMLR 2021, arXiv 2007.07497), "Phase diagram for two-layer ReLU neural
networks at infinite-width limit", with Zhou et al. (NeurIPS 2022, arXiv 2105.11686) on
condensation at initial training.

What we read (docs/papers/luo.md): both abstracts and the first page of Zhou et al.'s
introduction [paper]; the authors' code `xuzhiqin1990/phasediagram_twolayerNN` [code]
(f = α_code Σ a_k σ(w_k·x + b_k) with α_code = m^−alphaexp, a ~ N(0, β₁²), (w, b) ~ N(0, β₂²),
β₁ = m^−beta1exp, β₂ = m^−beta2exp, γ = alphaexp + beta1exp + beta2exp, γ' = beta1exp −
beta2exp; the relative distance ‖θ(t) − θ(0)‖/‖θ(0)‖) and the group's notebooks
`dlphenomena/condensation` (1-D targets, init N(0, 1/m^γ)); the literature map's quotes of the
group's page for the two theorems [secondary]. In our terms (no bias in the output):
α = m^p/c (`model.output_power` p, c = 1), β₁ = m^−a_power, β₂ = m^−w_power (`init` gaussian,
scale 1), so γ = p + a_power + w_power and γ' = a_power − w_power.

(T)  [abstract; theorems as quoted, secondary] RD(θ_w) = ‖θ_w(t) − θ_w(0)‖/‖θ_w(0)‖: as
     m → ∞, sup_t RD → 0 when γ < 1 or γ' > γ − 1 (linear regime), → ∞ when γ > 1 and
     γ' < γ − 1 (condensed regime); "in the condensed regime … active neurons are condensed
     at several discrete orientations" (abstract).
(D1) [derived, scaling] In the linear regime the fit takes t* ~ α²/(m max(β₁, β₂)²) and moves
     w by β₁t*/α (β₁ ≥ β₂) — so RD ∝ m^(γ−1) for γ' ≤ 0 (and m^(γ−1−2γ') or m^(2(γ−1−γ')) for
     γ' > 0). In the condensed regime a few neurons carry an m-independent fit:
     ‖W(end)‖ = O(1) while ‖W(0)‖ = β₂√(md), so RD ∝ m^(w_power − ½).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from .. import metrics
from ..annotations import Analysis, Phase, PhaseText, TimeMarker
from ..config import Config
from ..figure_spec import Axis, FigureSpec, Line, Panel, Points, Role, Rule
from ..phases import PhaseRules
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
    StudySection,
    Summary,
    Tolerances,
    full_w,
    gate,
    loss_and_series,
    rate_failures,
    run_label,
    run_name,
)
from .claims import Claim
from .experiments import Experiment

_CODE = "authors' code xuzhiqin1990/phasediagram_twolayerNN"
NUMBERS: dict[str, Published] = {
    "regimes": Published(("linear: RD → 0", "critical: RD = O(1)", "condensed: RD → ∞"),
                         "abstract: the relative change of input weights as the width "
                         "approaches infinity tends to 0, O(1) and +∞"),
    "boundary": Published("γ = 1 for γ' ≤ 0; γ' = γ − 1 above", "Theorems 1–2 as quoted by "
                          "the literature map from the group's page", "secondary"),
    "demo_target": Published("−σ(x) + σ(2(x+0.3)) − σ(1.5(x−0.4)) + σ(0.5(x−0.8))",
                             "the group's page as quoted by the literature map (m = 100, "
                             "init N(0, 1/m⁴))", "secondary"),
    "lr_scaling": Published("lr ∝ α √(β₁β₂)", _CODE + ", R['learning_rate']"),
}
PHASE_TEXT: dict[str, PhaseText] = {
    "condensation": PhaseText("neurons gather on a few orientations"),
}
"""The phase's plain words (`Phase.plain`)."""
POWERS = (0.0, 0.25, 0.5, 1.0, 1.5)  # the knobs' exponents a and w of β₁ = m⁻ᵃ, β₂ = m⁻ʷ
TOLERANCES = {"slope_tol": 0.15, "mass": 0.9, "gap_deg": 5.0, "max_orientations": 8.0}
"""`slope_tol`: the median over seeds of the fitted exponent of sup RD in m lies within 0.15
of (D1)'s — at widths 32 and 128 RD fluctuates by ~1/√m between seeds (0.1–0.2 in a single
slope), and the median of 8 takes that to ~0.05, the rest being the finite-m correction;
`mass`, `gap_deg`, `max_orientations`: the neurons carrying 90 % of Σ|a_j|‖w_j‖ fall into at
most 8 orientation groups (gaps of more than 5° between groups): two per kink of the presets'
4-kink target."""


# ----------------------------------------------------------------------------- presets
def config(gamma: float = 2.0, gamma_prime: float = 0.0, *, width: int = 256,
           output_power: float = 0.0, seed: int = 0, t_end: float | None = None,
           method: str = "gf", lr: float = 0.05, n: int = 20, **updates: Any) -> Config:
    """The 1-D demo: the group's 4-kink ReLU target on n evenly spaced points of [−1, 1]
    with a bias, square loss (mean), mirrored Gaussian start (h ≡ 0 at t = 0, their ASI)
    with α = m^p (`output_power`), β₁ = m^−a_power, β₂ = m^−w_power set from (γ, γ'):
    a_power + w_power = γ − p, a_power − w_power = γ'."""
    s = gamma - output_power
    ap, wp = (s + gamma_prime) / 2.0, (s - gamma_prime) / 2.0
    if t_end is None:
        t_end = 3000.0 if regime(gamma, gamma_prime) != "linear" else 300.0
    cfg = Config.from_dict({
        "data": {"kind": "function", "n": n},
        "model": {"width": width, "output_power": output_power},
        "loss": {"kind": "square", "reduction": "mean"},
        "init": {"scheme": "gaussian", "scale": 1.0, "normalisation": "none",
                 "a_power": ap, "w_power": wp, "mirror": True},
        "integrator": {"method": method, "t_end": t_end, "lr": lr, "rtol": 1e-6},
        "record": {"frames": 60, "t_first": 0.01}, "seed": seed})
    return cfg.with_updates(updates) if updates else cfg


def presets(quick: bool = True) -> dict[str, Config]:
    """A condensed point (γ = 2, γ' = 0: β₁ = β₂ = 1/m) and two linear ones: γ = ½ with
    α = 1 (β = m^−¼), and the NTK scaling (α = √m, β = 1)."""
    return {"condensed": config(2.0, 0.0), "linear": config(0.5, 0.0),
            "ntk": config(0.5, 0.0, output_power=0.5)}


# ----------------------------------------------------------------------------- theory
Regime = Literal["linear", "critical", "condensed"]


def coordinates(config: Config) -> tuple[float, float]:
    """(γ, γ') of a config with a Gaussian start (see the module docstring)."""
    ic = config.init
    return (config.model.output_power + ic.a_power + ic.w_power, ic.a_power - ic.w_power)


def regime(gamma: float, gamma_prime: float, eps: float = 1e-9) -> Regime:
    """(T): linear when γ < 1 or γ' > γ − 1, condensed when γ > 1 and γ' < γ − 1."""
    if gamma < 1 - eps or gamma_prime > gamma - 1 + eps:
        return "linear"
    if gamma > 1 + eps and gamma_prime < gamma - 1 - eps:
        return "condensed"
    return "critical"


def predicted_slope(config: Config) -> float:
    """(D1): the exponent of sup RD in m."""
    g, gp = coordinates(config)
    r = regime(g, gp)
    if r == "condensed":
        return config.init.w_power - 0.5
    if gp <= 0:
        return g - 1.0
    return g - 1.0 - 2.0 * gp if g <= 1 else 2.0 * (g - 1.0 - gp)


def sup_rd(traj: Trajectory) -> float:
    """sup over stored frames of RD = ‖W(t) − W(0)‖/‖W(0)‖ (bias coordinate included)."""
    W0 = traj.W_at(0)
    if W0 is None or not len(traj.W):
        return float("nan")
    return max(metrics.relative_distance(W0, W) for W in traj.W)


def orientations(traj: Trajectory, frame: int = -1, mass: float = TOLERANCES["mass"],
                 gap: float = TOLERANCES["gap_deg"]) -> tuple[int, int]:
    """(groups, neurons): the neurons carrying `mass` of Σ|a_j|‖w_j‖ at `frame`, grouped by
    their direction (in-plane angle; a new group after a gap of more than `gap` degrees)."""
    W = full_w(traj, frame % traj.n_frames)
    a = np.asarray(traj.a[frame], float)
    v = np.abs(a) * np.linalg.norm(W, axis=1)
    if v.sum() <= 0:
        return 0, 0
    order = np.argsort(-v)
    keep = order[:int(np.searchsorted(np.cumsum(v[order]) / v.sum(), mass)) + 1]
    ang = np.sort(np.degrees(np.arctan2(W[keep, 1], W[keep, 0])))
    groups = 1 + int((np.diff(ang) > gap).sum())
    if groups > 1 and ang[0] + 360.0 - ang[-1] <= gap:
        groups -= 1
    return groups, len(keep)


# ----------------------------------------------------------------------------- hypotheses
def applies_to(config: Config) -> bool:
    """A Gaussian start on 1-D function data (the phase diagram's setting in the tool)."""
    return config.init.scheme == "gaussian" and config.data.kind == "function"


def setting_failures(traj: Trajectory) -> list[str]:
    cfg = traj.config
    out = []
    if cfg.model.gamma != 0:
        out.append(f"γ_leak = {cfg.model.gamma:g}: leaky ReLU (the paper's nets are ReLU)")
    if not cfg.model.train_output:
        out.append("the output layer is frozen")
    if cfg.init.scheme != "gaussian":
        out.append(f"the start is {cfg.init.scheme}, not Gaussian")
    out += rate_failures(cfg)
    if cfg.loss.kind != "square":
        out.append(f"the {cfg.loss.kind} loss")
    if traj.loss[-1] > 0.05 * traj.loss[0]:
        out.append(f"not trained: the loss is still {traj.loss[-1] / traj.loss[0]:.2g} "
                   "of its start")
    return out


def _name(base: str, tr: Trajectory) -> str:
    return f"{base}[{run_name(presets, tr.config)}]"


# ----------------------------------------------------------------------------- claims
def scaling_claim(pairs: Sequence[tuple[Trajectory, Trajectory]],
                  tol: Tolerances | None = None) -> Claim:
    """[(T); derived exponent (D1)] Over seeds, each pair (narrow, wide) gives a slope of
    log sup RD in log m: its sign is the regime's (− linear, + condensed) for every seed, and
    the median is within 0.15 of (D1)'s exponent."""
    tol = {**TOLERANCES, **(tol or {})}
    cfg = pairs[0][0].config
    g, gp = coordinates(cfg)
    r = regime(g, gp)
    want = predicted_slope(cfg)
    rows, slopes = [], []
    for a, b in pairs:
        ra, rb = sup_rd(a), sup_rd(b)
        s = math.log(rb / ra) / math.log(b.width / a.width)
        slopes.append(s)
        rows.append({"seed": a.config.seed, f"sup RD (m={a.width})": ra,
                     f"sup RD (m={b.width})": rb, "slope": s})
    med = float(np.median(slopes))
    sign = -1.0 if r == "linear" else 1.0
    ok = (r != "critical" and all(s * sign > 0 for s in slopes)
          and abs(med - want) <= tol["slope_tol"] and len(pairs) >= 1)
    fails = sorted({f for a, b in pairs for f in setting_failures(a) + setting_failures(b)})
    if r == "critical":
        fails.append(f"(γ, γ') = ({g:g}, {gp:g}) is on the critical line")
    return gate(Claim(
        f"luo.rd_scaling[{run_name(presets, cfg)}]",
        f"the {r} regime: the relative change of the input weights RD "
        + ("falls" if r == "linear" else "grows") + " with the width (a power of m)",
        f"median slope {med:.3g} over {len(pairs)} seeds ({min(slopes):.2g} … "
        f"{max(slopes):.2g})", f"{want:.3g} ({'< 0' if r == 'linear' else '> 0'} for every "
        "seed)", f"sign for every seed; median within {tol['slope_tol']:g} of (D1)", ok,
        f"(γ, γ') = ({g:g}, {gp:g}); widths {pairs[0][0].width} and {pairs[0][1].width}.",
        rows, justification="the sign is the theorem's; the exponent is our scaling "
        "derivation (D1); RD fluctuates by ~1/√m between seeds, ±0.2 in one slope, the median "
        "of 8 by ~0.05", integrator=run_label(cfg)), fails)


def condensation_claim(runs: Sequence[Trajectory], tol: Tolerances | None = None) -> Claim:
    """[abstract] In the condensed regime the neurons carrying 90 % of Σ|a_j|‖w_j‖ fall into a
    few orientation groups (≤ 8), at every width."""
    tol = {**TOLERANCES, **(tol or {})}
    rows = []
    for tr in runs:
        gr, k = orientations(tr, -1, tol["mass"], tol["gap_deg"])
        rows.append({"width": tr.width, "seed": tr.config.seed, "orientations": gr,
                     "neurons carrying 90 %": k})
    worst = max(r["orientations"] for r in rows)
    g, gp = coordinates(runs[0].config)
    fails = sorted({f for tr in runs for f in setting_failures(tr)})
    if regime(g, gp) != "condensed":
        fails.append(f"(γ, γ') = ({g:g}, {gp:g}) is not in the condensed regime")
    return gate(Claim(
        _name("luo.condensation", runs[0]),
        "condensed regime: the active neurons are condensed at several discrete orientations",
        f"at most {worst} orientation groups", f"≤ {tol['max_orientations']:g}",
        f"the neurons carrying {tol['mass']:.0%} of Σ|a_j|‖w_j‖, grouped by gaps > "
        f"{tol['gap_deg']:g}°", worst <= tol["max_orientations"],
        "widths " + ", ".join(str(r["width"]) for r in rows) + ".", rows,
        justification="the target has 4 kinks: a piecewise-linear fit needs one orientation "
        "per kink, two per kink allowed; a linear-regime run spreads its mass over tens of "
        "orientations", integrator=run_label(runs[0].config)), fails)


def pairs_for(cfg: Config, run: Run, seeds: Sequence[int],
              widths: tuple[int, int] = (32, 128)) -> list[tuple[Trajectory, Trajectory]]:
    return [(run(cfg.with_updates({"model.width": widths[0], "seed": s})),
             run(cfg.with_updates({"model.width": widths[1], "seed": s}))) for s in seeds]


def claims(quick: bool, run: Run) -> list[Claim]:
    p = presets(quick)
    seeds = range(8) if quick else range(24)
    cond = pairs_for(p["condensed"], run, seeds)
    return [scaling_claim(pairs_for(p["linear"], run, seeds)), scaling_claim(cond),
            scaling_claim(pairs_for(p["ntk"], run, seeds)),
            condensation_claim([run(p["condensed"]), *[b for _a, b in cond[:2]]])]


def claims_for_run(traj: Trajectory) -> list[Claim]:
    return [condensation_claim([traj])]


# ----------------------------------------------------------------------------- overlay
def annotate(traj: Trajectory, rules: PhaseRules, tol: Tolerances) -> PaperOverlay:
    out = PaperOverlay()
    g, gp = coordinates(traj.config)
    r = regime(g, gp)
    rd = sup_rd(traj)
    if traj.W_at(0) is not None and len(traj.W) > 1:
        W0 = full_w(traj, 0)
        frames = [int(f) for f in traj.W_frames]
        rds = [metrics.relative_distance(W0, W) for W in traj.W]
        hit = [traj.t[f] for f, v in zip(frames, rds, strict=True) if v >= 1.0]
        if hit:
            out.markers.append(TimeMarker("RD = 1", float(hit[0]), "detected",
                                          "Luo et al.: the input weights have moved by their "
                                          "own initial size"))
        if r == "condensed" and hit:
            out.phases.append(Phase("condensation", float(hit[0]), float(traj.t[-1]),
                                    "detected", "RD > 1 in the condensed regime (Luo et al.)",
                                    PHASE_TEXT["condensation"].plain))
    out.notes.append(f"Luo et al.'s coordinates (γ, γ') = ({g:.3g}, {gp:.3g}): the {r} "
                     f"regime; sup RD = {rd:.3g}")
    return out


# ----------------------------------------------------------------------------- figures
def diagram_spec(points: Sequence[dict[str, Any]] = (), here: tuple[float, float] | None = None
                 ) -> FigureSpec:
    """The phase diagram in (γ, γ'): the boundary γ = 1 (γ' ≤ 0) and γ' = γ − 1, the run's
    point, and measured points coloured by the sign of their RD slope."""
    g = np.linspace(0.0, 3.0, 61)
    series: list[Any] = [Line(np.array([1.0, 1.0]), np.array([-2.0, 0.0]),
                              "boundary γ = 1", "theory", "dash"),
                         Line(np.maximum(g, 1.0), np.maximum(g, 1.0) - 1.0,
                              "boundary γ' = γ − 1", "theory", "dash", group="boundary")]
    if points:
        up = [p for p in points if p["slope"] > 0]
        down = [p for p in points if p["slope"] <= 0]
        groups: tuple[tuple[list[dict[str, Any]], str, Role], ...] = (
            (up, "RD grows with m", "negative"), (down, "RD falls with m", "positive"))
        for sel, name, role in groups:
            if sel:
                series.append(Points(np.array([p["gamma"] for p in sel], float),
                                     np.array([p["gamma_prime"] for p in sel], float),
                                     name, role, size=11,
                                     hover=tuple(f"slope {p['slope']:.2f}" for p in sel)))
    if here is not None:
        series.append(Points(np.array([here[0]]), np.array([here[1]]), "this run", "ink",
                             "diamond", 14))
    # (ranges a little past the boundaries': the axes' first labels, "0" and "−2", no longer
    # meet in the corner)
    panel = Panel("phase diagram", Axis("γ", range=(-0.2, 3.0)), Axis("γ'", range=(-2.3, 2.0)),
                  tuple(series))
    return FigureSpec("Linear, critical and condensed regimes", (panel,),
                      caption="Below the dashed lines (γ > 1, γ' < γ − 1) the input weights "
                      "move more and more as m grows (condensed); above, less and less "
                      "(linear).")


def diagram_figure(traj: Trajectory, _an: Analysis | None = None) -> FigureSpec | None:
    if not applies_to(traj.config):
        return None
    return diagram_spec((), coordinates(traj.config))


def rd_figure(traj: Trajectory, _an: Analysis | None = None) -> FigureSpec | None:
    if not applies_to(traj.config) or traj.W_at(0) is None or len(traj.W) < 2:
        return None
    W0 = full_w(traj, 0)
    t = np.asarray(traj.t, float)[np.asarray(traj.W_frames, int)]
    rd = np.array([metrics.relative_distance(W0, W) for W in traj.W])
    t = np.maximum(t, float(traj.t[1]) * 0.5)
    panel = Panel("RD(t)", Axis("t", "log"), Axis("‖W(t) − W(0)‖ / ‖W(0)‖", "log"),
                  (Line(t[1:], np.maximum(rd[1:], 1e-12), "RD", "positive"),
                   Rule(1.0, "y", "RD = 1", "neutral", "dot")))
    return FigureSpec("The order parameter RD", (panel,))


def measure_diagram(run: Run, quick: bool = True) -> list[dict[str, Any]]:
    """RD slopes (widths 32 → 128, one seed) at a few (γ, γ') points."""
    pts = ((0.5, 0.0), (1.5, 0.0), (2.0, 0.0), (2.0, 1.5), (1.5, -1.0)) if quick else tuple(
        (g, gp) for g in (0.5, 1.5, 2.0, 2.5) for gp in (-1.0, 0.0, 1.0, 2.0))
    out = []
    for g, gp in pts:
        if regime(g, gp) == "critical":
            continue
        (a, b), = pairs_for(config(g, gp).with_updates({"record.frames": 20}), run, (0,))
        out.append({"gamma": g, "gamma_prime": gp, "slope": math.log(sup_rd(b) / sup_rd(a))
                    / math.log(4.0)})
    return out


def report_figure(quick: bool = True) -> ReportFigure:
    def series(tr: Trajectory) -> dict[str, np.ndarray]:
        W0 = tr.W_at(0)
        rd = np.array([metrics.relative_distance(W0, W) for W in tr.W])  # type: ignore[arg-type]
        return {"RD": np.interp(tr.t, tr.t[tr.W_frames], rd)}
    return ReportFigure(config(), loss_and_series("luo", "RD", series))


# ----------------------------------------------------------------------------- sweeps
def _rd(tr: Trajectory, _p: Sequence[Phase], _o: object) -> float:
    return sup_rd(tr) if applies_to(tr.config) else float("nan")


def _coord(k: int) -> Any:
    def f(tr: Trajectory, _p: Sequence[Phase], _o: object) -> float:
        return coordinates(tr.config)[k] if applies_to(tr.config) else float("nan")
    return f


SUMMARIES = (
    Summary("luo_sup_rd", "Luo et al.: sup_t ‖W(t) − W(0)‖/‖W(0)‖ over stored frames", _rd),
    Summary("luo_gamma", "Luo et al.: γ = p + a_power + w_power of the run", _coord(0)),
    Summary("luo_gamma_prime", "Luo et al.: γ' = a_power − w_power of the run", _coord(1)),
)


def _sweep_diagram(quick: bool) -> dict[str, Any]:
    base = config(2.0, 0.0, t_end=3000.0).to_dict()
    base["record"] = {"frames": 20, "t_first": 0.01}
    return {"name": "phase diagram (RD against m)",
            "description": "Luo et al.'s order parameter sup RD over a grid of the powers "
                           "β₁ = m^−a_power, β₂ = m^−w_power (α = 1: γ = a + w, γ' = a − w) "
                           "and two or three widths: RD falls with m in the linear regime, "
                           "grows in the condensed one.",
            "base": base,
            "axes": [{"field": "init.a_power", "values": [0.25, 1.0] if quick
                      else [0.0, 0.5, 1.0, 1.5]},
                     {"field": "init.w_power", "values": [0.25, 1.0] if quick
                      else [0.0, 0.5, 1.0, 1.5]},
                     {"field": "model.width", "values": [32, 128] if quick
                      else [32, 128, 512]}],
            "seeds": 1 if quick else 3,
            "record": ["final_loss", "luo_sup_rd", "luo_gamma", "luo_gamma_prime"]}


EXPERIMENTS = {
    "condensed": (
        Experiment("ntk", "NTK scaling: α = √m, β = 1", {"model.output_power": 0.5,
                                                         "init.a_power": 0.0,
                                                         "init.w_power": 0.0,
                                                         "integrator.t_end": 300.0},
                   "The input weights hardly move (RD ≪ 1): every neuron keeps its random "
                   "direction and the fit is a kernel fit — the linear regime.",
                   "luo.rd_scaling"),
        Experiment("wider", "Four times wider: m = 1024", {"model.width": 1024},
                   "RD grows (about ×2 for ×4 width) while the orientations stay few: the "
                   "condensed regime gets more condensed with width.", "luo.condensation"),
    ),
    "linear": (
        Experiment("condensed", "Smaller start: β = 1/m (γ = 2)", {"init.a_power": 1.0,
                                                                   "init.w_power": 1.0,
                                                                   "integrator.t_end": 3000.0},
                   "Now the weights move far from where they started and gather on a few "
                   "orientations: the condensed regime.", "luo.condensation"),
        Experiment("wider", "Four times wider: m = 1024", {"model.width": 1024},
                   "RD shrinks (about ×½ for ×4 width): at infinite width the linear regime "
                   "does not move its weights at all.", "luo.rd_scaling"),
    ),
    "ntk": (
        Experiment("mean_field", "Mean-field: α = m (γ = 1, critical)",
                   {"model.output_power": 1.0, "integrator.t_end": 3000.0},
                   "On the boundary: RD stays O(1) as m grows (the claims say 'critical' and "
                   "turn into illustrations).", "luo.rd_scaling"),
        Experiment("seed", "Another start (seed 3)", {"seed": 3},
                   "The same tiny RD: in the linear regime the run hardly depends on where "
                   "the weights started, only the kernel they define.", "luo.rd_scaling"),
    ),
}


PAPER = Paper(
    key="luo",
    order=65,
    title="Luo et al. (JMLR 2021), Zhou et al. (NeurIPS 2022) — the condensation phase diagram",
    short="Luo et al. 2021",
    text=(
        "f = (1/α) Σ aₖ σ(wₖ·x) with a ~ N(0, β₁²), w ~ N(0, β₂²): the exponents of α, β₁, β₂ "
        "in the width m give the coordinates γ and γ'. In the **linear regime** (γ < 1 or "
        "γ' > γ − 1) the relative change RD = ‖W(t) − W(0)‖/‖W(0)‖ **vanishes** as m grows "
        "(a kernel fit); in the **condensed regime** (γ > 1, γ' < γ − 1) it **diverges** and "
        "the active neurons **condense** on a few orientations. Here α = mᵖ, β₁ = m⁻ᵃ, "
        "β₂ = m⁻ʷ (the model's output power and the Gaussian start's powers), 1-D data with "
        "a bias. Below: the run's point on the phase diagram, RD(t), and measured slopes."),
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
        Section("The phase diagram", "This run's (γ, γ') and the regime boundaries.",
                diagram_figure),
        Section("The order parameter", "RD(t): how far the input weights have moved.",
                rd_figure),
        StudySection("Measured slopes", "The slope of log sup RD in log m (widths 32 → 128) at "
                     "a few points of the diagram.", lambda _d: None,
                     lambda run: diagram_spec(measure_diagram(run, True)),
                     "Measure five points", "Ten runs, a few seconds."),
    ),
    experiments=EXPERIMENTS,
    knobs=(
        Knob("a_power", "output-weight power a (β₁ = m⁻ᵃ)", "init.a_power", options=POWERS,
             format="%g",
             help="Larger: smaller output weights (γ and γ' grow)."),
        Knob("w_power", "input-weight power w (β₂ = m⁻ʷ)", "init.w_power", options=POWERS,
             format="%g",
             help="Larger: smaller input weights (γ grows, γ' falls)."),
        Knob("width", "width m (hidden neurons)", "model.width", min_value=1, max_value=2000,
             step=32, convert=int, back=int,
             help="Hidden neurons: the regimes are exponents of m."),
    ),
    preset_titles={
        "condensed": "Small start, condensed regime · neurons on a few orientations",
        "linear": "Linear regime · the weights barely move (RD falls with the width)",
        "ntk": "Neural-tangent scaling · the linear regime's kernel limit",
    },
    showcases=(
        Showcase("condensed", "Luo et al. 2021 · condensation",
                 "A 1-D target from a tiny start: hundreds of neurons end on a handful of "
                 "orientations."),
    ),
    comparisons={
        "luo_regimes": Comparison(
            "Condensed (γ = 2) vs linear (NTK)",
            "The same data and width: the condensed start moves its weights far and gathers "
            "them on a few orientations; the NTK start barely moves.",
            config(2.0, 0.0), config(0.5, 0.0, output_power=0.5)),
    },
    builtin_sweeps=(
        BuiltinSweep("luo_phase_diagram", "RD against the width over (γ, γ')",
                     "Luo, Xu, Ma & Zhang (2021)", "RD → 0 in the linear regime and → ∞ in "
                     "the condensed regime as m → ∞", _sweep_diagram),
    ),
)
