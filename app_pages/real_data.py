"""Real data: Min et al.'s two-digit experiment (their Figure 5) on scikit-learn's 8×8 digits,
or on an uploaded CSV/NPZ of points and ±1 labels.

Thin: widgets → Config → service (ui.runner) → figure (viz.real_data). The binder (ui.state)
keeps in the URL the settings that differ from this page's defaults
(`data.classes=3,8&model.width=80`) and the view (`source=upload`, `view.*`); an uploaded file
itself is not (a link cannot carry it).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import streamlit as st
from pydantic import Field

import runtime
from dynamics.config import Config, ConfigError, InitConfig, IntegratorConfig, LossConfig
from dynamics.papers.min import digits_config
from dynamics.uploads import UploadError, example_csv, parse_upload
from ui import charts, downloads, figures, presenter, runner, share, state, text
from ui.controls import (
    EPS_CHOICES,
    METHOD_LABELS,
    ReadableError,
    error_summary,
    number_rules,
)
from ui.inputs import number_field, plain
from ui.settings import SETTINGS
from ui.view import TimeAxis, View, field_options, page_view

P = "rd"
FIG_KEY = "real_data_figure"
# Min et al.'s digits 0 vs 1 preset (all images, their Figure 5), to t = 2 for a first look
DEFAULT = digits_config(quick=False).with_updates({"integrator.t_end": 2.0})
# settings this page edits (URL keys); everything else stays at DEFAULT
PATHS = ("data.classes", "data.n_per_class", "data.centre", "model.width", "model.gamma",
         "init.scheme", "init.scale", "loss.kind", "loss.reduction", "integrator.method",
         "integrator.lr", "integrator.t_end", "integrator.rtol", "record.frames", "seed")
Source = Literal["digits", "upload"]


@page_view(globals())
class RealDataView(View):
    """Where the data comes from and the time axis (the run itself is the Config)."""

    source: Source = Field("digits", alias="source")
    time_axis: TimeAxis = Field("log", alias="view.time_axis")
B = state.Binder(P, RealDataView, {"run": state.ConfigSlot(base=lambda _v: DEFAULT,
                                                           paths=PATHS)})


def _key(path: str) -> str:
    return f"{P}.{path}"


def _seed(cfg: Config, view: RealDataView, fresh: bool) -> None:
    """Put the state the binder read into the widgets (when fresh or not drawn yet)."""
    d = cfg.data if cfg.data.kind == "digits" else DEFAULT.data
    flat = {"model.width": cfg.model.width, "model.gamma": cfg.model.gamma,
            "init.scheme": cfg.init.scheme, "init.scale": cfg.init.scale,
            "loss.kind": cfg.loss.kind, "loss.reduction": cfg.loss.reduction,
            "integrator.method": cfg.integrator.method, "integrator.lr": cfg.integrator.lr,
            "integrator.t_end": cfg.integrator.t_end, "record.frames": cfg.record.frames,
            "seed": cfg.seed, "data.classes.0": d.classes[0],  # type: ignore[union-attr]
            "data.classes.1": d.classes[1],  # type: ignore[union-attr]
            "data.n_per_class": d.n_per_class or 0,  # type: ignore[union-attr]
            "data.centre": d.centre,  # type: ignore[union-attr]
            "source": view.source, "view.time_axis": view.time_axis}
    for path, value in flat.items():
        B.seed(_key(path), value, fresh)
RULES = number_rules()
LABELS = {"data.classes": "digits", "init.scale": "α (init scale)"}


def _help(path: str) -> str:
    """The settings table's help of `path` (`ui.settings`: one wording on every page)."""
    return SETTINGS[path].help


def _eps_options(value: float) -> list[float]:
    return sorted({*EPS_CHOICES, float(value)})


def page() -> None:
    """The page (st.Page calls it on every run; no page state lives at module level)."""
    problems: list[tuple[str, str]] = []  # (setting, message) of values the page cannot take

    def _number(path: str, label: str, *, step: float = 1.0, default: float = 0.0) -> float:
        """A number field that takes what is typed; a rejected value gets its message right under
        the field (and the run waits), the page's default standing in."""
        value, problem = number_field(label, _key(path), RULES[path], step=step,
                                      help=_help(path))
        if problem:
            problems.append((path, problem))
            st.error(problem)
            return default
        return value

    def _parsed_upload(up: Any, loss: str, map_01: bool) -> tuple[dict[str, Any] | None, list[str]]:
        """The uploaded file's arrays and summary (None and the reasons when it cannot be used),
        parsed once per file and setting and kept in this session only: the previous file's
        arrays are dropped before a new one is parsed, a refused file keeps just its messages,
        and nothing is shared between sessions (a parse is as large as its arrays)."""
        slot = _key("upload_parsed")
        key = (getattr(up, "file_id", "") or up.name, up.size, loss, bool(map_01))
        held = ss.get(slot)
        if held is not None and held["key"] == key:
            return held["data"], held["msgs"]
        ss.pop(slot, None)
        runtime.current().pages.divert()  # a parse (up to 164 MB): other visitors' pages go on
        data: dict[str, Any] | None = None
        msgs: list[str] = []
        try:
            parsed = parse_upload(up.name, up.getvalue(), loss=loss, map_01=map_01)
        except UploadError as e:
            msgs = [plain(m) for m in e.messages]
        else:
            labels = set(np.unique(parsed.y).tolist())
            if labels != {-1.0, 1.0}:
                msgs = [f"This page needs two classes labelled −1 and +1; the file's labels are "
                        f"{', '.join(f'{v:g}' for v in sorted(labels)[:6])}."]
            else:  # the arrays themselves (read-only, never copied into the config)
                data = {"X": parsed.X, "y": parsed.y,
                        "summary": parsed.summary + "".join(f" {n}" for n in parsed.notes)}
        ss[slot] = {"key": key, "data": data, "msgs": msgs}
        return data, msgs
    # ----------------------------------------------------------------------------- page
    bound = B.load()
    _seed(bound.configs["run"], bound.view, bound.fresh)
    ss = st.session_state
    presenter.mode(_key("view.presenter"), bound.view.presenter, bound.fresh)
    upload_msgs: list[str] = []
    upload_data: Any = None
    upload_summary = ""
    with st.sidebar:
        presenter_on = presenter.switch(_key("view.presenter"))  # first: found at once
        source = st.radio("Data", RealDataView.options("source"), key=_key("source"),
                          horizontal=True, help="Scikit-learn's 8×8 images of handwritten "
                          "digits (two classes, Min et al.'s Figure 5), or your own file of "
                          "points with ±1 labels.",
                          format_func={"digits": "8×8 digits", "upload": "upload CSV/NPZ"}.get)
        if source == "digits":
            c1, c2 = st.columns(2)
            with c1:
                cls_a = st.selectbox("digit (+1)", list(range(10)), key=_key("data.classes.0"),
                                     help=_help("data.classes.0"))
            with c2:
                cls_b = st.selectbox("digit (−1)", list(range(10)), key=_key("data.classes.1"),
                                     help=_help("data.classes.1"))
            n_per = _number("data.n_per_class", "images per class (0: all, ≈180)", step=10)
            centre = st.checkbox("centre (subtract the mean image)", key=_key("data.centre"),
                                 help=_help("data.centre"))
        else:
            st.caption("A CSV with a label column (y, label or target; else the last column) or "
                       "an .npz with arrays X and y. Labels must be −1 and +1 (or 0/1 mapped). "
                       "The file is not part of the page's link.")
            up = st.file_uploader("points and labels", type=["csv", "txt", "npz"],
                                  key=_key("upload"), help=_help("data.X"))
            map_01 = st.checkbox("map labels 0 → −1, 1 → +1", key=_key("map01"),
                                 help="For a file labelled 0 and 1: read 0 as −1 and 1 as +1 "
                                      "(this page needs ±1 labels).")
            st.download_button("Example CSV", data=example_csv(), file_name="example_points.csv",
                               mime="text/csv", key=_key("example"), on_click="ignore",
                               icon=":material/download:",
                               help="A small file in the format this page reads, to start "
                                    "from.")
        st.divider()
        c1, c2 = st.columns(2)
        with c1:
            width = _number("model.width", "width m", step=10, default=DEFAULT.model.width)
        with c2:
            gamma = _number("model.gamma", "leaky slope γ", step=0.05)
        c1, c2 = st.columns(2)
        with c1:
            scheme = st.selectbox("initialisation",  # the two schemes of Min et al.'s setting
                                  [s for s in field_options(InitConfig, "scheme")
                                   if s in ("gaussian", "balanced")],
                                  key=_key("init.scheme"),
                                  help="gaussian: w and a independent N(0, α²) (Min et al.'s "
                                       "experiments); balanced: |a_j| = ‖w_j‖.")
        with c2:
            scale = st.select_slider("α (init scale)", options=_eps_options(ss[_key("init.scale")]),
                                     key=_key("init.scale"), format_func=lambda v: f"{v:.3g}",
                                     help="Size of the initial weights (Min et al. call it α): "
                                          "smaller α keeps the neurons aligning longer before "
                                          "they grow.")
        c1, c2 = st.columns([3, 2])  # "exponential" needs the room
        with c1:
            loss_kind = st.selectbox("loss", field_options(LossConfig, "kind"),
                                     key=_key("loss.kind"), help=_help("loss.kind"))
        with c2:
            reduction = st.selectbox("reduction", field_options(LossConfig, "reduction"),
                                     key=_key("loss.reduction"), help=_help("loss.reduction"))
        method = st.radio("integrator", field_options(IntegratorConfig, "method"),
                          key=_key("integrator.method"), horizontal=True,
                          format_func=METHOD_LABELS.get, help=_help("integrator.method"))
        c1, c2 = st.columns(2)
        with c1:
            t_end = _number("integrator.t_end", "end time t", step=0.5,
                            default=DEFAULT.integrator.t_end)
        with c2:
            if method == "gd":
                lr = _number("integrator.lr", "step η", step=1e-3, default=DEFAULT.integrator.lr)
            else:
                lr = float(ss.get(_key("integrator.lr"), DEFAULT.integrator.lr))
        c1, c2 = st.columns(2)
        with c1:
            frames = _number("record.frames", "frames", step=20, default=DEFAULT.record.frames)
        with c2:
            seed = _number("seed", "seed")
        time_axis = st.radio("time axis", RealDataView.options("time_axis"),
                             key=_key("view.time_axis"), horizontal=True,
                             help=_help("view.time_axis"))
    if presenter_on:  # compact header: the figure comes first on a projector
        st.markdown("**Real data: two digit classes (Min et al., Figure 5)**")
    else:
        st.markdown("### Real data: two digit classes (Min et al., Figure 5)")
    with presenter.intro(bool(presenter_on), "About this experiment"):
        st.caption(
            "Min, Mallada & Vidal train a width-50 two-layer ReLU net on MNIST 0 vs 1 from a tiny "
            "Gaussian start (α = 1e-6, GD η = 2e-3): the neurons first **align** — those with "
            "a_j > 0 with x₊ = Σ of the +1 images, those with a_j < 0 with x₋ — while ‖W‖ stays "
            "tiny; then ‖W‖₂² **grows**, the loss falls and the stable rank sits near 1. Here the "
            "same experiment runs on scikit-learn's 8×8 digits (about 180 images per class), so "
            "its times are those of this data, not MNIST's.")
    if bound.warnings:
        st.warning(text.with_list("Some link parameters could not be used and were replaced by "
                                  "defaults:", bound.warnings))
    d: dict[str, Any] = DEFAULT.to_dict()
    if source == "digits":
        ss.pop(_key("upload_parsed"), None)  # an upload's arrays are not kept for later
        d["data"] = {"kind": "digits", "classes": [int(cls_a), int(cls_b)],
                     "n_per_class": int(n_per) or None, "centre": bool(centre), "bias": False}
    else:
        if up is None:
            ss.pop(_key("upload_parsed"), None)
            st.info("Upload a CSV or NPZ file of points and ±1 labels in the sidebar (or download "
                    "the example CSV there), or switch back to the digits.")
        else:
            got, upload_msgs = _parsed_upload(up, loss_kind, bool(map_01))
            if got is not None:
                upload_data = {"kind": "array", "X": got["X"], "y": got["y"], "bias": False}
                upload_summary = got["summary"]
        if upload_msgs:
            st.error(text.with_list("The uploaded file cannot be used:", upload_msgs))
        if upload_data is not None:
            d["data"] = upload_data
            st.caption(f"Uploaded: {text.literal(upload_summary)} The file is not stored in the "
                       "link: "
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
    ready = (source == "digits" or upload_data is not None) and not problems
    config: Config | None = None
    if problems:
        st.error(error_summary(ReadableError(problems)))
    elif ready:
        try:
            config = Config.from_dict(d)
        except ConfigError as e:
            st.error(error_summary(e, LABELS))
    if config is None and (problems or upload_msgs or ready):  # keep the last good figure
        charts.stale(FIG_KEY, presenter=bool(presenter_on))
    url_config = config
    waiting = source == "upload" and upload_data is None
    if url_config is None and waiting and not problems:  # no file yet: keep the other settings
        try:
            url_config = Config.from_dict({**d, "data": DEFAULT.to_dict()["data"]})
        except ConfigError:
            url_config = None
    params: dict[str, str] = {}
    view = RealDataView(source=source, time_axis=time_axis, presenter=bool(presenter_on))
    if url_config is not None:
        params = B.sync(view, {"run": url_config})
    if config is not None:
        got = runner.run_and_analyse(config, prefix=P, what="Phase detection and theory")
        if got is not None:
            traj, analysis = got
            fig = figures.real_data(traj, analysis, charts.options_of(view))
            charts.animated(fig, key=FIG_KEY, presenter=view.presenter,
                            filename="early-alignment-digits")
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
                "The strip above the time panels names the detected phases (hover for details); "
                "the panels are tinted by them. V₊ and V₋ are taken from sign(a_j(t)) at each "
                "time, as Min et al. do for their unbalanced start (a_j can change sign early "
                "on). Pictures: each of w̄₊, "
                "w̄₋, x̄₊ = x₊/|I₊|, x̄₋ is divided by its own largest |entry|. "
                "**Loss:** Min et al. do not say whether they used the exponential or the "
                "logistic loss; the default here is the exponential loss with a sum over the "
                "data (their L is a sum), and both are offered.")
            with st.expander("Downloads", expanded=False):
                downloads.download_panel(traj, fig, key="rd.dl")
            share.share_box(f"{P}.share", "This link reopens these settings"
                            + (" (not the uploaded file: upload it again)."
                               if source == "upload" else "."), state.share_link(params))

if __name__ == "__main__":  # run as a script (AppTest.from_file, streamlit run)
    page()
