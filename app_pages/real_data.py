"""Real data: Min et al.'s two-digit experiment (their Figure 5) on scikit-learn's 8×8 digits,
or on an uploaded CSV/NPZ of points and ±1 labels.

Thin: widgets → Config → service (ui.runner) → figure (viz.real_data). The settings are in the
URL as the fields that differ from this page's defaults (`data.classes=3,8&model.width=80`),
plus `source=upload` and `view.*`; an uploaded file itself is not (a link cannot carry it).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from dynamics.config import Config, ConfigError
from dynamics.uploads import UploadError, example_csv, parse_upload
from ui import runner, state
from ui.controls import EPS_CHOICES, error_summary
from viz.real_data import real_data_figure

P = "rd"
DEFAULT = Config.from_dict({
    "data": {"kind": "digits", "classes": [0, 1], "centre": True},
    "model": {"width": 50},
    "loss": {"kind": "exponential", "reduction": "sum"},
    "init": {"scheme": "gaussian", "scale": 1e-6, "normalisation": "none"},
    "integrator": {"method": "gd", "lr": 2e-3, "t_end": 2.0},
    "record": {"frames": 120, "t_first": 2e-3},
})
# settings this page edits (URL keys); everything else stays at DEFAULT
PATHS = ("data.classes", "data.n_per_class", "data.centre", "model.width", "model.gamma",
         "init.scheme", "init.scale", "loss.kind", "loss.reduction", "integrator.method",
         "integrator.lr", "integrator.t_end", "integrator.rtol", "record.frames", "seed")
SOURCES = ("digits", "upload")
PLOTLY_CONFIG = {"displaylogo": False, "scrollZoom": False,
                 "modeBarButtonsToRemove": ["lasso2d", "select2d", "autoScale2d"],
                 "toImageButtonOptions": {"format": "png", "filename": "early-alignment-digits",
                                          "scale": 2, "width": 1400, "height": 760}}


def _flat(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "none"
    if isinstance(v, list | tuple):
        return ",".join(_fmt(x) for x in v)
    return repr(v) if isinstance(v, float) else str(v)


def params_from_state(config: Config, source: str, time_axis: str, presenter: bool
                      ) -> dict[str, str]:
    """URL parameters: the edited settings that differ from DEFAULT, the source, the view."""
    cur, base = _flat(config.to_dict()), _flat(DEFAULT.to_dict())
    out = {k: _fmt(cur[k]) for k in PATHS if k in cur and cur[k] != base.get(k)}
    if source != "digits":
        out["source"] = source
    if time_axis != "log":
        out["view.time_axis"] = time_axis
    if presenter:
        out["view.presenter"] = "true"
    return dict(sorted(out.items()))


def state_from_params(params: dict[str, str]) -> tuple[Config, str, str, bool, list[str]]:
    """(config, source, time axis, presenter, warnings): each bad parameter is dropped with a
    warning; never raises."""
    cfg, warnings = DEFAULT, []
    source, time_axis, presenter = "digits", "log", False
    for k, v in params.items():
        if k == "source":
            if v in SOURCES:
                source = v
            else:
                warnings.append(f"ignored source={v[:40]!r}: must be digits or upload")
        elif k == "view.time_axis":
            if v in ("log", "linear"):
                time_axis = v
            else:
                warnings.append(f"ignored view.time_axis={v[:40]!r}: must be log or linear")
        elif k == "view.presenter":
            presenter = v.lower() in ("true", "1")
        elif k not in PATHS:
            warnings.append(f"ignored {k}: not a setting of this page")
        else:
            try:
                cfg = cfg.with_updates({k: v})
            except (ConfigError, ValueError, TypeError) as e:
                msg = "; ".join(m for _, m in e.errors) if isinstance(e, ConfigError) else str(e)
                warnings.append(f"ignored {k}={v[:40]!r}: {msg}")
    return cfg, source, time_axis, presenter, warnings


def _key(path: str) -> str:
    return f"{P}.{path}"


def _load_url_once() -> list[str]:
    ss = st.session_state
    if _key("_loaded") in ss:
        return list(ss.get(_key("_url_warnings"), []))
    params = {k: (v[-1] if isinstance(v, list) and v else v)
              for k, v in st.query_params.to_dict().items()}
    cfg, source, time_axis, presenter, warnings = state_from_params(params)
    flat = _flat(cfg.to_dict())
    for path in PATHS:
        ss[_key(path)] = flat[path]
    ss[_key("data.classes.0")], ss[_key("data.classes.1")] = cfg.data.classes  # type: ignore
    ss[_key("data.n_per_class")] = cfg.data.n_per_class or 0  # type: ignore[union-attr]
    ss[_key("source")] = source
    ss[_key("view.time_axis")] = time_axis
    ss[_key("view.presenter")] = presenter
    ss[_key("_loaded")] = True
    ss[_key("_url_warnings")] = warnings
    return warnings


def _eps_options(value: float) -> list[float]:
    return sorted({*EPS_CHOICES, float(value)})


@st.cache_data(max_entries=8, show_spinner=False)
def _parse(name: str, data: bytes, loss: str, map_01: bool) -> Any:
    return parse_upload(name, data, loss=loss, map_01=map_01)


# ----------------------------------------------------------------------------- page
url_warnings = _load_url_once()
ss = st.session_state

try:
    from ui.presenter import apply_presenter, chart, fill_screen, session_flag_off
except ImportError:  # pragma: no cover
    apply_presenter = chart = fill_screen = session_flag_off = None  # type: ignore[assignment]
if apply_presenter is not None:
    apply_presenter(bool(ss[_key("view.presenter")]), on_exit=session_flag_off,
                    args=(_key("view.presenter"),))

upload_msgs: list[str] = []
upload_data: Any = None
upload_summary = ""
with st.sidebar:
    source = st.radio("Data", SOURCES, key=_key("source"), horizontal=True,
                      format_func={"digits": "8×8 digits", "upload": "upload CSV/NPZ"}.get)
    if source == "digits":
        c1, c2 = st.columns(2)
        with c1:
            cls_a = st.selectbox("digit (+1)", list(range(10)), key=_key("data.classes.0"))
        with c2:
            cls_b = st.selectbox("digit (−1)", list(range(10)), key=_key("data.classes.1"))
        n_per = st.number_input("images per class (0: all, ≈180)", min_value=0, step=10,
                                key=_key("data.n_per_class"))
        centre = st.checkbox("centre (subtract the mean image)", key=_key("data.centre"))
    else:
        st.caption("A CSV with a label column (y, label or target; else the last column) or "
                   "an .npz with arrays X and y. Labels must be −1 and +1 (or 0/1 mapped). "
                   "The file is not part of the page's link.")
        up = st.file_uploader("points and labels", type=["csv", "txt", "npz"],
                              key=_key("upload"))
        map_01 = st.checkbox("map labels 0 → −1, 1 → +1", key=_key("map01"))
        st.download_button("Example CSV", data=example_csv(), file_name="example_points.csv",
                           mime="text/csv", key=_key("example"), on_click="ignore",
                           icon=":material/download:")
    st.divider()
    c1, c2 = st.columns(2)
    with c1:
        width = st.number_input("width m", min_value=1, step=10, key=_key("model.width"))
    with c2:
        gamma = st.number_input("leaky slope γ", min_value=0.0, max_value=1.0, step=0.05,
                                format="%g", key=_key("model.gamma"))
    c1, c2 = st.columns(2)
    with c1:
        scheme = st.selectbox("initialisation", ["gaussian", "balanced"],
                              key=_key("init.scheme"),
                              help="gaussian: w and a independent N(0, α²) (Min et al.'s "
                                   "experiments); balanced: |a_j| = ‖w_j‖.")
    with c2:
        scale = st.select_slider("α (init scale)", options=_eps_options(ss[_key("init.scale")]),
                                 key=_key("init.scale"), format_func=lambda v: f"{v:.3g}")
    c1, c2 = st.columns(2)
    with c1:
        loss_kind = st.selectbox("loss", ["exponential", "logistic", "square"],
                                 key=_key("loss.kind"))
    with c2:
        reduction = st.selectbox("reduction", ["sum", "mean"], key=_key("loss.reduction"))
    method = st.radio("integrator", ["gd", "gf"], key=_key("integrator.method"),
                      horizontal=True, format_func={"gd": "gradient descent",
                                                    "gf": "gradient flow"}.get)
    c1, c2 = st.columns(2)
    with c1:
        t_end = st.number_input("end time t", min_value=0.0, step=0.5, format="%g",
                                key=_key("integrator.t_end"))
    with c2:
        if method == "gd":
            lr = st.number_input("step η", min_value=0.0, step=1e-3, format="%g",
                                 key=_key("integrator.lr"))
        else:
            lr = float(ss.get(_key("integrator.lr"), DEFAULT.integrator.lr))
    c1, c2 = st.columns(2)
    with c1:
        frames = st.number_input("frames", min_value=2, step=20, key=_key("record.frames"))
    with c2:
        seed = st.number_input("seed", min_value=0, step=1, key=_key("seed"))
    time_axis = st.radio("time axis", ["log", "linear"], key=_key("view.time_axis"),
                         horizontal=True)
    presenter = st.toggle("presenter mode (large text)", key=_key("view.presenter"))

st.markdown("### Real data: two digit classes (Min et al., Figure 5)")
st.caption(
    "Min, Mallada & Vidal train a width-50 two-layer ReLU net on MNIST 0 vs 1 from a tiny "
    "Gaussian start (α = 1e-6, GD η = 2e-3): the neurons first **align** — those with "
    "a_j > 0 with x₊ = Σ of the +1 images, those with a_j < 0 with x₋ — while ‖W‖ stays "
    "tiny; then ‖W‖₂² **grows**, the loss falls and the stable rank sits near 1. Here the "
    "same experiment runs on scikit-learn's 8×8 digits (about 180 images per class), so its "
    "times are those of this data, not MNIST's.")
if url_warnings:
    st.warning("Some link parameters could not be used and were replaced by defaults:\n\n"
               + "\n".join(f"- {w}" for w in url_warnings))

d: dict[str, Any] = DEFAULT.to_dict()
if source == "digits":
    d["data"] = {"kind": "digits", "classes": [int(cls_a), int(cls_b)],
                 "n_per_class": int(n_per) or None, "centre": bool(centre), "bias": False}
else:
    if up is None:
        st.info("Upload a CSV or NPZ file of points and ±1 labels in the sidebar (or download "
                "the example CSV there), or switch back to the digits.")
    else:
        try:
            parsed = _parse(up.name, up.getvalue(), loss_kind, bool(map_01))
        except UploadError as e:
            upload_msgs = e.messages
        else:
            labels = set(np.unique(parsed.y).tolist())
            if labels != {-1.0, 1.0}:
                upload_msgs = [f"This page needs two classes labelled −1 and +1; the file's "
                               f"labels are {', '.join(f'{v:g}' for v in sorted(labels)[:6])}."]
            else:
                upload_data = parsed.data.model_dump(mode="json")
                upload_summary = parsed.summary + "".join(f" {n}" for n in parsed.notes)
    if upload_msgs:
        st.error("The uploaded file cannot be used:\n\n"
                 + "\n".join(f"- {m}" for m in upload_msgs))
    if upload_data is not None:
        d["data"] = upload_data
        st.caption(f"Uploaded: {upload_summary} The file is not stored in the link: "
                   "whoever opens it uploads it again. The default end time suits the "
                   "digits; other data may need a longer run (end time t in the sidebar).")
d["model"] = {**d["model"], "width": int(width), "gamma": float(gamma)}
d["init"] = {**d["init"], "scheme": scheme, "scale": float(scale)}
d["loss"] = {"kind": loss_kind, "reduction": reduction}
d["integrator"] = {**d["integrator"], "method": method, "t_end": float(t_end), "lr": float(lr)}
d["record"] = {**d["record"], "frames": int(frames)}
d["seed"] = int(seed)
if float(t_end) <= d["record"]["t_first"]:
    d["record"]["t_first"] = None  # let recording pick its first time

ready = source == "digits" or upload_data is not None
config: Config | None = None
if ready:
    try:
        config = Config.from_dict(d)
    except ConfigError as e:
        st.error(error_summary(e))
url_config = config
if url_config is None and not ready:  # upload mode, no file yet: keep the other settings
    try:
        url_config = Config.from_dict({**d, "data": DEFAULT.to_dict()["data"]})
    except ConfigError:
        url_config = None
params: dict[str, str] = {}
if url_config is not None:
    params = params_from_state(url_config, source, time_axis, bool(presenter))
    current = {k: (v[-1] if isinstance(v, list) and v else v)
               for k, v in st.query_params.to_dict().items()}
    if current != params:
        st.query_params.from_dict(params)
if config is not None:
    got = runner.run_and_analyse(config, prefix=P, what="Phase detection and theory")
    if got is not None:
        traj, analysis = got
        fig = real_data_figure(traj, analysis, time_axis=time_axis,  # type: ignore[arg-type]
                               presenter=bool(presenter))
        if chart is not None and fill_screen is not None:
            shown = fill_screen(go.Figure(fig)) if presenter else fig
            chart(shown, key="real_data_figure", presenter=bool(presenter),
                  config=PLOTLY_CONFIG)
        else:  # pragma: no cover
            st.plotly_chart(fig, theme=None, config=PLOTLY_CONFIG, key="real_data_figure")
        phases = {p.name: p for p in (analysis.phases if analysis else ())
                  if p.source == "detected"}
        facts = []
        gd, lr_used = config.integrator.method == "gd", config.integrator.lr

        def it(t: float) -> str:
            return f" (iteration {round(t / lr_used):,})" if gd else ""

        if "alignment" in phases:
            t_a = phases["alignment"].end
            facts.append(f"alignment detected until t = {t_a:.3g}{it(t_a)}")
        if "fitting" in phases:
            t_f = phases["fitting"].start
            facts.append(f"the loss starts to fall at t = {t_f:.3g}{it(t_f)}")
        sr = traj.frame_metrics.get("stable_rank")
        if sr is not None and len(sr):
            facts.append(f"final stable rank {float(sr[-1]):.3g}")
        if facts:
            st.markdown("**This run:** " + "; ".join(facts) + ".")
        st.caption(
            "Shaded: detected alignment (blue), fitting (orange) and convergence (green) "
            "phases. V₊ and V₋ are taken from sign(a_j(t)) at each time, as Min et al. do for "
            "their unbalanced start (a_j can change sign early on). Pictures: each of w̄₊, "
            "w̄₋, x̄₊ = x₊/|I₊|, x̄₋ is divided by its own largest |entry|. "
            "**Loss:** Min et al. do not say whether they used the exponential or the "
            "logistic loss; the default here is the exponential loss with a sum over the "
            "data (their L is a sum), and both are offered.")
        try:
            from ui.downloads import download_panel
        except ImportError:  # pragma: no cover
            download_panel = None  # type: ignore[assignment]
        if download_panel is not None:
            with st.expander("Downloads", expanded=False):
                download_panel(traj, fig, key="rd.dl")
        with st.expander("Share this view", expanded=False):
            st.caption("This link reopens these settings"
                       + (" (not the uploaded file: upload it again)." if source == "upload"
                          else "."))
            st.code(state.share_link(params), language=None)
