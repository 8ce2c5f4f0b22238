"""The one table of settings: every control of a run and of its figure, as data.

One row (`Setting`) per dotted path (`model.width`, `init.scale`, `view.radius`): the label its
widget shows (messages name the control by it), one line of help in a student's words (what it
does, what to expect when it changes), its options (the config's or the view's `Literal` types,
or a ladder such as ε's) and how they read, its range (the config's bounds, the server's limits
`dynamics.limits`, read when asked, and the widget's own range), its default, and its URL codec:
`decode` reads URL text with the one reader `dynamics.config.urlvalues.parse_value` and checks
it as the widget does (same range, same options, the range in the message); `encode` writes it
back. The binder (`ui.state`), the view models (`ui.view`), the control panel (`ui.controls`)
and the Papers page's knobs read it; nothing here draws. Pure: no Streamlit.

A data setting that several data kinds share (`data.n_per`) is one row with per-kind wording
(`Setting.for_kind`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, get_args, get_origin

from pydantic.fields import FieldInfo

from dynamics import ladders
from dynamics.config import DATA_CLASSES, DATA_KINDS, Config
from dynamics.config.urlvalues import format_value, parse_value
from dynamics.limits import Limits, get_limits
from viz.options import FigureOptions, Radius, TimeAxis, TimeScale

from .rules import Rule, shown

Widget = Literal["number", "select", "slider", "radio", "checkbox", "toggle", "column", "file",
                 "text", "none"]
SERVER = "on this server"
MISSING: Any = object()

# the select sliders' ladders and γ's step (`dynamics.ladders`, declared once there)
EPS_CHOICES = ladders.EPS  # 1e-20 … 1 in half decades
RTOL_CHOICES = ladders.RTOL
# the figure's display options: their values and defaults are `viz.options.FigureOptions`'s
DISPLAY = FigureOptions()

SECTION_LABELS = {"data": "data", "model": "model", "loss": "loss", "init": "initialisation",
                  "integrator": "training", "record": "recording", "config": "settings"}


@dataclass(frozen=True)
class Setting:
    """One setting. `widget` says how the Explorer draws it ("none": not drawn, a row for
    messages and links); `options` overrides the annotation's `Literal` values (a ladder);
    `labels` how options read; `lo`/`hi` narrow the config's range to the widget's, `limit`
    names the `Limits` field that bounds it on this server; `zero`: what 0 stands for in a
    field that is None by default ("n = d"); `kinds`: the data kinds it belongs to (data.*;
    a kind this config does not have is skipped); `by_kind`: for a kind that draws or words
    it differently, the fields that differ (label, help, widget…); `annotation`/`value` give
    the type and default of a view option (a config's come from `Config`)."""

    path: str
    label: str
    help: str
    widget: Widget = "number"
    options: tuple[Any, ...] = ()
    labels: Mapping[Any, str] = field(default_factory=dict)
    step: float = 1.0
    lo: float | None = None
    hi: float | None = None
    limit: str = ""
    unit: str = ""
    zero: str = ""
    kinds: tuple[str, ...] = ()
    by_kind: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    annotation: Any = MISSING
    value: Any = MISSING
    cell: Rule | None = None  # a table column: the rule of each cell

    # -- type, default, options --------------------------------------------------------------
    @property
    def kind(self) -> str:
        """The data kind this row is read for (the first of `kinds`, else "points")."""
        return self.kinds[0] if self.kinds else "points"

    def for_kind(self, kind: str) -> Setting:
        """This row as the data kind `kind` words it (same path, its own label and help)."""
        kinds = (kind, *[k for k in self.kinds if k != kind]) if self.kinds else ()
        return replace(self, kinds=kinds, by_kind={}, **self.by_kind.get(kind, {}))

    def known_kinds(self) -> tuple[str, ...]:
        """The data kinds of this row that this config has (all of `kinds` once merged)."""
        return tuple(k for k in self.kinds if k in DATA_CLASSES)

    def variants(self) -> tuple[Setting, ...]:
        """The row as each of its (known) data kinds words it; itself for other settings."""
        if not self.kinds:
            return (self,)
        return tuple(self.for_kind(k) for k in self.known_kinds())

    def info(self) -> FieldInfo | None:
        """The pydantic field behind a config row (None for view options and widget-only rows)."""
        return _field_info(self.path, self.kind)

    def type(self) -> Any:
        """The value's type annotation."""
        if self.annotation is not MISSING:
            return self.annotation
        f = self.info()
        return f.annotation if f is not None else None

    @property
    def default(self) -> Any:
        """The default value (the config's, for the row's data kind; or the view option's)."""
        if self.value is not MISSING:
            return self.value
        d: Any = Config().to_dict()
        if self.path.startswith("data."):
            if self.kind not in DATA_CLASSES:
                return None
            d = {"data": DATA_CLASSES[self.kind]().model_dump(mode="json")}
        for part in self.path.split("."):
            if not isinstance(d, dict) or part not in d:
                return None
            d = d[part]
        return d

    def choices(self) -> tuple[Any, ...]:
        """The values a select, radio or slider offers."""
        return self.options or literal_values(self.type())

    def option_label(self, value: Any) -> str:
        """How an option reads in the widget."""
        if value in self.labels:
            return self.labels[value]
        return f"{value:.3g}" if isinstance(value, float) else str(value)

    # -- range -------------------------------------------------------------------------------
    def rule(self, limits: Limits | None = None) -> Rule | None:
        """What a number of this setting may be: the config's bounds narrowed by the widget's
        (`lo`, `hi`) and the server's limit, in the control's words. None if not a number."""
        ann = self.type()
        numeric = self.widget in ("number", "slider") or (_is_number(ann)
                                                          and not self.choices())
        if not numeric:
            return None
        lo, lo_open, hi, hi_open = _bounds(self.info())
        if self.lo is not None and (lo is None or self.lo >= lo):
            lo, lo_open = self.lo, False
        if self.hi is not None and (hi is None or self.hi <= hi):
            hi, hi_open = self.hi, False
        hi_why = ""
        if self.limit:
            cap = float(getattr(limits or get_limits(), self.limit))
            if hi is None or cap <= hi:
                hi, hi_open, hi_why = cap, False, SERVER
        return Rule(self.label, lo, hi, integer=_is_int(ann), unit=self.unit, lo_open=lo_open,
                    hi_open=hi_open, hi_why=hi_why, zero=self.zero)

    # -- the URL codec -----------------------------------------------------------------------
    def decode(self, raw: str, limits: Limits | None = None) -> tuple[Any, str]:
        """(value, "") for the URL text of this setting, or (None, why not): read with the
        one URL reader and checked as the widget checks it (options, range: the message names
        the control, says what is allowed and what the link said)."""
        return read(raw, self.type(), path=self.path, options=self.choices()
                    if self.widget != "slider" else (), rule=self.rule(limits), cell=self.cell)

    def encode(self, value: Any) -> str:
        """URL text of a value (`decode(encode(v)) == (v, "")`)."""
        return format_value(value)


def read(raw: str, annotation: Any, *, path: str = "", options: Iterable[Any] = (),
         rule: Rule | None = None, cell: Rule | None = None) -> tuple[Any, str]:
    """URL text as a value of `annotation` (the one reader: `urlvalues.parse_value`), then
    checked: one of `options` (matched by their text), within `rule` (one number), every
    element within `cell` (a list). (value, "") or (None, a sentence saying why not)."""
    opts = tuple(options)
    if opts:
        for o in opts:
            if str(o) == raw or format_value(o) == raw:
                return o, ""
        return None, "must be one of " + ", ".join(str(o) for o in opts)
    try:
        value = parse_value(path, raw, annotation)
    except Exception as e:  # too deeply nested lists: the reader says why
        return None, str(getattr(e, "errors", [("", str(e))])[0][1])
    if _is(annotation, bool) and not isinstance(value, bool):
        return None, "must be true or false"
    if rule is not None:
        if value is None and rule.zero:
            return None, ""
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None, f"{rule.what}: must be a number ({rule.allowed()})"
        problem = rule.check(value)
        if problem:
            return None, f"{_said(problem)}; allowed: {rule.allowed()}"
        return rule.value(value), ""
    if cell is not None and isinstance(value, list):
        for i, v in enumerate(value):
            problem = cell.check(v) if isinstance(v, int | float) and not isinstance(v, bool) \
                else f"{cell.what}: {v!r} is not a number"
            if problem:
                return None, f"entry {i + 1}, {_said(problem)}; allowed: {cell.allowed()}"
    if _is_number(annotation) and isinstance(value, str):
        return None, "must be a number"
    return value, ""


def _said(problem: str) -> str:
    """A widget's message about a value, as said of a link."""
    return problem.rstrip(".").replace("; you typed ", "; the link says ")


# ----------------------------------------------------------------------------- annotations
def literal_values(annotation: Any) -> tuple[Any, ...]:
    """The values of a `Literal[...]` annotation (also inside `Optional`); () if it is none."""
    if get_origin(annotation) is Literal:
        return get_args(annotation)
    if get_origin(annotation) is tuple:
        return ()
    for arg in get_args(annotation):
        got = literal_values(arg)
        if got:
            return got
    return ()


def _field_info(path: str, kind: str) -> FieldInfo | None:
    parts = path.split(".")
    if parts[0] == "data" and len(parts) == 2:
        return DATA_CLASSES.get(kind, DATA_CLASSES["points"]).model_fields.get(parts[1])
    if len(parts) == 1:
        return Config.model_fields.get(parts[0]) if parts[0] != "data" else None
    if len(parts) == 2 and parts[0] in Config.model_fields and parts[0] != "data":
        sub = Config.model_fields[parts[0]].annotation
        fields = getattr(sub, "model_fields", {})
        return fields.get(parts[1])
    return None


def _inner(annotation: Any) -> Any:
    """The plain type of an optional / constrained annotation (Optional[Annotated[int, …]] →
    int)."""
    args = [a for a in get_args(annotation) if a is not type(None)]
    if get_origin(annotation) is not tuple and args and get_origin(annotation) is not Literal:
        return _inner(args[0])
    return annotation


def _is(annotation: Any, t: type) -> bool:
    return _inner(annotation) is t


def _is_int(annotation: Any) -> bool:
    return _is(annotation, int)


def _is_number(annotation: Any) -> bool:
    return _inner(annotation) in (int, float)


def _metadata(info: FieldInfo | None) -> list[Any]:
    if info is None:
        return []
    out = list(info.metadata)
    for arg in get_args(info.annotation):  # Optional[Annotated[float, Field(gt=0)]]
        for m in getattr(arg, "__metadata__", ()):
            out += list(getattr(m, "metadata", [m]))
    return out


def _bounds(info: FieldInfo | None) -> tuple[float | None, bool, float | None, bool]:
    """(lo, lo_open, hi, hi_open) of a pydantic field's constraints."""
    lo = hi = None
    lo_open = hi_open = False
    for m in _metadata(info):
        for name in ("ge", "gt"):
            v = getattr(m, name, None)
            if v is not None:
                lo, lo_open = float(v), name == "gt"
        for name in ("le", "lt"):
            v = getattr(m, name, None)
            if v is not None:
                hi, hi_open = float(v), name == "lt"
    return lo, lo_open, hi, hi_open


# ----------------------------------------------------------------------------- the table
_POS = "must be above 0"
DATA_LABELS = {
    "points": "points (edit angles)",
    "clusters": "clusters with noise",
    "two_signals": "two signals x₊, x₋ (Wang & Ma)",
    "teacher": "teacher neuron (Chistikov et al.)",
    "three_point": "three points in 1-D (Boursier)",
    "function": "1-D target from a formula",
    "digits": "two digit classes (Min et al.)",
    "vectors": "points of any dimension",
    "generated": "generated points, any dimension",
    "array": "upload a file (CSV or NPZ)",
}
NORMALISATION_LABELS = {"none": "ε", "sqrt_m": "ε/√m", "sqrt_dm": "ε/√(dm)"}
METHOD_LABELS = {"gf": "gradient flow (adaptive)", "gd": "gradient descent"}
VIEW_LABELS: dict[str, dict[str, str]] = {
    "radius": {"normalised": "‖w‖ / max‖w‖", "log": "log ‖w‖"},
    "time_axis": {"log": "log", "linear": "linear"},
    "time_scale": {"t": "t", "t_over_log_inv_eps": "t / ln(1/ε)"},
}
_CELL = {
    "angles_deg": Rule("angle (°)", -360.0, 360.0, unit="degrees"),
    "radii": Rule("radius", 0.0, 1e6, lo_open=True),
    "labels": Rule("label", -1e6, 1e6),
    "x": Rule("x", -1e6, 1e6),
    "y": Rule("y", -1e6, 1e6),
}

_ROWS: tuple[Setting, ...] = (
    # -- data
    Setting("data.kind", "Data", "Which training set: points you edit, clusters, or one of the "
            "papers' data sets. Changing it starts the data settings below from its defaults.",
            "select", options=DATA_KINDS, labels=DATA_LABELS, annotation=str, value="points"),
    Setting("data.angles_deg", "angle (°)", "Direction of each point (or cluster centre) in "
            "degrees; neurons end up pointing along a few of these directions.", "column",
            kinds=("points", "clusters"), cell=_CELL["angles_deg"]),
    Setting("data.radii", "radius", "Distance of each point from the origin; longer points "
            "pull harder on the neurons.", "column", kinds=("points",), cell=_CELL["radii"]),
    Setting("data.labels", "label", "Target of each point: ±1 classify, other values regress "
            "(square loss).", "column", kinds=("points", "clusters", "vectors", "generated"),
            cell=_CELL["labels"],
            by_kind={"generated": {"label": "labels", "widget": "select", "cell": None,
                                   "help": "orthogonal data: sign ±1; real: sizes in [0.2, 1], "
                                   "alternating signs; dana: axes × U[1, 2], labels ±U[1, 2] "
                                   "(Dana et al.)."},
                     "vectors": {"widget": "none"}}),
    Setting("data.x", "x", "Inputs of Boursier & Flammarion's 1-D data (a bias 1 is "
            "appended).", "column", kinds=("three_point",), cell=_CELL["x"]),
    Setting("data.y", "y", "Targets of the 1-D data; the least-squares line through them is "
            "the trap.", "column", kinds=("three_point",), cell=_CELL["y"]),
    Setting("data.formula", "target y(x)", "A formula in x: + − * / **, relu, abs, sin, cos, "
            "tanh, exp, log, sqrt, min, max, pi (Luo et al.'s demo: four ReLU kinks).", "text",
            kinds=("function",)),
    Setting("data.x_min", "x from", "Left end of the inputs' interval.", step=0.1,
            kinds=("function",)),
    Setting("data.x_max", "x to", "Right end of the inputs' interval (larger than x from).",
            step=0.1, kinds=("function",)),
    Setting("data.spacing", "inputs", "even: evenly spaced on the interval, ends included; "
            "uniform: drawn at random from the seed.", "select", kinds=("function",)),
    Setting("data.teacher_width", "teacher neurons", "Neurons of the ReLU teacher (Kunin et "
            "al. use 3); the student finds their directions.", kinds=("generated",)),
    Setting("data.radius", "radius", "Distance of the cluster centres from the origin: larger "
            "inputs make the neurons grow sooner.", step=0.1, kinds=("clusters",)),
    Setting("data.n_per", "per cluster", "Points drawn around each centre; more points give "
            "a smoother loss and about the same picture.", kinds=("clusters", "two_signals"),
            limit="max_points", unit="points",
            by_kind={"two_signals": {"label": "copies of each", "help": "Copies of x₊ and of "
                                     "x₋ (different only with noise > 0); the balance of the "
                                     "classes stays p."}}),
    Setting("data.noise", "noise", "Std of the Gaussian noise added to every point; 0 gives "
            "exact points, more noise blurs the directions the neurons find.", step=0.05,
            kinds=("clusters", "two_signals", "generated"),
            by_kind={"generated": {"help": "skew_xor: the blobs' std (Tsoy & Konstantinov: "
                                   "0.0707); linear_teacher: the labels' noise std; unused "
                                   "otherwise."}}),
    Setting("data.angle_deg", "angle between x₊ and x₋ (°)", "A small angle is Wang & Ma's "
            "hard case: the neurons need longer to tell the two signals apart.",
            kinds=("two_signals", "generated"), unit="degrees",
            by_kind={"generated": {"label": "skew angle α (°)", "help": "skew_xor: where the "
                                   "positive blobs sit (90: XOR); smaller angles move them "
                                   "towards the negative ones."}}),
    Setting("data.p", "weight p", "Class weight: how much more the loss weighs x₊ than x₋ "
            "(n₊/n₋); larger p, the positive neurons win sooner.", step=0.5,
            kinds=("two_signals",)),
    Setting("data.norm_plus", "‖x₊‖", "Length of the signal x₊; a longer signal is learned "
            "first.", step=0.1, kinds=("two_signals",)),
    Setting("data.norm_minus", "‖x₋‖", "Length of the signal x₋; a longer signal is learned "
            "first.", step=0.1, kinds=("two_signals",)),
    Setting("data.d", "dimension d", "Input dimension of the teacher's data; larger d leaves "
            "more directions to search, so alignment takes longer.",
            kinds=("teacher", "generated"), limit="max_dim", unit="dimensions",
            by_kind={"generated": {"help": "Input dimension of the generated points; the "
                                   "neuron panel shows a 2-D plane of them."}}),
    Setting("data.n", "samples n", "Training samples (0: n = d, as in the paper); more samples "
            "pin the teacher's direction down better.", kinds=("teacher", "generated",
                                                              "function"),
            limit="max_points", unit="samples", zero="n = d",
            by_kind={"generated": {"label": "points n", "zero": "", "step": 2.0, "unit": "points",
                                   "help": "How many points are drawn (symmetric data: n/2 "
                                   "points and their mirror images)."},
                     "function": {"label": "points n", "zero": "", "unit": "points",
                                  "help": "How many inputs x the formula is sampled at."}}),
    Setting("data.scheme", "teacher scheme", "centred: inputs spread around the teacher's "
            "direction; uncentred: Chistikov et al.'s harder case.", "select",
            kinds=("teacher",)),
    Setting("data.rho", "spread ρ", "Spread of the inputs around their mean (0: the scheme's "
            "own value); more spread, a harder teacher to find.", step=0.1, kinds=("teacher",),
            zero="the scheme's value"),
    Setting("data.points", "points", "Coordinates of each point (one row each), carried by "
            "the link or a paper's preset.", "none", kinds=("vectors",)),
    Setting("data.generator", "generator", "symmetric_separable, orthogonal (n ≤ d), skew_xor "
            "(four blobs), relu_teacher (a ReLU net's labels) or linear_teacher (noisy linear "
            "labels).", "select", kinds=("generated",)),
    Setting("data.margin", "margin", "Gap between the two classes along the separating "
            "direction; a larger margin is an easier problem.", step=0.05,
            kinds=("generated",)),
    Setting("data.classes", "digits", "The two digit classes: the first is labelled +1, the "
            "second −1.", "none", kinds=("digits",)),
    Setting("data.classes.0", "digit +1", "The digit class labelled +1 (its mean image is "
            "where positive neurons go).", "select", options=tuple(range(10)), value=0,
            annotation=int, kinds=("digits",)),
    Setting("data.classes.1", "digit −1", "The digit class labelled −1 (its mean image is "
            "where negative neurons go).", "select", options=tuple(range(10)), value=1,
            annotation=int, kinds=("digits",)),
    Setting("data.n_per_class", "images per class", "Images used of each digit (0: all, about "
            "180); fewer images run faster.", step=10, hi=10_000, kinds=("digits",),
            zero="all images"),
    Setting("data.centre", "centre the images", "Subtract the mean image first, as Min et al. "
            "do; without it every neuron first learns the average image.", "checkbox",
            kinds=("digits",)),
    Setting("data.X", "uploaded file", "Points and labels from your CSV or NPZ file (links do "
            "not carry it).", "file", kinds=("array",)),
    Setting("data.bias", "append a bias 1", "Adds a constant input 1, i.e. a hidden-layer "
            "bias: neurons can then switch on away from the origin.", "checkbox"),
    # -- model and loss
    Setting("model.width", "width m", "Hidden neurons: more markers, the same few directions "
            "(early alignment does not depend on m).", step=10, limit="max_width",
            unit="neurons"),
    Setting("model.gamma", "leaky slope γ", "σ(u) = max(u, γu), 0 is ReLU; with γ > 0 no "
            "neuron is ever switched off, so none stays frozen.", step=ladders.GAMMA_STEP),
    Setting("loss.kind", "loss", "square ½(ŷ−y)² fits values; logistic and exponential "
            "classify, and their loss keeps falling while the norms keep growing.", "select"),
    Setting("loss.reduction", "reduction", "Average (mean) or add up (sum) the points' losses; "
            "sum makes time run n times faster.", "select"),
    Setting("model.train_output", "train output a", "Train the output weights a_j too (Wang & "
            "Ma freeze them); off: only the directions and norms of w_j move.", "checkbox"),
    Setting("model.c", "output scale c", "h(x) = c Σ a_j σ(⟨w_j, x⟩); larger c runs training "
            "faster (time ~ 1/c) and acts like a larger ε.", step=0.5),
    Setting("model.output_power", "output power p", "h = c·m^(−p) Σ a_j σ(…): 1 is the "
            "mean-field 1/m (Dana et al.), ½ the NTK's 1/√m; wider nets then start smaller.",
            step=0.25),
    # -- initialisation
    Setting("init.scale", "init scale ε", "Size of the initial weights: smaller ε keeps the "
            "neurons aligning longer (about ln(1/ε)/rate) before they grow.", "slider",
            options=EPS_CHOICES, lo=EPS_CHOICES[0], hi=EPS_CHOICES[-1]),
    Setting("init.scheme", "init scheme", "balanced |a_j| = ‖w_j‖; gaussian; dominated; "
            "fixed_output (not trained); exp_margin |a_j| = ‖w_j‖ + Exp; tau_delta |a_j|‖w_j‖ "
            "= ε², imbalance δ.", "select"),
    Setting("init.imbalance", "imbalance δ", "η_w a_j² − η_a ‖w_j‖², kept by the flow: δ > 0 "
            "upstream (the first layer moves fast, rich quickly), δ < 0 downstream (lazy).",
            step=0.25),
    Setting("init.a_power", "output std power", "The output weights' std is ε·m^(−power) (Luo "
            "et al.'s β₁); larger powers start the output smaller in wide nets.", step=0.25),
    Setting("init.w_power", "input std power", "The input weights' std is ε·m^(−power) (Luo "
            "et al.'s β₂); larger powers start the input weights smaller.", step=0.25),
    Setting("init.mirror", "mirrored pairs", "Neurons in pairs (w, a) and (w, −a): the network "
            "is exactly 0 at the start (needs an even width).", "checkbox"),
    Setting("init.normalisation", "entry std", "How ε sets each weight's spread: ε, ε/√m or "
            "ε/√(dm) (the papers differ); with /√m wider nets start smaller.", "select",
            labels=NORMALISATION_LABELS),
    Setting("init.output_value", "|a_j| value", "fixed_output: |a_j| before the division "
            "below; exp_margin: the mean of the margin |a_j| − ‖w_j‖.", step=0.1),
    Setting("init.output_norm", "divided by", "|a_j| = value / 1, √m or m: how the fixed "
            "output weights shrink with the width.", "select"),
    # -- training and recording
    Setting("integrator.method", "integrator", "gradient flow: the continuous training the "
            "theorems describe (adaptive steps); gradient descent: fixed steps η.", "radio",
            options=("gf", "gd"), labels=METHOD_LABELS),
    Setting("integrator.t_end", "end time t", "How long to train, in gradient-flow time (GD "
            "takes t/η steps); too short and the fit is cut off.", step=10.0),
    Setting("integrator.lr", "step η", "Gradient descent's step (time t = steps × η): too "
            "large diverges, smaller is closer to gradient flow but slower.", step=0.001),
    Setting("integrator.lr_w", "rate of w (η_w)", "Per-layer rate of the input weights (Kunin "
            "et al.): a faster first layer is an upstream start.", step=0.5),
    Setting("integrator.lr_a", "rate of a (η_a)", "Per-layer rate of the output weights; "
            "with η_w they set which layer learns first.", step=0.5),
    Setting("integrator.rtol", "tolerance rtol", "Error allowed per adaptive step: smaller is "
            "more exact and slower; the picture should not change.", "slider",
            options=RTOL_CHOICES),
    Setting("integrator.atol", "tolerance atol", "Absolute error per adaptive step (none: "
            "rtol × 10⁻³ of the largest initial weight).", "none"),
    Setting("integrator.max_steps", "step limit", "Most steps a run may take before it stops "
            "with a partial result.", "none"),
    Setting("record.frames", "frames", "Snapshots in the animation: more frames play smoother "
            "and take longer to draw.", step=20, limit="max_frames", unit="frames"),
    Setting("record.scalars", "samples", "Points of the loss and rate curves.", "none",
            limit="max_scalars"),
    Setting("record.t_first", "first recorded time", "The first snapshot after t = 0 (none: "
            "chosen from the end time).", "none"),
    Setting("seed", "seed", "The random draw of the initial weights (and noisy data): another "
            "seed, another start, the same directions."),
    Setting("record.spacing", "frame spacing", "log: frames even in log t, so both the long "
            "alignment and the quick fit get frames; linear: even in t.", "select"),
    Setting("record.plane", "drawing plane", "Which 2-D plane the neuron panel shows when the "
            "data has more dimensions (auto picks one from the data).", "select"),
    # -- the figure and the page
    Setting("view.t_end_auto", "auto end time", "End time from the theory's time scales: long "
            "enough for the alignment (≈ ln(1/ε)/rate) and the fit; untick to type one.",
            "checkbox", annotation=bool, value=True),
    Setting("view.radius", "radius", "A marker's distance from the centre: its norm relative "
            "to the largest, or log ‖w‖ to see tiny norms grow.", "radio",
            labels=VIEW_LABELS["radius"], annotation=Radius, value=DISPLAY.radius),
    Setting("view.time_axis", "time axis", "log shows the long alignment and the quick fit "
            "side by side; linear shows real proportions.", "radio",
            labels=VIEW_LABELS["time_axis"], annotation=TimeAxis, value=DISPLAY.time_axis),
    Setting("view.time_scale", "time unit", "t, or t / ln(1/ε): then alignment ends near the "
            "same value whatever ε is.", "radio", labels=VIEW_LABELS["time_scale"],
            annotation=TimeScale, value=DISPLAY.time_scale),
    Setting("view.presenter", "presenter mode", "Large text and the figure alone, for a "
            "projector; a link opens it so for everyone.", "toggle", annotation=bool,
            value=DISPLAY.presenter),
    Setting("view.lesson", "lesson", "The scenarios a teacher steps through (paper.preset, "
            "comma-separated).", "none", annotation=str, value=""),
    Setting("view.scenario", "scenario", "The lesson scenario on screen (paper.preset).",
            "none", annotation=str, value=""),
)

SETTINGS: dict[str, Setting] = {s.path: s for s in _ROWS}


def setting(path: str, kind: str | None = None) -> Setting:
    """The row of `path` (worded for data kind `kind`); KeyError if there is none."""
    row = SETTINGS[path]
    return row.for_kind(kind) if kind is not None and row.kinds else row


def find(path: str, kind: str | None = None) -> Setting | None:
    """The row of `path` for data kind `kind`, or None (no such setting, or not of that
    kind)."""
    row = SETTINGS.get(path)
    if row is None or (kind is not None and row.kinds and kind not in row.known_kinds()):
        return None
    return setting(path, kind)


def labels() -> dict[str, str]:
    """How each setting is called in messages (path → label, sections included)."""
    return {**SECTION_LABELS, **{p: s.label for p, s in SETTINGS.items()}}


def number_rules(limits: Limits | None = None) -> dict[str, Rule]:
    """What each number field accepts (the server's limits read now unless given), with the
    control's label as the rule's name."""
    lim = limits or get_limits()
    out: dict[str, Rule] = {}
    for path, row in SETTINGS.items():
        rule = row.rule(lim) if row.widget == "number" else None
        if rule is not None:
            out[path] = rule
    return out


def cell_rules() -> dict[str, Rule]:
    """The rule of each table column's cells (column name → Rule)."""
    return {p.split(".", 1)[1]: s.cell for p, s in SETTINGS.items() if s.cell is not None}


def check_params(params: Mapping[str, str], kind: str,
                 limits: Limits | None = None) -> tuple[dict[str, str], list[str]]:
    """The URL parameters of a config that the widgets would take, and a warning for each one
    they would refuse (named, with the range); parameters without a row here pass unjudged
    (the config's own validation reads them)."""
    kept: dict[str, str] = {}
    warnings: list[str] = []
    lim = limits or get_limits()
    for key, raw in params.items():
        row = find(key, kind)
        if row is None or row.widget in ("none", "file"):
            kept[key] = raw
            continue
        _, problem = row.decode(raw, lim)
        if problem:
            warnings.append(f"ignored {key}={_shown(raw)}: {problem}")  # key: a known path
        else:
            kept[key] = raw
    return kept, warnings


def _shown(v: Any, n: int = 40) -> str:
    s = str(v)
    return repr(s if len(s) <= n else s[: n - 3] + "...")


def span(path: str) -> tuple[float, float]:
    """A number setting's closed range (lo, hi): its rule's bounds (the config's, narrowed by
    the row's)."""
    rule = SETTINGS[path].rule()
    if rule is None or rule.lo is None or rule.hi is None or rule.lo_open or rule.hi_open:
        raise ValueError(f"{path} is not a number with a closed range")
    return float(rule.lo), float(rule.hi)


def stepped(path: str) -> tuple[float, ...]:
    """The values a number setting steps through on its range: lo, lo + step, …, hi (`span`
    and its row's step)."""
    return ladders.steps(*span(path), SETTINGS[path].step)


def eps_ladder(value: float | None = None) -> list[float]:
    """The ε slider's options, with `value` added when it is in range but off the ladder."""
    return ladders.with_value(EPS_CHOICES, None if value is None else float(value),
                              EPS_CHOICES[0], EPS_CHOICES[-1])


__all__ = ["DATA_LABELS", "DISPLAY", "EPS_CHOICES", "METHOD_LABELS", "NORMALISATION_LABELS",
           "RTOL_CHOICES", "SETTINGS", "VIEW_LABELS", "Radius", "Setting", "TimeAxis",
           "TimeScale", "cell_rules", "check_params", "eps_ladder", "find", "labels",
           "literal_values", "number_rules", "read", "setting", "shown", "span", "stepped"]
