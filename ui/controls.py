"""The control panel: widgets for every setting of a run, held in session state (seeded from
the page's binder, `ui.state`), that build a validated `Config` (and the figure's view).

Reusable by other pages: `control_panel(prefix, base, fresh=...)` draws the widgets where it is
called (e.g. inside `with st.sidebar:`) and returns a `Controls` result holding the Config or
the ConfigError; messages are shown next to the control they belong to, in the words of the
page (`ui.inputs`: the control's label, one-based table rows, what is allowed, what was typed).
Every widget is drawn from its row of the settings table (`ui.settings`): its label, its one
line of help, its options and how they read, its range. This module only lays them out.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import streamlit as st

import runtime
from dynamics import ladders
from dynamics.config import DATA_CLASSES, Config, ConfigError, IntegratorConfig
from dynamics.limits import get_limits
from dynamics.timescales import AutoTime, with_auto_time
from dynamics.uploads import UploadError, example_csv, parse_upload

from . import presenter, settings
from .inputs import friendly, number_field, parse_cell, plain, shown
from .rules import Rule
from .settings import (
    DATA_LABELS,
    EPS_CHOICES,
    METHOD_LABELS,
    NORMALISATION_LABELS,
    RTOL_CHOICES,
    Setting,
)
from .state import EXPLORER_KEY as KEY_PREFIX
from .state import needs_seed, seed
from .text import literal
from .view import FigureView

SERVER = settings.SERVER
PATH_LABELS: dict[str, str] = settings.labels()  # messages name the control, never the path
CELL_RULES: dict[str, Rule] = settings.cell_rules()
number_rules = settings.number_rules  # what each number field accepts (limits read now)


class ReadableError(ConfigError):
    """A ConfigError whose messages are already in the page's words (each starts with the
    control it is about)."""


# a sidebar wide enough for the data table's columns (label included) beside its row markers;
# number fields without their clear (×) button: in a half-width column it left 40 px for the
# value ("0.01" was cut); a field is still emptied by deleting its text
SIDEBAR_CSS = """<style>
section[data-testid="stSidebar"][data-collapsed="false"] { min-width: 370px !important; }
section[data-testid="stSidebar"] [data-testid="stNumberInputClearButton"] {
  display: none !important; }
</style>"""
CELL_WIDTH = {"angles_deg": 78, "radii": 66, "labels": 62, "x": 90, "y": 90}  # px


def widget_key(path: str, prefix: str = KEY_PREFIX) -> str:
    """Session-state key of the widget bound to a dotted config path (or `view.*`)."""
    return f"{prefix}.{path}"


@dataclass
class Controls:
    """What the panel built: a Config (or the error, its messages already in the page's
    words), the display options, the widgets' error slots (dotted path → placeholder), and
    notes for the main area (e.g. "no file uploaded yet")."""

    config: Config | None
    view: FigureView | None
    error: ConfigError | None = None
    raw: dict[str, Any] = field(default_factory=dict)
    slots: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    t_end_auto: bool | None = None  # the "auto" end-time choice (None: not offered)
    auto: AutoTime | None = None  # the auto time range the run uses (t_end_auto on)
    url_config: Config | None = None  # the Config for the link: t_end left "auto" (default)

    @property
    def ok(self) -> bool:
        return self.config is not None

    @property
    def link_config(self) -> Config | None:
        """The Config to record in the URL: with t_end auto, the one before the auto range
        (its t_end the default, so the link says "auto", not a number)."""
        return self.url_config if self.url_config is not None else self.config


def _get(d: dict[str, Any], path: str) -> Any:
    cur: Any = d
    for p in path.split("."):
        if not isinstance(cur, dict) or p not in cur:
            return None
        cur = cur[p]
    return cur


def _set(d: dict[str, Any], path: str, value: Any) -> None:
    parts = path.split(".")
    cur = d
    for p in parts[:-1]:
        cur = cur.setdefault(p, {})
    cur[parts[-1]] = value


def _identity(v: Any) -> Any:
    return v


class _Panel:
    """Draws widgets from their settings rows, seeded from a base config; collects their
    values into a config dict and the messages of values it could not take (`problems`,
    dotted path → message)."""

    def __init__(self, base: Config, prefix: str, fresh: bool):
        self.base = base.to_dict()
        self.prefix = prefix
        self.fresh = fresh
        self.values: dict[str, Any] = {}
        self.slots: dict[str, Any] = {}
        self.problems: list[tuple[str, str]] = []
        self.notes: list[str] = []
        self.limits = get_limits()
        self.t_end_auto: bool | None = None  # offered when not None (see control_panel)
        self.auto_note: Any = None  # placeholder for the "t_end = … (auto: …)" line

    @property
    def kind(self) -> str:
        return str(self.base["data"]["kind"])

    def row(self, path: str) -> Setting:
        return settings.setting(path, self.kind if path.startswith("data.") else None)

    def key(self, path: str) -> str:
        return widget_key(path, self.prefix)

    def seed(self, path: str, value: Any) -> str:
        return seed(self.key(path), value, self.fresh)

    def slot(self, path: str) -> None:
        self.slots[path] = st.empty()

    def widget(self, path: str, make: Callable[..., Any] | None = None,
               label: str | None = None, *, to_widget: Callable[[Any], Any] = _identity,
               from_widget: Callable[[Any], Any] = _identity, options: Any = None,
               value: Any = None, **kw: Any) -> Any:
        """The widget of `path`'s settings row (select, radio, slider or checkbox, with its
        label, help, options and their labels), seeded from the base config (or `value`),
        its value stored back. `make`, `label` and keyword arguments override the row's (a
        widget of a setting the table does not have yet)."""
        row = settings.find(path, self.kind if path.startswith("data.") else None)
        base = _get(self.base, path)
        k = self.seed(path, to_widget(value if value is not None else base))
        args: dict[str, Any] = {"key": k, "help": row.help if row else None}
        if row is not None and row.widget in ("select", "radio", "slider"):
            args["options"] = list(options if options is not None else row.choices())
            args["format_func"] = row.option_label
        elif options is not None:
            args["options"] = list(options)
        if row is not None and row.widget == "radio":
            args["horizontal"] = True
        if make is None:
            assert row is not None, f"no settings row for {path}"
            make = {"select": st.selectbox, "radio": st.radio, "slider": st.select_slider,
                    "checkbox": st.checkbox, "toggle": st.toggle,
                    "text": st.text_input}[row.widget]
        got = make(label or (row.label if row else path), **{**args, **kw})
        self.values[path] = from_widget(got)
        self.slot(path)
        return got

    def number(self, path: str, *, to_widget: Callable[[Any], Any] = _identity,
               from_widget: Callable[[Any], Any] = _identity) -> Any:
        """The number field of `path`'s settings row, taking what is typed
        (`ui.inputs.number_field`); a value its rule rejects becomes a message next to it and
        the config is not built."""
        row = self.row(path)
        k = self.seed(path, to_widget(_get(self.base, path)))
        rule = row.rule(self.limits)
        assert rule is not None, path
        value, problem = number_field(row.label, k, rule, step=row.step, help=row.help)
        if problem:
            self.problems.append((path, problem))
        else:
            self.values[path] = from_widget(value)
        self.slot(path)
        return value


def _none_if_zero(v: Any) -> Any:
    return None if v in (0, 0.0, None) else v


#: Rows of a data table listed in the sidebar (the editor holds them all).
TABLE_ROWS_SHOWN = 8
_ROWS_CSS = ("<style>.eae-rows{border-collapse:collapse;font-size:0.85rem;width:100%}"
             ".eae-rows th,.eae-rows td{padding:1px 6px;text-align:right;"
             "border-bottom:1px solid rgba(49,51,63,0.12)}.eae-rows th{font-weight:600}"
             ".eae-rows-more{font-size:0.8rem;opacity:0.7}</style>")


def rows_html(df: pd.DataFrame, columns: list[str], shown_rows: int = TABLE_ROWS_SHOWN) -> str:
    """A data table's rows as a small read-only HTML table (pandas' `to_html`, every cell
    escaped: cells are what was typed), the first `shown_rows` of them, rows counted from 1,
    and a line saying how many more."""
    head = df[columns].head(shown_rows).set_axis(range(1, min(len(df), shown_rows) + 1))
    more = len(df) - shown_rows
    note = (f'<div class="eae-rows-more">… and {more} more rows (Edit the table)</div>'
            if more > 0 else "")
    return _ROWS_CSS + head.to_html(escape=True, border=0, classes="eae-rows", na_rep="") + note


def _table(p: _Panel, kind: str, columns: tuple[str, ...], base_rows: dict[str, list[Any]],
           help_text: str) -> pd.DataFrame:
    """An editable table (st.data_editor) seeded from the base config's lists, one column per
    settings row (`data.<col>`: its label, its cells' rule as the column's help). Its cells
    are text, parsed by `_column`: a number cell of the grid would silently drop what it
    cannot hold ("1e308" became 1308).

    The sidebar lists the rows read-only and the editor opens in a popover: the grid's
    scripts (≈1.2 MB) are loaded only when it opens, so a fresh browser's first chart does
    not wait for them (≈0.8 s of a 3 s first chart on a two-core host)."""
    ss = st.session_state
    base_key = f"{p.prefix}._table_base.{kind}"
    version_key = f"{p.prefix}._table_version.{kind}"
    labels = {col: p.row(f"data.{col}").label for col in columns}
    if needs_seed(base_key, p.fresh):
        ss[base_key] = pd.DataFrame({labels[col]: [shown(float(v)) for v in base_rows[col]]
                                     for col in columns}, dtype=object)
        ss[version_key] = ss.get(version_key, 0) + 1  # a new editor: its edits start over
    st.caption(help_text)
    listing = st.container(key=f"{p.prefix}.data.rows.{kind}")
    with st.popover("Edit the table", icon=":material/edit:", width="content",
                    help="Change, add or delete rows; the figure follows each change."):
        df = st.data_editor(
            ss[base_key], key=f"{p.prefix}.data.table.{kind}.{ss[version_key]}",
            num_rows="dynamic", width="stretch", hide_index=True,
            column_config={labels[col]: st.column_config.TextColumn(
                labels[col], width=CELL_WIDTH[col],
                help=f"{p.row(f'data.{col}').help} {CELL_RULES[col].allowed().capitalize()}.")
                for col in columns})
    listing.html(rows_html(df, [labels[col] for col in columns]))
    return df


def _column(p: _Panel, df: pd.DataFrame, col: str) -> None:
    """A table column into `p.values["data.<col>"]`, or a message per bad cell (rows counted
    from 1)."""
    out: list[float] = []
    bad = False
    for i, raw in enumerate(df[p.row(f"data.{col}").label].tolist()):
        v, problem = parse_cell(raw, CELL_RULES[col], i)
        if problem:
            p.problems.append((f"data.{col}", problem))
            bad = True
        elif v is not None:
            out.append(v)
    if not bad:
        p.values[f"data.{col}"] = out
    p.slot(f"data.{col}")


def _table_of(p: _Panel, kind: str, columns: tuple[str, ...], d: dict[str, Any],
              help_text: str) -> None:
    df = _table(p, kind, columns, d, help_text)
    for col in columns:
        _column(p, df, col)


def _data_controls(p: _Panel) -> None:
    """The data kind, then that kind's own controls (`_KIND_CONTROLS`; an upload otherwise),
    then the bias."""
    kind = p.widget("data.kind", options=list(DATA_CLASSES))
    if kind != p.base["data"]["kind"]:  # switch: seed this kind's widgets from its defaults
        p.base["data"] = DATA_CLASSES[kind]().model_dump(mode="json")
    d = p.base["data"]
    _KIND_CONTROLS.get(kind, _upload_controls)(p, d)
    p.widget("data.bias")


def _numbers(p: _Panel, *paths: str) -> None:
    """Number fields side by side, one column each."""
    for col, path in zip(st.columns(len(paths)), paths, strict=True):
        with col:
            p.number(path)


def _points_controls(p: _Panel, d: dict[str, Any]) -> None:
    _table_of(p, "points", ("angles_deg", "radii", "labels"), d, "One row per data point "
              "x = r(cos θ, sin θ). Labels ±1 classify; other labels regress (square "
              "loss). Edit the table to change, add or delete rows.")


def _clusters_controls(p: _Panel, d: dict[str, Any]) -> None:
    _table_of(p, "clusters", ("angles_deg", "labels"), d, "One row per cluster centre on the "
              "circle, with its label.")
    _numbers(p, "data.radius", "data.n_per", "data.noise")


def _two_signals_controls(p: _Panel, d: dict[str, Any]) -> None:
    p.number("data.angle_deg")
    _numbers(p, "data.p", "data.norm_plus", "data.norm_minus")
    _numbers(p, "data.n_per", "data.noise")


def _teacher_controls(p: _Panel, d: dict[str, Any]) -> None:
    c1, c2 = st.columns(2)
    with c1:
        p.number("data.d")
    with c2:
        p.number("data.n", to_widget=lambda v: 0 if v is None else v,
                 from_widget=_none_if_zero)
    c1, c2 = st.columns(2)
    with c1:
        p.widget("data.scheme")
    with c2:
        p.number("data.rho", to_widget=lambda v: 0.0 if v is None else float(v),
                 from_widget=_none_if_zero)


def _three_point_controls(p: _Panel, d: dict[str, Any]) -> None:
    _table_of(p, "three_point", ("x", "y"), d, "Univariate inputs x (a bias coordinate 1 is "
              "appended) and targets y.")


def _function_controls(p: _Panel, d: dict[str, Any]) -> None:
    p.widget("data.formula")
    _numbers(p, "data.n", "data.x_min", "data.x_max")
    p.widget("data.spacing")


def _digits_controls(p: _Panel, d: dict[str, Any]) -> None:
    c1, c2 = st.columns(2)
    with c1:
        a = p.widget("data.classes.0", value=int(d["classes"][0]))
    with c2:
        b = p.widget("data.classes.1", value=int(d["classes"][1]))
    del p.values["data.classes.0"], p.values["data.classes.1"]
    p.values["data.classes"] = [a, b]
    p.slot("data.classes")
    p.number("data.n_per_class", to_widget=lambda v: 0 if v is None else v,
             from_widget=_none_if_zero)
    p.widget("data.centre")


def _vectors_controls(p: _Panel, d: dict[str, Any]) -> None:
    """Coordinates as given (a link, a paper's preset): kept whole."""
    dims = {len(r) for r in d["points"]}
    st.caption(f"{len(d['points'])} points in R^{max(dims, default=0)}, given by their "
               "coordinates (they come with the link or a paper's preset).")
    p.values["data.points"], p.values["data.labels"] = d["points"], d["labels"]
    p.slot("data.points")
    p.slot("data.labels")


def _generated_controls(p: _Panel, d: dict[str, Any]) -> None:
    gen = p.widget("data.generator")
    c1, c2, c3 = st.columns(3)
    with c1:
        p.number("data.n")
    with c2:
        p.number("data.d")
    with c3:  # each generator's own parameter
        if gen == "symmetric_separable":
            p.number("data.margin")
        elif gen == "skew_xor":
            p.number("data.angle_deg")
        elif gen == "relu_teacher":
            p.number("data.teacher_width")
    if gen in ("skew_xor", "linear_teacher"):
        p.number("data.noise")
    if gen == "orthogonal":
        p.widget("data.labels")


def _upload_controls(p: _Panel, d: dict[str, Any]) -> None:
    """Points and labels from a CSV/NPZ file (dynamics.uploads validates it). The parsed array
    is kept in this session only, once per file (the previous file's arrays are dropped before
    a new one is parsed; a refused file keeps only its messages); links do not carry uploaded
    data (see ui.state.UPLOAD_PATHS). A rejected file is a problem of the panel (the page
    keeps its last good figure)."""
    store = p.key("data._uploaded")
    rejected = p.key("data._rejected")
    lim = get_limits()
    up = st.file_uploader("CSV or NPZ of points and labels", type=["csv", "txt", "npz"],
                          key=p.key("data._file"),
                          help="CSV: one row per point, the label in the last column (or a "
                          "column named y/label/target). NPZ: arrays X and y. Limits on this "
                          f"server: {lim.max_upload_mb:g} MB, {lim.max_points:,} rows, "
                          f"{lim.max_dim:,} columns.")
    if up is None:
        st.session_state.pop(rejected, None)
    elif st.session_state.get(p.key("data._name")) != (getattr(up, "file_id", up.name),
                                                        up.size):
        st.session_state.pop(store, None)  # free the last file's arrays before this parse
        runtime.current().pages.divert()  # a parse: other visitors' pages go on meanwhile
        try:
            parsed = parse_upload(up.name, up.getvalue(), loss=p.base["loss"]["kind"])
        except UploadError as e:
            st.session_state.pop(store, None)
            st.session_state[rejected] = list(e.messages)
        else:
            st.session_state.pop(rejected, None)
            st.session_state[store] = {"X": parsed.data.X, "y": parsed.data.y,  # no copy
                                       "summary": parsed.summary}
        st.session_state[p.key("data._name")] = (getattr(up, "file_id", up.name), up.size)
    msgs = st.session_state.get(rejected)
    got = st.session_state.get(store)
    if msgs:
        p.problems.append(("data.X", "uploaded file: this file cannot be used: "
                           + "; ".join(literal(plain(m)) for m in msgs)))
    elif got is None:
        p.notes.append("No file uploaded yet: the figure shows a two-point placeholder. "
                       "Upload a CSV or NPZ file in the sidebar (Data). Links do not carry "
                       "uploaded data; upload the file again after opening a shared link.")
        st.caption("No file yet: showing a two-point placeholder.")
        got = {"X": d.get("X", [[1.0, 0.0], [0.0, 1.0]]), "y": d.get("y", [1.0, -1.0])}
    else:
        st.caption(literal(got.get("summary", "")))
    if got is not None:
        p.values["data.X"] = got["X"]
        p.values["data.y"] = got["y"]
    p.slot("data.X")
    p.slot("data.y")
    st.download_button("example CSV", example_csv(), file_name="example_points.csv",
                       mime="text/csv", key=p.key("data._example"),
                       help="A small file in the format the upload reads, to start from.")


# each data kind's own controls (any other kind: an upload)
_KIND_CONTROLS: dict[str, Callable[[_Panel, dict[str, Any]], None]] = {
    "points": _points_controls, "clusters": _clusters_controls,
    "two_signals": _two_signals_controls, "teacher": _teacher_controls,
    "three_point": _three_point_controls, "function": _function_controls,
    "digits": _digits_controls, "vectors": _vectors_controls, "generated": _generated_controls,
}


def _model_controls(p: _Panel) -> None:
    c1, c2 = st.columns(2)
    with c1:
        p.number("model.width")
    with c2:
        p.number("model.gamma")
    c1, c2 = st.columns([3, 2])  # "exponential" needs the wider column
    with c1:
        p.widget("loss.kind")
    with c2:
        p.widget("loss.reduction")
    c1, c2 = st.columns(2)
    with c1:
        p.widget("model.train_output")
    with c2:
        p.number("model.c")
    if p.base["model"].get("output_power", 0.0):  # a paper's scaling (shown once it is set)
        p.number("model.output_power")


def _init_controls(p: _Panel) -> None:
    p.widget("init.scale", options=settings.eps_ladder(float(p.base["init"]["scale"])))
    c1, c2 = st.columns(2)
    with c1:
        scheme = p.widget("init.scheme")
    with c2:
        p.widget("init.normalisation")
    if scheme == "fixed_output":
        c1, c2 = st.columns(2)
        with c1:
            p.number("init.output_value")
        with c2:
            p.widget("init.output_norm")
    elif scheme == "exp_margin":
        p.number("init.output_value")
    elif scheme == "tau_delta":
        p.number("init.imbalance")
    elif scheme == "gaussian":
        c1, c2 = st.columns(2)
        with c1:
            p.number("init.a_power")
        with c2:
            p.number("init.w_power")
    if scheme in ("tau_delta", "gaussian") or p.base["init"].get("mirror"):
        p.widget("init.mirror")


def _training_controls(p: _Panel) -> None:
    method = p.widget("integrator.method")
    c1, c2 = st.columns(2)
    with c1:
        if p.t_end_auto is not None:
            row = settings.setting("view.t_end_auto")
            p.t_end_auto = st.checkbox(row.label, key=p.seed("view.t_end_auto", p.t_end_auto),
                                       help=row.help)
        if p.t_end_auto:
            p.auto_note = st.empty()
        else:
            p.number("integrator.t_end")
    with c2:
        if method == "gd":
            p.number("integrator.lr")
        else:
            rtol = float(p.base["integrator"]["rtol"])
            p.widget("integrator.rtol", options=ladders.with_value(RTOL_CHOICES, rtol))
    it = p.base["integrator"]
    if it.get("lr_w", 1.0) != 1.0 or it.get("lr_a", 1.0) != 1.0:  # per-layer rates, once set
        c1, c2 = st.columns(2)
        with c1:
            p.number("integrator.lr_w")
        with c2:
            p.number("integrator.lr_a")
    c1, c2 = st.columns(2)
    with c1:
        p.number("record.frames")
    with c2:
        p.number("seed")
    c1, c2 = st.columns(2)
    with c1:
        p.widget("record.spacing")
    with c2:
        p.widget("record.plane")


def view_controls(view: FigureView, prefix: str, fresh: bool, on: bool) -> FigureView:
    """Radios for the figure's display options, from their settings rows; returns the options
    they describe (as a FigureView), presenter mode `on` or not (its switch heads the
    sidebar: `control_panel`; the page applies it, `ui.presenter.mode`, before the
    sidebar, and owns the switch's session key)."""
    vals: dict[str, Any] = {}
    for name in ("radius", "time_axis", "time_scale"):
        row = settings.setting(f"view.{name}")
        k = seed(widget_key(row.path, prefix), getattr(view, name), fresh)
        vals[name] = st.radio(row.label, options=FigureView.options(name), key=k,
                              horizontal=True, format_func=row.option_label, help=row.help)
    return FigureView(**vals, presenter=on)


def _auto_range(config: Config) -> tuple[Config, AutoTime]:
    """(the run's Config, its auto range); `dynamics.timescales` remembers the range by cache
    key (a JSON-keyed cache would hold an upload's data in every key)."""
    return with_auto_time(config)


def _is_auto_default(base: Config) -> bool:
    """A base whose end time is the schema default (a link or scenario with its own t_end
    starts with "auto" off, so that number is kept)."""
    return base.integrator.t_end == IntegratorConfig().t_end


def control_panel(prefix: str, base: Config, *, fresh: bool,
                  view: FigureView | None = None, t_end_auto: bool | None = None) -> Controls:
    """Draw every control, seeded from `base` when `fresh` (the binder's state was just read
    from a link or replaced) or when a widget has no value yet, and build the Config. Errors
    are shown next to their controls by `show_errors`. With `view`, a "Display" expander
    holds the figure's options and `Controls.view` is what they say.

    With `t_end_auto` (a bool: the link's choice), an "auto end time" box is offered, ticked
    when `t_end_auto` and `base` keeps the default end time: then the run's t_end (and t_first,
    if unset) come from `dynamics.timescales.auto_time`, `Controls.config` is that run and
    `Controls.url_config` the Config before it (t_end the default, for the link)."""
    p = _Panel(base, prefix, fresh)
    if t_end_auto is not None:
        p.t_end_auto = bool(t_end_auto and _is_auto_default(base))
    st.html(SIDEBAR_CSS)
    # the presenter switch first: a lecturer finds it without scrolling a long sidebar
    on = presenter.switch(widget_key("view.presenter", prefix)) if view is not None else False
    with st.expander("Data", expanded=True):
        _data_controls(p)
    with st.expander("Model and loss", expanded=True):
        _model_controls(p)
    with st.expander("Initialisation", expanded=True):
        _init_controls(p)
    with st.expander("Training and recording", expanded=False):
        _training_controls(p)
    shown_view: FigureView | None = None
    if view is not None:
        with st.expander("Display", expanded=True):
            shown_view = view_controls(view, prefix, fresh, on)
    raw = dict(p.base)
    raw = {k: (dict(v) if isinstance(v, dict) else v) for k, v in raw.items()}
    kind = p.values.get("data.kind", raw["data"]["kind"])
    if kind != raw["data"]["kind"]:
        raw["data"] = DATA_CLASSES[kind]().model_dump(mode="json")
    for path, value in p.values.items():
        _set(raw, path, value)
    if p.t_end_auto:
        raw["integrator"] = {**raw["integrator"], "t_end": IntegratorConfig().t_end}
    auto = p.t_end_auto
    if p.problems:
        res = Controls(None, shown_view, ReadableError(p.problems), raw, p.slots, p.notes, auto)
        show_errors(res)
        return res
    try:
        config = Config.from_dict(raw)
        url_config = None
        at = None
        if auto:
            url_config = config
            config, at = _auto_range(config)
            if p.auto_note is not None:
                p.auto_note.caption(at.describe())
    except ConfigError as e:
        res = Controls(None, shown_view, readable(e), raw, p.slots, p.notes, auto)
        show_errors(res)
        return res
    return Controls(config, shown_view, None, raw, p.slots, p.notes, auto, at, url_config)


GAMMA_STEP = settings.setting("model.gamma").step  # the γ field's +/− step
GAMMA_RANGE = settings.span("model.gamma")  # γ's range (lo, hi), the config's bounds


def moved_control(before: Config | None, after: Config) -> tuple[str | None, float]:
    """Which prefetchable control changed from `before` to `after` ("gamma", "eps" or None)
    and the sign of the change (+1 up, −1 down, 0 none)."""
    if before is None:
        return None, 0.0
    for name, a, b in (("gamma", before.model.gamma, after.model.gamma),
                       ("eps", before.init.scale, after.init.scale)):
        if a != b:
            return name, 1.0 if b > a else -1.0
    return None, 0.0


def neighbours(config: Config, *, auto: bool, moved: str | None = None,
               direction: float = 0.0) -> list[Config]:
    """The settings one step of a control away from `config` (the link's Config: t_end the
    default when `auto`): γ ± `GAMMA_STEP` (within `GAMMA_RANGE`) and ε one slider step either way
    (`EPS_CHOICES`), as the runs the page would start (the auto time range applied when
    `auto`, exactly as `control_panel` does, so their cache keys match). The control the user
    just `moved` comes first, in the `direction` it moved (sign) first. Memoised (a few
    validations each: ~10 ms on every rerun otherwise). None for uploaded data (their runs
    are the session's; a speculative copy would hold the data again)."""
    if config.data.kind == "array":
        return []
    sign = 0.0 if not direction else math.copysign(1.0, direction)
    return list(_neighbours(config.to_json(), auto, moved, sign))


@functools.lru_cache(maxsize=64)
def _neighbours(config_json: str, auto: bool, moved: str | None,
                direction: float) -> tuple[Config, ...]:
    config = Config.from_json(config_json)
    gamma = float(config.model.gamma)
    eps = float(config.init.scale)
    ladder = ladders.with_value(EPS_CHOICES, eps)
    i = ladder.index(eps)
    steps: dict[str, list[tuple[str, float]]] = {
        "gamma": [("gamma", round(gamma + s * GAMMA_STEP, 10)) for s in (1, -1)],
        "eps": [("eps", ladder[j]) for j in (i + 1, i - 1) if 0 <= j < len(ladder)],
    }
    if direction < 0:
        steps = {k: v[::-1] for k, v in steps.items()}
    order = [moved] if moved in steps else []
    order += [k for k in steps if k not in order]
    out: list[Config] = []
    for what, value in (st_ for k in order for st_ in steps[k]):
        if what == "gamma" and not GAMMA_RANGE[0] <= value <= GAMMA_RANGE[1]:
            continue
        raw = config.to_dict()
        if what == "gamma":
            raw["model"]["gamma"] = value
        else:
            raw["init"]["scale"] = value
        try:
            c = Config.from_dict(raw)
            if auto:
                c, _ = _auto_range(c)
        except (ConfigError, ValueError):
            continue
        out.append(c)
    return tuple(out)


def readable(err: ConfigError, labels: Mapping[str, str] | None = None) -> ReadableError:
    """The same errors (same paths, for the slots) with messages in the page's words
    (`ui.inputs.friendly`)."""
    names = PATH_LABELS if labels is None else {**PATH_LABELS, **labels}
    if isinstance(err, ReadableError):
        return err
    return ReadableError([(path, friendly(path, msg, names)) for path, msg in err.errors])


def show_errors(res: Controls) -> None:
    """Each message in the slot of the control it names (a table's cells share the table's
    slot); the rest only in the summary."""
    if res.error is None:
        return
    for path, slot in res.slots.items():
        msgs = res.error.for_field(path)
        if msgs:
            slot.error("\n\n".join(msgs))


def error_summary(err: ConfigError, labels: Mapping[str, str] | None = None) -> str:
    """A Markdown list of every problem, each starting with the control it belongs to."""
    lines = [f"- {m}" for _p, m in readable(err, labels).errors]
    return "These settings need a change before the run can start:\n\n" + "\n".join(lines)


__all__ = ["CELL_RULES", "DATA_LABELS", "EPS_CHOICES", "GAMMA_STEP", "METHOD_LABELS",
           "NORMALISATION_LABELS", "PATH_LABELS", "RTOL_CHOICES", "Controls", "ReadableError",
           "control_panel", "error_summary", "moved_control", "neighbours", "number_rules",
           "readable", "show_errors", "view_controls", "widget_key"]
