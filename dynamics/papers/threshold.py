"""Boursier & Flammarion (ICML 2025, arXiv 2410.02348), "Simplicity bias and optimization
threshold in two-layer ReLU networks".

What we read (docs/papers/threshold.md): the abstract and the first page of the introduction
[paper], a public review's description of the setting (noisy data labelled by a linear
teacher, gradient flow from a small initialisation, "some further simplifying assumptions")
[reviews], and a reproducibility page quoting the paper on concentration bounds for the
extremal vectors [secondary]. Section 4's data model, the theorems and the experiments' numbers
were not readable, so the setting is ours [derived]: inputs x ~ N(0, I_d), labels
y = ⟨β*, x⟩ + σξ, a ReLU net without bias from a small balanced start, the square loss.

(D1) [derived, with the abstract's mechanism] While h ≈ 0 the neurons align with the
     extremal directions of G(u) = (1/n) Σ_i y_i σ(⟨u, x_i⟩). As n grows, G concentrates on
     its mean E[y σ(⟨u, x⟩)] = ⟨β*, u⟩/2 (Gaussian x, |u| = 1), whose only extremal
     directions are ±β*: positive neurons gather on β*, negative ones on −β*, and
     a σ(⟨β*, x⟩) − b σ(−⟨β*, x⟩) is the linear function ⟨β*, x⟩ — so the network converges
     to (near) the linear estimator and does not interpolate the noise. For small n the
     empirical G has many extremal directions and the network interpolates.
(D2) [abstract: "beyond an optimisation threshold in n the network no longer interpolates …
     a drastic improvement on the test loss"] Above the threshold the final training loss
     stays near the least-squares (OLS) loss (a global minimum would be 0) and the test loss
     near OLS's; below it the training loss is ~0 and the test loss far above OLS's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..annotations import Analysis, Direction, Phase, PhaseText
from ..config import Config
from ..data import held_out
from ..figure_spec import Axis, FigureSpec, Line, Panel, Points, Role, Rule
from ..phases import PhaseRules
from ..readouts import network_output
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
    gate,
    loss_and_series,
    rate_failures,
    run_label,
    run_name,
)
from .claims import Claim
from .experiments import Experiment

NUMBERS: dict[str, Published] = {
    "threshold": Published("no interpolation beyond a threshold in n", "abstract: trained "
                           "models go from global minima to spurious local minima of the "
                           "training loss as the number of training samples becomes larger "
                           "than some level we call optimization threshold"),
    "test_gain": Published("drastic improvement on the test loss", "abstract"),
    "setting": Published("noisy data labelled by a linear teacher, gradient flow from a small "
                         "initialisation", "a public review (paperhub, ICML 2025 reviews)",
                         "reviews"),
}
PHASE_TEXT: dict[str, PhaseText] = {
    "at the linear estimator": PhaseText("the fit is a straight plane"),
}
"""The phase's plain words (`Phase.plain`)."""
TOLERANCES = {"interp": 0.01, "trapped": 0.5, "test_near": 1.25, "gain": 0.5}
"""`trapped`: above the threshold every seed keeps at least half of the OLS training loss (an
interpolator has none); `test_near`: each seed's test loss within 25 % of OLS's (OLS's own
excess over the noise is σ²d/n ≈ 3 % at n = 160; 2000 test points measure it to ±3 %);
`interp`: below the threshold the median training loss is under 1 % of OLS's; `gain`: the
"drastic improvement" read as a median test loss above the threshold at most half of the
median below it (the noise level σ²/2 bounds the first from below: a factor 2 means the
interpolators' excess is at least the noise itself)."""
N_TEST = 2000


# ----------------------------------------------------------------------------- presets
def config(n: int = 160, *, d: int = 5, width: int = 50, seed: int = 0, noise: float = 0.5,
           method: str = "gd", lr: float = 0.05, t_end: float = 1000.0,
           **updates: Any) -> Config:
    """A noisy linear teacher (x ~ N(0, I_d), y = ⟨β*, x⟩ + 0.5ξ, β* = (1, …, 1)/√d), a ReLU
    net of width 50 without bias from a balanced start of scale 1e-6 (entries 1e-6/√m), the
    square loss (mean), GD with step 0.05 to t = 1000 (gf on request)."""
    cfg = Config.from_dict({
        "data": {"kind": "generated", "generator": "linear_teacher", "n": n, "d": d,
                 "noise": noise},
        "model": {"width": width}, "loss": {"kind": "square", "reduction": "mean"},
        "init": {"scheme": "balanced", "scale": 1e-6, "normalisation": "sqrt_m"},
        "integrator": {"method": method, "t_end": t_end, "lr": lr, "rtol": 1e-5},
        "record": {"frames": 60, "t_first": 0.1}, "seed": seed})
    return cfg.with_updates(updates) if updates else cfg


def presets(quick: bool = True) -> dict[str, Config]:
    """Above the threshold (n = 160 = 32d) and below it (n = 8, just above d)."""
    return {"above": config(160), "below": config(8)}


# ----------------------------------------------------------------------------- theory
def ols(traj: Trajectory) -> tuple[np.ndarray, float]:
    """The least-squares coefficients on the training data and their training loss
    (½ mean, like ours)."""
    X, y = np.asarray(traj.X, float), np.asarray(traj.y, float)
    b = np.linalg.lstsq(X, y, rcond=None)[0]
    return b, float(0.5 * np.mean((X @ b - y) ** 2))


def ratio(num: float, den: float) -> float:
    """num/den for the loss ratios: NaN for 0/0, inf for a positive loss over an OLS loss of 0
    (n ≤ d: the linear estimator interpolates), never a ZeroDivisionError."""
    if den == 0.0 or not np.isfinite(den):
        return float("nan") if num == 0.0 or not np.isfinite(den) else float("inf")
    return float(num / den)


def losses(traj: Trajectory) -> dict[str, float]:
    """Training and test losses of the run's end and of OLS (test: N_TEST fresh points)."""
    b, L_ols = ols(traj)
    got = held_out(traj.config, N_TEST)
    out = {"train": float(traj.loss[-1]), "train OLS": L_ols}
    if got is not None:
        h = network_output(traj, traj.n_frames - 1, got[0])
        out["test"] = float(0.5 * np.mean((h - got[1]) ** 2)) if h is not None else np.nan
        out["test OLS"] = float(0.5 * np.mean((got[0] @ b - got[1]) ** 2))
    return out


# ----------------------------------------------------------------------------- hypotheses
def applies_to(config: Config) -> bool:
    return (config.data.kind == "generated" and config.data.generator == "linear_teacher"
            and config.loss.kind == "square")


def setting_failures(traj: Trajectory) -> list[str]:
    cfg = traj.config
    out = []
    if cfg.model.gamma != 0:
        out.append(f"γ = {cfg.model.gamma:g}: leaky ReLU")
    if not cfg.model.train_output:
        out.append("the output layer is frozen")
    out += rate_failures(cfg)
    h0 = network_output(traj, 0, np.asarray(traj.X, float))
    if h0 is not None and np.abs(h0).max() > 0.01 * np.abs(traj.y).max():
        out.append(f"not a small start: max |h(x_i)| = {np.abs(h0).max():.3g} at t = 0")
    n, d = np.asarray(traj.X).shape
    if n <= d:
        out.append(f"n = {n} ≤ d = {d}: the linear estimator itself interpolates")
    return out


def _name(base: str, tr: Trajectory) -> str:
    return f"{base}[{run_name(presets, tr.config)}]"


# ----------------------------------------------------------------------------- claims
def threshold_claim(above: Sequence[Trajectory], below: Sequence[Trajectory],
                    tol: Tolerances | None = None) -> Claim:
    """[abstract; derived (D2)] Above the threshold every seed stays near the linear
    estimator (train ≥ ½ OLS's, test within 25 % of OLS's); below it the runs interpolate
    (median train < 1 % of OLS's) and test far worse (median ≥ 1.5× OLS's)."""
    tol = {**TOLERANCES, **(tol or {})}
    rows: list[dict[str, Any]] = []
    for group, runs in (("above", above), ("below", below)):
        for tr in runs:
            lo = losses(tr)
            rows.append({"group": group, "n": len(tr.y), "seed": tr.config.seed,
                         "train / OLS": ratio(lo["train"], lo["train OLS"]),
                         "test / OLS test": ratio(lo["test"], lo["test OLS"]),
                         "test": lo["test"]})
    ab = [r for r in rows if r["group"] == "above"]
    be = [r for r in rows if r["group"] == "below"]
    near = all(r["train / OLS"] >= tol["trapped"] and r["test / OLS test"] <= tol["test_near"]
               for r in ab)
    med_train = float(np.median([r["train / OLS"] for r in be]))
    med_test = float(np.median([r["test"] for r in be]))
    med_above = float(np.median([r["test"] for r in ab]))
    ok = (near and med_train <= tol["interp"] and med_above <= tol["gain"] * med_test
          and len(ab) >= 1)
    fails = sorted({f for tr in [*above, *below] for f in setting_failures(tr)})
    return gate(Claim(
        _name("threshold.no_interpolation", above[0]),
        "beyond a threshold in n the network trained from a small start no longer "
        "interpolates: it stays near the linear estimator, with a far better test loss than "
        "the interpolating networks of small n",
        f"n = {len(above[0].y)}: train/OLS ≥ {min(r['train / OLS'] for r in ab):.3g}, "
        f"test/OLS ≤ {max(r['test / OLS test'] for r in ab):.3g}, median test "
        f"{med_above:.3g}; n = {len(below[0].y)}: median train/OLS {med_train:.2g}, median "
        f"test {med_test:.3g}", f"≥ {tol['trapped']:g}, ≤ {tol['test_near']:g}, ≤ "
        f"{tol['gain']:g} × the median below; ≤ {tol['interp']:g}",
        "every seed above; the medians", ok,
        f"{len(above)} seeds above, {len(below)} below; test on {N_TEST} fresh points.", rows,
        justification="(D2): an interpolator has train/OLS = 0; the linear estimator 1 and a "
        "test excess σ²d/n (3 % at n = 160); 2000 test points measure a test loss to ±3 %",
        integrator=run_label(above[0].config)), fails)


def claims(quick: bool, run: Run) -> list[Claim]:
    p = presets(quick)
    seeds = range(8) if quick else range(24)
    above = [run(p["above"].with_updates({"seed": s})) for s in seeds]
    below = [run(p["below"].with_updates({"seed": s})) for s in seeds]
    return [threshold_claim(above, below)]


def claims_for_run(traj: Trajectory) -> list[Claim]:
    """This run's losses against OLS's (an illustration: the claim compares sample sizes)."""
    lo = losses(traj)
    c = Claim(_name("threshold.no_interpolation", traj),
              "where this run ends: its training and test losses against the linear "
              "estimator's", f"train/OLS {ratio(lo['train'], lo['train OLS']):.3g}, test/OLS "
              f"{ratio(lo.get('test', np.nan), lo.get('test OLS', np.nan)):.3g}", "—",
              "the claim compares n above and below the threshold", None,
              "A single run: see the study over n.", integrator=run_label(traj.config))
    return [c]


# ----------------------------------------------------------------------------- overlay
def annotate(traj: Trajectory, rules: PhaseRules, tol: Tolerances) -> PaperOverlay:
    out = PaperOverlay()
    d = traj.directions.get("β* (teacher)")
    if d is not None:
        out.directions += [Direction("β*", np.asarray(d), "target",
                                     "Boursier & Flammarion 2025: the teacher (positive "
                                     "neurons gather here)"),
                           Direction("−β*", -np.asarray(d), "target",
                                     "negative neurons gather here")]
    _b, L_ols = ols(traj)
    s_t = np.asarray(traj.scalars.get("t", traj.t), float)
    s_L = np.asarray(traj.scalars.get("loss", traj.loss), float)
    near = np.abs(s_L - L_ols) <= 0.02 * L_ols
    if near.any() and L_ols > 0:
        i = int(np.flatnonzero(near)[0])
        out.phases.append(Phase("at the linear estimator", float(s_t[i]), float(s_t[-1]),
                                "detected", f"|L − L_OLS| ≤ 2 % of L_OLS = {L_ols:.4g} "
                                "(Boursier & Flammarion 2025)",
                                PHASE_TEXT["at the linear estimator"].plain))
    out.notes.append(f"noisy linear teacher: OLS training loss {L_ols:.4g}; the run ends at "
                     f"{float(traj.loss[-1]):.4g}")
    return out


# ----------------------------------------------------------------------------- figures
def loss_figure(traj: Trajectory, _an: Analysis | None = None) -> FigureSpec | None:
    if not applies_to(traj.config):
        return None
    _b, L_ols = ols(traj)
    s_t = np.asarray(traj.scalars.get("t", traj.t), float)
    s_L = np.asarray(traj.scalars.get("loss", traj.loss), float)
    keep = s_t > 0
    panel = Panel("training loss", Axis("t", "log"), Axis("loss", "log"),
                  (Line(s_t[keep], np.maximum(s_L[keep], 1e-30), "network's training loss",
                        "ink"),
                   Line(s_t[keep][[0, -1]], np.full(2, max(L_ols, 1e-30)),
                        "least squares (OLS) training loss", "theory", "dash")))
    return FigureSpec(f"n = {len(traj.y)}: interpolate or stop at the linear estimator",
                      (panel,))


def study_spec(rows: Sequence[dict[str, Any]]) -> FigureSpec:
    ns = np.array(sorted({r["n"] for r in rows}), float)
    med = {k: np.array([np.median([r[k] for r in rows if r["n"] == n]) for n in ns])
           for k in ("train / OLS", "test / OLS test")}
    roles: tuple[tuple[str, Role], ...] = (("train / OLS", "positive"),
                                           ("test / OLS test", "negative"))
    pts = [Points(np.array([r["n"] for r in rows], float),
                  np.array([max(r[k], 1e-12) for r in rows], float), f"{k} (seeds)", role,
                  size=6, opacity=0.5) for k, role in roles]
    panel = Panel("against the linear estimator",
                  Axis("samples n", "log", tickvals=tuple(float(v) for v in ns),
                       ticktext=tuple(f"{v:g}" for v in ns)),
                  Axis("ratio to OLS", "log"),
                  (*pts, Line(ns, np.maximum(med["train / OLS"], 1e-12), "train / OLS "
                              "(median)", "positive"),
                   Line(ns, med["test / OLS test"], "test / OLS test (median)", "negative"),
                   Rule(1.0, "y", "OLS", "theory")))
    return FigureSpec("The optimisation threshold", (panel,),
                      caption="Small n: the networks interpolate (train ≈ 0) and test badly; "
                      "large n: they stop at the linear estimator and test like it.")


def measure_study(run: Run, quick: bool = True) -> list[dict[str, Any]]:
    out = []
    for n in (8, 16, 40, 160) if quick else (6, 8, 12, 16, 24, 40, 80, 160, 320):
        for s in range(3 if quick else 8):
            tr = run(config(n, seed=s).with_updates({"record.frames": 20}))
            lo = losses(tr)
            out.append({"n": n, "seed": s, "train / OLS": ratio(lo["train"], lo["train OLS"]),
                        "test / OLS test": ratio(lo["test"], lo["test OLS"])})
    return out


def report_figure(quick: bool = True) -> ReportFigure:
    return ReportFigure(config(), loss_and_series(
        "threshold", "loss / OLS", _loss_over_ols))


def _loss_over_ols(tr: Trajectory) -> dict[str, np.ndarray]:
    L_ols = ols(tr)[1]
    return {"loss / OLS loss": np.array([ratio(float(v), L_ols) for v in tr.loss])}


# ----------------------------------------------------------------------------- sweeps
def _ratio(key: str) -> Any:
    def f(tr: Trajectory, _p: Sequence[Phase], _o: object) -> float:
        if not applies_to(tr.config):
            return float("nan")
        lo = losses(tr)
        return ratio(lo[key], lo[key + " OLS"])
    return f


SUMMARIES = (
    Summary("threshold_train_ratio", "Boursier & Flammarion 2025: final training loss over "
            "the least-squares (OLS) training loss", _ratio("train")),
    Summary("threshold_test_ratio", "Boursier & Flammarion 2025: test loss (2000 fresh "
            "points) over OLS's", _ratio("test")),
)


def _sweep_n(quick: bool) -> dict[str, Any]:
    base = config().to_dict()
    base["record"] = {"frames": 20, "t_first": 0.1}
    return {"name": "optimisation threshold in n",
            "description": "A noisy linear teacher (d = 5): the final training and test "
                           "losses over OLS's, by the number of samples n — interpolation "
                           "(train ≈ 0) below the threshold, the linear estimator above.",
            "base": base, "axes": [{"field": "data.n", "values": [8, 16, 40, 160] if quick
                                    else [6, 8, 12, 16, 24, 40, 80, 160, 320]}],
            "seeds": 3 if quick else 8,
            "record": ["final_loss", "threshold_train_ratio", "threshold_test_ratio"]}


EXPERIMENTS = {
    "above": (
        Experiment("fewer", "Twenty times fewer samples: n = 8", {"data.n": 8},
                   "Below the threshold: the network now fits the noise exactly (training "
                   "loss → 0) and its test loss is far worse than the linear estimator's.",
                   "threshold.no_interpolation"),
        Experiment("leaky", "Leaky ReLU γ = 0.1", {"model.gamma": 0.1},
                   "No neuron is ever switched off, so the trap of the aligned start is "
                   "left: the training loss goes below OLS's (an illustration outside the "
                   "paper's ReLU setting).", "threshold.no_interpolation"),
    ),
    "below": (
        Experiment("more", "Twenty times more samples: n = 160", {"data.n": 160},
                   "Above the threshold: the neurons gather on ±β* and the network stops "
                   "at the linear estimator — no interpolation, a good test loss.",
                   "threshold.no_interpolation"),
        Experiment("quiet", "No label noise", {"data.noise": 0.0},
                   "With exact linear labels the linear estimator interpolates: there is "
                   "nothing to trade, both sides reach zero loss.",
                   "threshold.no_interpolation"),
    ),
}


PAPER = Paper(
    key="threshold",
    order=70,
    title="Boursier & Flammarion (ICML 2025) — simplicity bias and the optimisation threshold",
    short="Boursier & Flammarion 2025",
    text=(
        "Noisy labels from a linear teacher y = ⟨β*, x⟩ + noise, a small start. While the "
        "network is tiny its neurons align with the extremal directions of the data; with "
        "**many samples** those concentrate on ±β*, the network becomes the **linear "
        "estimator** and **does not interpolate** the noise — a spurious stationary point "
        "with a much better test loss. With **few samples** it interpolates and tests "
        "badly. Here: Gaussian inputs in d = 5, our setting (the paper's Section 4 data "
        "model could not be read). Below: the training loss against OLS's, and the study "
        "over n."),
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
        Section("Interpolate or not", "The training loss against the least-squares loss.",
                loss_figure),
        StudySection("The threshold in n", "Training and test losses over OLS's, by n.",
                     lambda _d: None, lambda run: study_spec(measure_study(run, True)),
                     "Run the quick study over n", "12 small GD runs, a few seconds."),
    ),
    experiments=EXPERIMENTS,
    knobs=(
        Knob("n", "samples n", "data.n", min_value=1, max_value=2000, step=8, convert=int,
             back=int, help="Training samples: the threshold is in n."),
        Knob("noise", "label noise σ", "data.noise", min_value=0.0, max_value=2.0, step=0.1,
             format="%g", help="Standard deviation of the teacher's label noise."),
    ),
    preset_titles={
        "above": "Many samples, above the threshold · stays at the linear estimator",
        "below": "Few samples, below the threshold · the network interpolates the noise",
    },
    showcases=(
        Showcase("above", "Boursier & Flammarion 2025 · the optimisation threshold",
                 "Many noisy samples of a linear teacher: the network stops at the linear "
                 "fit instead of interpolating."),
    ),
    comparisons={
        "threshold_n": Comparison(
            "n = 160 vs n = 8 (a noisy linear teacher)",
            "Many samples: the linear estimator, no interpolation; few: zero training loss "
            "and a poor test loss.", config(160), config(8)),
    },
    builtin_sweeps=(
        BuiltinSweep("threshold_n", "Training and test loss against n",
                     "Boursier & Flammarion (2025)", "beyond an optimisation threshold in "
                     "n the network no longer interpolates and tests better", _sweep_n),
    ),
)
