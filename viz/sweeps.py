"""Figures of sweep results: DataFrame (one row per run, `dynamics.sweeps`) → go.Figure.

Pure: no Streamlit, no simulation. Aggregation over seeds is the median with a min–max band.
The built-ins' scaling plots draw the runs, a fitted line and the theory's line (or the paper's
published points) side by side, and say in the legend which is which.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .header import cap_legend
from .style import OKABE_ITO, phase_colour, rgba, style_for, white_template
from .sweep_fits import OK_STATUSES, Fit, aggregate, evaluate, fit_line

SERIES = [OKABE_ITO[k] for k in ("blue", "vermillion", "bluish_green", "orange",
                                 "reddish_purple", "sky_blue", "black")]
THEORY = OKABE_ITO["black"]
PAPER = OKABE_ITO["orange"]
FIT = OKABE_ITO["grey"]
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "cross", "x", "star")


def series_style(i: int, colour: str | None = None) -> dict:
    """Line and marker of the i-th curve of a figure: its own colour, dash and symbol, and a
    line and markers a little thinner and smaller than the curve before it, so that a curve
    drawn exactly over an earlier one leaves it visible around and between its own marks."""
    return {"line": {"color": colour or SERIES[i % len(SERIES)],
                     "dash": DASHES[i % len(DASHES)], "width": 1.0 + 2.4 * 0.82 ** i},
            "marker": {"symbol": SYMBOLS[i % len(SYMBOLS)], "size": 5.0 + 8.0 * 0.82 ** i}}


# ============================================================================ helpers
TITLE_CHARS = 44  # a line of a sweep plot's title: left of Plotly's toolbar at 800 px
TITLE_PAD_PX = 24  # above the title (a wrapped title's box starts above its pad)
SUBTITLE_PX = 34  # under the title: the panels' own titles (subplots) or a gap


def title_clear_of_toolbar(text: str) -> dict[str, object]:
    """A plot title left-aligned and wrapped at word boundaries into lines of at most
    TITLE_CHARS characters (`<br>`): Plotly's toolbar shows at the figure's top right on
    hover, and a centred title of a whole line ran under it."""
    lines = textwrap.wrap(text, TITLE_CHARS, break_long_words=False) or [""]
    return {"text": "<br>".join(lines), "x": 0.0, "xanchor": "left", "xref": "paper",
            "y": 1.0, "yref": "container", "yanchor": "top", "pad": {"t": TITLE_PAD_PX}}


def title_top_px(text: str, size: float) -> int:
    """The top margin that holds `text` wrapped by `title_clear_of_toolbar` at font `size`."""
    lines = max(1, len(textwrap.wrap(text, TITLE_CHARS, break_long_words=False)))
    return TITLE_PAD_PX + round(1.3 * size * lines) + SUBTITLE_PX


def _layout(fig: go.Figure, title: str, xtitle: str, ytitle: str, log_x: bool = False,
            log_y: bool = False, presenter: bool = False, height: int = 620) -> go.Figure:
    st = style_for(presenter)
    white_template(fig)
    fig.update_layout(
        title={**title_clear_of_toolbar(title), "font": {"size": st.title}},
        height=height, font={"size": st.font},
        legend={"orientation": "h", "yanchor": "top", "y": -0.16, "x": 0},
        margin={"l": 70, "r": 20, "t": title_top_px(title, st.title), "b": 150},
        hovermode="closest",
    )
    fig.update_xaxes(title_text=xtitle, type="log" if log_x else "linear")
    fig.update_yaxes(title_text=ytitle, type="log" if log_y else "linear")
    cap_legend(fig)
    return fig


def _band(fig: go.Figure, x: np.ndarray, lo: np.ndarray, hi: np.ndarray, colour: str,
          name: str, row: int | None = None, col: int | None = None) -> None:
    kw = {"row": row, "col": col} if row is not None else {}
    fig.add_trace(go.Scatter(x=np.r_[x, x[::-1]], y=np.r_[hi, lo[::-1]], fill="toself",
                             fillcolor=rgba(colour, 0.18), line={"width": 0},
                             hoverinfo="skip", showlegend=False, name=f"{name} range",
                             legendgroup=name), **kw)


def _numeric(s: pd.Series) -> bool:
    return bool(pd.api.types.is_numeric_dtype(s)) and not pd.api.types.is_bool_dtype(s)


def _auto_log(v: pd.Series) -> bool:
    if not _numeric(v):
        return False
    a = pd.to_numeric(v, errors="coerce").to_numpy(float)
    a = a[np.isfinite(a)]
    return bool(a.size and (a > 0).all() and a.max() / a.min() >= 100)


# ============================================================================ generic
def lines_figure(df: pd.DataFrame, x: str, y: str, color: str | None = None,
                 log_x: bool | None = None, log_y: bool | None = None, title: str = "",
                 presenter: bool = False) -> go.Figure:
    """`y` against axis `x`: median over seeds with a min–max band, one line per `color`."""
    log_x = _auto_log(df[x]) if log_x is None else log_x
    log_y = _auto_log(df[y]) if log_y is None else log_y
    fig = go.Figure()
    groups = [None] if color is None else list(dict.fromkeys(df[color].tolist()))
    for i, gv in enumerate(groups):
        sub = df if gv is None else df[df[color] == gv]
        ag = aggregate(sub, x, y)
        if ag.empty:
            continue
        st = series_style(i, phase_colour(str(gv)) if color == "phase" else None)
        c = st["line"]["color"]
        name = y if gv is None else (str(gv) if color == "phase" else f"{color} = {gv}")
        xs = ag[x].to_numpy()
        if ag["count"].max() > 1 and _numeric(ag[x]):
            _band(fig, xs, ag["min"].to_numpy(float), ag["max"].to_numpy(float), c, name)
        fig.add_trace(go.Scatter(
            x=xs, y=ag["median"], mode="lines+markers", name=name, legendgroup=name,
            line=st["line"], marker=st["marker"],
            customdata=np.c_[ag["min"], ag["max"], ag["count"]],
            hovertemplate=f"{x}=%{{x}}<br>median {y}=%{{y:.4g}}<br>min %{{customdata[0]:.4g}}, "
                          "max %{customdata[1]:.4g} (%{customdata[2]} runs)<extra></extra>"))
    return _layout(fig, title or f"{y} against {x} (median over seeds, band: min–max)",
                   x, y, log_x, log_y, presenter)


def heatmap_figure(df: pd.DataFrame, x: str, y: str, z: str, agg: str = "median",
                   title: str = "", presenter: bool = False) -> go.Figure:
    """`z` (aggregated over seeds: median or mean; booleans: the fraction true) over two axes.
    Axis values are shown as categories in sweep order."""
    d = df[df["status"].isin(OK_STATUSES)] if "status" in df else df
    vals = d[z]
    if pd.api.types.is_bool_dtype(vals) or str(vals.dtype) == "boolean":
        vals = vals.astype("float")
        agg = "mean"
    vals = pd.to_numeric(vals, errors="coerce")
    table = d.assign(_v=vals).pivot_table(index=y, columns=x, values="_v", aggfunc=agg,
                                          sort=True, dropna=False)

    def labels(idx: pd.Index) -> list[str]:
        return [f"{v:.3g}" if isinstance(v, float) else str(v) for v in idx]

    fig = go.Figure(go.Heatmap(
        z=table.to_numpy(float), x=labels(table.columns), y=labels(table.index),
        colorscale="Viridis", colorbar={"title": {"text": z}},
        hovertemplate=f"{x}=%{{x}}<br>{y}=%{{y}}<br>{agg} {z}=%{{z:.4g}}<extra></extra>"))
    fig = _layout(fig, title or f"{agg} {z} over {x} × {y}", x, y, presenter=presenter)
    # after _layout, which sets linear/log types: text labels on a linear axis have no
    # position, and plotly.js then draws the heatmap's <image> with height NaN
    fig.update_xaxes(type="category")
    fig.update_yaxes(type="category")
    return fig


# ============================================================================ built-ins
def alignment_vs_scale_figure(df: pd.DataFrame, presenter: bool = False) -> go.Figure:
    """t_align (and the loss half-drop time) against ln(1/λ), fitted line, and the theory's
    ln(1/λ)/‖γ_[n]‖ (per run; median over seeds)."""
    d = df[df["status"].isin(OK_STATUSES)].copy()
    d["ln_inv"] = np.log(1.0 / d["init.scale"].astype(float))
    fig = go.Figure()
    for i, (col, name) in enumerate((("t_align", "alignment ends (detected)"),
                                     ("t_half_loss", "loss half-drop"))):
        if col not in d:
            continue
        c = SERIES[i]
        fig.add_trace(go.Scatter(x=d["ln_inv"], y=d[col], mode="markers", name=name,
                                 marker={"color": c, "size": 9, "opacity": 0.75},
                                 customdata=d[["seed"]],
                                 hovertemplate="ln(1/λ)=%{x:.3g}<br>t=%{y:.4g}<br>seed "
                                               "%{customdata[0]}<extra></extra>"))
        fit = fit_line(d["ln_inv"], d[col])
        if fit is not None:
            xs = np.linspace(d["ln_inv"].min(), d["ln_inv"].max(), 50)
            fig.add_trace(go.Scatter(x=xs, y=evaluate(fit, xs, False, False), mode="lines",
                                     line={"color": c, "width": 2},
                                     name=f"fit: slope {fit.slope:.3g}"))
    if "t_theory" in d and d["t_theory"].notna().any():
        ag = aggregate(d, "ln_inv", "t_theory")
        g = float(np.nanmedian(d["gamma_norm"])) if "gamma_norm" in d else float("nan")
        fig.add_trace(go.Scatter(x=ag["ln_inv"], y=ag["median"], mode="lines",
                                 line={"color": THEORY, "width": 2.5, "dash": "dash"},
                                 name=f"theory ln(1/λ)/‖γ_[n]‖: slope {1 / g:.3g}"))
    return _layout(fig, "Alignment time against ln(1/λ) (Chistikov et al.; Min et al.)",
                   "ln(1/λ)", "time t", presenter=presenter)


def max_angle_figure(df: pd.DataFrame, presenter: bool = False,
                     table: dict[tuple[int, int], float] | None = None) -> go.Figure:
    """Final max angle between active neurons against λ (log–log) per d: runs (median, band),
    a fitted power law for λ ≤ 4⁻³, the paper's Table 1 medians and the ∝ λ scaling."""
    if table is None:
        from dynamics.papers.chistikov import TABLE1_MAX_ANGLE as table
    d = df[df["status"].isin(OK_STATUSES)]
    fig = go.Figure()
    for i, dim in enumerate(sorted(d["data.d"].unique())):
        st = series_style(i)
        c = st["line"]["color"]
        sub = d[d["data.d"] == dim]
        ag = aggregate(sub, "init.scale", "max_angle")
        small = ag[ag["init.scale"] <= 4.0**-3]
        fit = fit_line(small["init.scale"], small["median"], True, True)
        # one legend entry per d (the fitted slope in its name), one per kind of line
        name = f"d = {dim}: ours" + (f" (slope {fit.slope:.2f})" if fit is not None else "")
        xs = ag["init.scale"].to_numpy(float)
        _band(fig, xs, np.maximum(ag["min"].to_numpy(float), 1e-12), ag["max"].to_numpy(float),
              c, name)
        fig.add_trace(go.Scatter(x=xs, y=ag["median"], mode="lines+markers", name=name,
                                 line=st["line"], marker=st["marker"], legendgroup=name,
                                 legendrank=1 + i))
        if fit is not None:
            xl = np.geomspace(small["init.scale"].min(), small["init.scale"].max(), 20)
            fig.add_trace(go.Scatter(x=xl, y=evaluate(fit, xl, True, True), mode="lines",
                                     line={"color": c, "width": st["line"]["width"] * 0.6,
                                           "dash": "dot"},
                                     name=f"d = {dim}: fit slope {fit.slope:.2f}",
                                     legendgroup="fit", showlegend=False))
        pts = sorted((4.0**k, v) for (k, dd), v in table.items() if dd == dim)
        if pts:
            px, py = np.array(pts).T
            fig.add_trace(go.Scatter(x=px, y=py, mode="markers", name=f"d = {dim}: paper "
                                     "(Table 1)", legendgroup="paper", showlegend=False,
                                     marker={"color": c, "symbol": "x", "size": 11,
                                             "line": {"width": 2}}))
            sm = px <= 4.0**-4
            if sm.any():
                C = float(np.exp(np.mean(np.log(py[sm] / px[sm]))))
                fig.add_trace(go.Scatter(x=px[sm], y=C * px[sm], mode="lines",
                                         line={"color": THEORY, "dash": "dash",
                                               "width": st["line"]["width"] * 0.6},
                                         name=f"d = {dim}: ∝ λ (paper's scaling)",
                                         legendgroup="scaling", showlegend=False))
    for group, name, line, marker in (
            ("fit", "fitted power law, λ ≤ 4⁻³ (dotted)", {"color": FIT, "dash": "dot"}, None),
            ("paper", "paper's Table 1 (×)", None, {"color": FIT, "symbol": "x", "size": 11}),
            ("scaling", "∝ λ, the paper's scaling", {"color": THEORY, "dash": "dash"}, None)):
        if any(t.legendgroup == group for t in fig.data):  # the kind's one legend entry
            fig.add_trace(go.Scatter(x=[None], y=[None], name=name, legendgroup=group,
                                     mode="lines" if line else "markers", line=line,
                                     marker=marker, legendrank=50, hoverinfo="skip"))
    return _layout(fig, "Final max angle between active neurons against λ (Chistikov et al., "
                   "Table 1)", "λ (init scale)", "max angle (degrees)", True, True, presenter)


def trap_figure(df: pd.DataFrame, presenter: bool = False) -> go.Figure:
    """Fraction of seeds trapped at the OLS plateau against init scale, per scheme; one panel
    per leaky slope γ."""
    d = df[df["status"].isin(OK_STATUSES)].copy()
    d["_trap"] = d["trapped"].astype("float")
    gammas = sorted(d["model.gamma"].unique()) if "model.gamma" in d else [None]
    fig = make_subplots(rows=1, cols=len(gammas), shared_yaxes=True,
                        subplot_titles=[f"γ = {g:g}" if g is not None else "" for g in gammas])
    schemes = list(dict.fromkeys(d["init.scheme"])) if "init.scheme" in d else [None]
    for j, g in enumerate(gammas, 1):
        sub_g = d if g is None else d[d["model.gamma"] == g]
        for i, s in enumerate(schemes):
            sub = sub_g if s is None else sub_g[sub_g["init.scheme"] == s]
            ag = aggregate(sub, "init.scale", "_trap")
            ag["mean"] = sub.groupby("init.scale")["_trap"].mean().reindex(ag["init.scale"]
                                                                             ).to_numpy()
            fig.add_trace(go.Scatter(
                x=ag["init.scale"], y=ag["mean"], mode="lines+markers",
                name=str(s), legendgroup=str(s), showlegend=j == 1,
                **series_style(i),
                customdata=ag[["count"]],
                hovertemplate="λ=%{x:.3g}<br>P(trapped)=%{y:.2f} of %{customdata[0]} "
                              "runs<extra></extra>"), row=1, col=j)
        fig.update_xaxes(type="log", title_text="init scale λ", row=1, col=j)
    fig.update_yaxes(range=[-0.05, 1.05], title_text="P(trapped at OLS)", row=1, col=1)
    fig = _layout(fig, "Spurious OLS trap (Boursier & Flammarion): fraction of seeds",
                  "init scale λ", "P(trapped at OLS)", presenter=presenter)
    # whole decades only: a minor label beside one ("0.001 2") read as another number
    fig.update_xaxes(type="log", dtick=1)
    return fig


def alignment_vs_mu_figure(df: pd.DataFrame, presenter: bool = False) -> go.Figure:
    """Min et al.'s cone time t_cone against the separation μ (log–log): runs, a fitted power
    law, and the theory's μ^(−1/2) scaling (constant fitted)."""
    d = df[df["status"].isin(OK_STATUSES)]
    fig = go.Figure()
    ag = aggregate(d, "mu", "t_cone")
    xs = ag["mu"].to_numpy(float)
    c = SERIES[0]
    _band(fig, xs, ag["min"].to_numpy(float), ag["max"].to_numpy(float), c, "runs")
    fig.add_trace(go.Scatter(x=xs, y=ag["median"], mode="lines+markers", legendgroup="runs",
                             name="t_cone (median over seeds)", line={"color": c, "width": 2.5},
                             marker={"size": 9}))
    fit = fit_line(ag["mu"], ag["median"], True, True)
    if fit is not None:
        xl = np.geomspace(xs.min(), xs.max(), 30)
        fig.add_trace(go.Scatter(x=xl, y=evaluate(fit, xl, True, True), mode="lines",
                                 line={"color": FIT, "width": 2, "dash": "dot"},
                                 name=f"fit: t ∝ μ^{fit.slope:.2f}"))
        ok = np.isfinite(ag["median"].to_numpy(float)) & (xs > 0)
        if ok.any():
            C = float(np.exp(np.mean(np.log(ag["median"].to_numpy(float)[ok])
                                     + 0.5 * np.log(xs[ok]))))
            fig.add_trace(go.Scatter(x=xl, y=C / np.sqrt(xl), mode="lines",
                                     line={"color": THEORY, "width": 2, "dash": "dash"},
                                     name="theory bound: t₁ ∝ μ^−1/2 (constant fitted)"))
    return _layout(fig, "Alignment time against separation μ (Min et al.)", "μ",
                   "t_cone (all neurons in S₊/S₋/dead)", True, True, presenter)


def phase1_figure(df: pd.DataFrame, presenter: bool = False) -> go.Figure:
    """Wang & Ma: detected end of Phase I against the angle between x₊ and x₋ (measured only;
    the paper's formulas are not available)."""
    cols = [c for c in ("t_phase_I", "t_phase_II") if c in df]
    long = pd.concat([df.assign(_t=df[c], phase=c.removeprefix("t_phase_").join(
        ("Phase ", " ends"))) for c in cols], ignore_index=True)
    fig = lines_figure(long, "data.angle_deg", "_t", color="phase", log_x=False, log_y=True,
                       presenter=presenter)
    title = ("Phase I time against the angle between x₊ and x₋ (Wang & Ma; measured only — no "
             "formula available)")
    fig.update_layout(title=title_clear_of_toolbar(title),
                      margin={"t": title_top_px(title, style_for(presenter).title)})
    fig.update_xaxes(title_text="angle between x₊ and x₋ (degrees)")
    fig.update_yaxes(title_text="time t")
    return fig


def phase_times_figure(df: pd.DataFrame, presenter: bool = False) -> go.Figure:
    """Wang & Ma: detected starts of Phases III and IV (solid, filled) and the predicted IV
    (dotted, open) against the angle δ. Colour = phase (the app's phase colours), line dash =
    class weight p, marker = init scale; NaN rows (phase not reached) drop out."""
    fig = go.Figure()
    dashes = ("solid", "dash", "dashdot", "longdash")
    symbols = ("circle", "square", "diamond", "triangle-up")
    ps, scales = sorted(df["data.p"].dropna().unique()), sorted(df["init.scale"].dropna().unique())
    curves = (("t_phase_III", "Phase III", False), ("t_phase_IV", "Phase IV", False),
              ("t_phase_IV_pred", "Phase IV", True))
    for col, phase, predicted in curves:
        if col not in df:
            continue
        for i, p in enumerate(ps):
            for j, sc in enumerate(scales):
                sub = df[(df["data.p"] == p) & (df["init.scale"] == sc)]
                ag = aggregate(sub, "data.angle_deg", col)
                ag = ag[np.isfinite(ag["median"].to_numpy(float))]
                if ag.empty:
                    continue
                label = f"{phase}{' predicted' if predicted else ''}, p = {p:g}, init {sc:g}"
                symbol = symbols[j % len(symbols)] + ("-open" if predicted else "")
                st = series_style(len(fig.data), phase_colour(phase))  # none hides another
                fig.add_trace(go.Scatter(
                    x=ag["data.angle_deg"], y=ag["median"], mode="lines+markers", name=label,
                    line={**st["line"], "dash": "dot" if predicted else dashes[i % len(dashes)]},
                    marker={"size": st["marker"]["size"], "symbol": symbol},
                    hovertemplate=f"{label}<br>δ = %{{x}}°<br>t = %{{y:.4g}}<extra></extra>"))
    return _layout(fig, "Wang & Ma phase starts against the angle δ (gf; open markers: Phase IV "
                   "predicted from h(x₊) + h(x₋) = ln(p/cos δ))",
                   "angle δ between x₊ and x₋ (degrees)", "time t", False, True, presenter)


BUILTIN_FIGURES = {
    "alignment_vs_scale": alignment_vs_scale_figure,
    "max_angle_vs_lambda": max_angle_figure,
    "trap_probability": trap_figure,
    "alignment_vs_mu": alignment_vs_mu_figure,
    "phase1_vs_angle": phase1_figure,
    "phase_times": phase_times_figure,
}


def builtin_figure(name: str, df: pd.DataFrame, presenter: bool = False) -> go.Figure:
    """The scaling plot of a built-in sweep (KeyError for an unknown name)."""
    return BUILTIN_FIGURES[name](df, presenter=presenter)


def default_figure(df: pd.DataFrame, axes: Sequence[str], y: str = "final_loss",
                   kind: str = "auto", presenter: bool = False) -> go.Figure:
    """Lines for one axis, a heatmap for two or more (first two axes; others: all values)."""
    axes = list(axes)
    if not axes:
        return lines_figure(df.assign(seed_=df["seed"]), "seed", y, presenter=presenter)
    if kind == "heatmap" and len(axes) >= 2:
        return heatmap_figure(df, axes[0], axes[1], y, presenter=presenter)
    if kind == "heatmap" or (kind == "auto" and len(axes) >= 2):
        if len(axes) >= 2:
            return heatmap_figure(df, axes[0], axes[1], y, presenter=presenter)
    color = axes[1] if len(axes) >= 2 else None
    return lines_figure(df, axes[0], y, color=color, presenter=presenter)


def finite_fraction(df: pd.DataFrame, col: str) -> float:
    """Fraction of rows with a finite value in `col` (for captions)."""
    if col not in df or len(df) == 0:
        return 0.0
    v = pd.to_numeric(df[col], errors="coerce").to_numpy(float)
    return float(np.isfinite(v).mean()) if v.size else 0.0


__all__ = ["BUILTIN_FIGURES", "Fit", "aggregate", "alignment_vs_mu_figure",
           "alignment_vs_scale_figure", "builtin_figure", "default_figure", "finite_fraction",
           "fit_line", "heatmap_figure", "lines_figure", "max_angle_figure", "phase1_figure",
           "phase_times_figure",
           "trap_figure"]
