"""The single, validated, serialisable description of a run.

A `Config` fixes everything that determines a trajectory: data, model, loss, initialisation,
integrator, recording and seed. It is immutable; its canonical JSON (sorted keys, exact float
repr) is hashed with `NUMERICS_VERSION` into the cache key, and it round-trips through JSON,
dicts and flat URL parameters (`model.width=50&data.angles_deg=20,70,200`).

Conventions (see DESIGN.md): h(x) = c Σ_j a_j σ(⟨w_j, x⟩), σ(u) = max(u, γu); a bias is an
appended input coordinate equal to 1; loss reduced by mean (1/n Σ) or sum; time is gradient-flow
time (GD: t = kη).

Validation collects every problem at once into a `ConfigError` whose entries name the field by
its dotted path and say in a sentence what is wrong.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .limits import get_limits

NUMERICS_VERSION = "2"

LOSSES = ("square", "logistic", "exponential")
DATA_KINDS = ("points", "clusters", "two_signals", "teacher", "three_point", "digits", "array")


class ConfigError(ValueError):
    """Every problem with a configuration: a list of (dotted field path, message)."""

    def __init__(self, errors: list[tuple[str, str]]):
        self.errors = list(errors)
        super().__init__("; ".join(f"{p}: {m}" for p, m in self.errors))

    def for_field(self, prefix: str) -> list[str]:
        """Messages whose path starts with `prefix` (for showing them next to a control)."""
        return [m for p, m in self.errors if p == prefix or p.startswith(prefix + ".")
                or p.startswith(prefix + "[")]


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


Finite = Annotated[float, Field(allow_inf_nan=False)]
Pos = Annotated[float, Field(gt=0, allow_inf_nan=False)]
NonNeg = Annotated[float, Field(ge=0, allow_inf_nan=False)]


# ----------------------------------------------------------------------------- data
class _DataBase(_Section):
    bias: bool = Field(False, description="append a constant coordinate 1 to every input")


class PointsData(_DataBase):
    """2D points given by angle (degrees), radius and label: the 'data angles' users edit."""

    kind: Literal["points"] = "points"
    angles_deg: tuple[Finite, ...] = (15.0, 75.0, 195.0, 255.0)
    radii: tuple[Pos, ...] = (1.0, 1.0, 1.0, 1.0)
    labels: tuple[Finite, ...] = (1.0, 1.0, -1.0, -1.0)


class ClustersData(_DataBase):
    """k cluster centres on the circle (angle, radius) with isotropic Gaussian noise; one label
    per cluster."""

    kind: Literal["clusters"] = "clusters"
    angles_deg: tuple[Finite, ...] = (20.0, 80.0, 210.0)
    labels: tuple[Finite, ...] = (1.0, 1.0, -1.0)
    radius: Pos = 1.0
    n_per: Annotated[int, Field(ge=1)] = 10
    noise: NonNeg = 0.1


class TwoSignalsData(_DataBase):
    """Wang & Ma: x₊ = ‖x₊‖(1, 0) labelled +1 and x₋ at `angle_deg` from it labelled −1; the
    loss weights x₊ by the class weight p (n₊/n₋ and a class weight are the same parameter)."""

    kind: Literal["two_signals"] = "two_signals"
    angle_deg: Annotated[float, Field(gt=0, lt=180, allow_inf_nan=False)] = 17.19
    p: Pos = 2.0
    norm_plus: Pos = 1.0
    norm_minus: Pos = 1.0
    n_per: Annotated[int, Field(ge=1)] = 1
    noise: NonNeg = 0.0


class TeacherData(_DataBase):
    """Chistikov et al.: x_i ~ N(μ, (ρ/d) I), μ uniform on the sphere, y_i = relu(⟨v*, x_i⟩).
    Centred: v* = μ, ρ = 1. Uncentred: v* = x₀/‖x₀‖ for an extra sample x₀, ρ = √2 − 1.
    Samples with some ∠(v*, x_i) ≥ 90° are redrawn."""

    kind: Literal["teacher"] = "teacher"
    d: Annotated[int, Field(ge=2)] = 16
    n: Annotated[int, Field(ge=1)] | None = None  # None: n = d, as in the paper
    scheme: Literal["centred", "uncentred"] = "centred"
    rho: Pos | None = None  # None: the scheme's value


class ThreePointData(_DataBase):
    """Boursier & Flammarion's Section 5 data: univariate x with a hidden bias (input (x, 1))."""

    kind: Literal["three_point"] = "three_point"
    bias: bool = True
    x: tuple[Finite, ...] = (-0.75, -0.5, 0.125)
    y: tuple[Finite, ...] = (1.1, 0.1, 0.8)


class DigitsData(_DataBase):
    """Two classes of scikit-learn's 8×8 digits (pixels/16), first class +1, second −1, centred
    by the mean over all used images (Min et al.)."""

    kind: Literal["digits"] = "digits"
    classes: tuple[Annotated[int, Field(ge=0, le=9)], Annotated[int, Field(ge=0, le=9)]] = (0, 1)
    n_per_class: Annotated[int, Field(ge=1)] | None = None  # None: all (about 180 each)
    centre: bool = True


class ArrayData(_DataBase):
    """Data given directly (uploads): rows of X and their labels y."""

    kind: Literal["array"] = "array"
    X: tuple[tuple[Finite, ...], ...] = ((1.0, 0.0), (0.0, 1.0))
    y: tuple[Finite, ...] = (1.0, -1.0)


DataConfig = Annotated[
    Union[PointsData, ClustersData, TwoSignalsData, TeacherData, ThreePointData, DigitsData,  # noqa: UP007
          ArrayData],
    Field(discriminator="kind"),
]
DATA_CLASSES: dict[str, type[_DataBase]] = {
    "points": PointsData, "clusters": ClustersData, "two_signals": TwoSignalsData,
    "teacher": TeacherData, "three_point": ThreePointData, "digits": DigitsData,
    "array": ArrayData,
}


# ----------------------------------------------------------------------------- the rest
class ModelConfig(_Section):
    """h(x) = c Σ_j a_j σ(⟨w_j, x⟩), σ(u) = max(u, γu), width m."""

    width: Annotated[int, Field(ge=1)] = 50
    gamma: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)] = 0.0
    c: Pos = 1.0
    train_output: bool = True


class LossConfig(_Section):
    """square ½(ŷ−y)², logistic ln(1+e^{−yŷ}), exponential e^{−yŷ}; L = (1/n or 1) Σ_i s_i ℓ_i."""

    kind: Literal["square", "logistic", "exponential"] = "square"
    reduction: Literal["mean", "sum"] = "mean"


class InitConfig(_Section):
    """Entry std σ₀ = scale (none), scale/√m (sqrt_m), scale/√(dm) (sqrt_dm).

    balanced: w ~ N(0, σ₀² I), a_j = ±‖w_j‖ (random sign); gaussian: w, a independent N(0, σ₀²);
    dominated: w entries U(−σ₀, σ₀), a_j = ±σ₀√d (|a_j| > ‖w_j‖); fixed_output: w ~ N(0, σ₀² I),
    a_j = ±output_value / (1, √m or m by output_norm), not trained.
    """

    scheme: Literal["balanced", "gaussian", "dominated", "fixed_output"] = "balanced"
    scale: Annotated[float, Field(gt=0, le=1e3, allow_inf_nan=False)] = 1e-3
    normalisation: Literal["none", "sqrt_m", "sqrt_dm"] = "sqrt_m"
    output_value: Pos = 1.0
    output_norm: Literal["none", "sqrt_m", "m"] = "sqrt_m"


class IntegratorConfig(_Section):
    """gd: fixed step lr, t = k·lr, steps = round(t_end/lr). gf: adaptive Bogacki–Shampine 3(2)
    on dθ/dt = −∇L with error control (rtol, atol; atol None = 1e-6 × initial max|θ|)."""

    method: Literal["gd", "gf"] = "gf"
    t_end: Pos = 60.0
    lr: Annotated[float, Field(gt=0, le=100, allow_inf_nan=False)] = 1e-2
    rtol: Annotated[float, Field(ge=1e-13, le=0.1, allow_inf_nan=False)] = 1e-6
    atol: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = None
    max_steps: Annotated[int, Field(ge=1)] = 2_000_000


class RecordConfig(_Section):
    """Snapshots: `frames` times, log- or linearly spaced from t_first to t_end, plus t = 0.
    Dense scalars (loss, rates) on a `scalars`-point grid of the same spacing."""

    frames: Annotated[int, Field(ge=2)] = 120
    spacing: Literal["log", "linear"] = "log"
    t_first: Pos | None = None  # None: t_end·1e-4 (log) or t_end/frames (linear)
    scalars: Annotated[int, Field(ge=10)] = 800
    plane: Literal["auto", "pca", "axes", "signals", "teacher"] = "auto"


class Config(_Section):
    """One run. See the module docstring for conventions."""

    data: DataConfig = Field(default_factory=PointsData)
    model: ModelConfig = Field(default_factory=ModelConfig)
    loss: LossConfig = Field(default_factory=LossConfig)
    init: InitConfig = Field(default_factory=InitConfig)
    integrator: IntegratorConfig = Field(default_factory=IntegratorConfig)
    record: RecordConfig = Field(default_factory=RecordConfig)
    seed: Annotated[int, Field(ge=0, le=2**32 - 1)] = 0

    @model_validator(mode="after")
    def _cross_checks(self) -> Config:
        errs = cross_field_errors(self)
        if errs:
            raise _CrossError(errs)
        return self

    # -- construction ----------------------------------------------------------------------
    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Config:
        """Strict validation of a JSON-like dict (no silent type coercion). Raises ConfigError."""
        try:
            text = json.dumps(d, default=_json_default, allow_nan=True)
        except (TypeError, ValueError) as e:
            raise ConfigError([("", f"the configuration is not JSON-like data ({e})")]) from None
        return cls.from_json(text)

    @classmethod
    def from_json(cls, text: str | bytes) -> Config:
        try:
            return cls.model_validate_json(text, strict=True)
        except ValidationError as e:
            raise _to_config_error(e) from None
        except _CrossError as e:  # pragma: no cover - pydantic wraps it, kept for safety
            raise ConfigError(e.errors) from None

    # -- serialisation -----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def to_json(self) -> str:
        """Canonical JSON: sorted keys, no spaces, shortest exact float repr."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    def cache_key(self) -> str:
        """sha256 of the canonical JSON and the numerics version."""
        h = hashlib.sha256()
        h.update(NUMERICS_VERSION.encode())
        h.update(b"\0")
        h.update(self.to_json().encode())
        return h.hexdigest()

    def to_query(self) -> dict[str, str]:
        return to_query(self)

    def with_updates(self, updates: Mapping[str, Any]) -> Config:
        """A copy with dotted-path updates; string values are parsed as in URLs."""
        d = self.to_dict()
        kind = updates.get("data.kind")
        if kind is not None and kind != self.data.kind:
            d["data"] = {"kind": kind}  # a new data kind starts from its own defaults
        for key, value in updates.items():
            if isinstance(value, str):
                _set_path(d, key, _parse_value(key, value, d))
            else:
                _set_path(d, key, value)
        return Config.from_dict(d)

    # -- derived ------------------------------------------------------------------------------
    @property
    def gd_steps(self) -> int:
        return max(1, round(self.integrator.t_end / self.integrator.lr))

    @property
    def is_classification(self) -> bool:
        return labels_are_pm1(self.data)


class _CrossError(ValueError):
    def __init__(self, errors: list[tuple[str, str]]):
        self.errors = errors
        super().__init__("; ".join(f"{p}: {m}" for p, m in errors))


def _json_default(o: Any) -> Any:
    if hasattr(o, "tolist"):
        return o.tolist()
    if isinstance(o, tuple):
        return list(o)
    raise TypeError(f"{type(o).__name__} is not serialisable")


# ----------------------------------------------------------------------------- cross checks
def labels_are_pm1(data: Any) -> bool:
    """Whether the data's labels are all ±1 (classification)."""
    if data.kind in ("two_signals", "digits"):
        return True
    if data.kind in ("teacher", "three_point"):
        return False
    labels = data.y if data.kind == "array" else data.labels
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
    elif k == "digits":
        n, d = 2 * (data.n_per_class or 180), 64
    else:
        n, d = len(data.y), (len(data.X[0]) if data.X else 0)
    return n, d + b


def cross_field_errors(c: Config) -> list[tuple[str, str]]:
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
    elif data.kind == "teacher":
        if data.d > lim.max_dim:
            errs.append(("data.d", f"dimension {data.d} is over the limit {lim.max_dim} "
                         "(EAE_MAX_DIM)"))
    elif data.kind == "digits":
        if data.classes[0] == data.classes[1]:
            errs.append(("data.classes", "pick two different digit classes"))
    elif data.kind == "array":
        if len(data.y) == 0:
            errs.append(("data.y", "the data has no rows"))
        if len(data.X) != len(data.y):
            errs.append(("data.y", f"X has {len(data.X)} rows but y has {len(data.y)} labels"))
        widths = {len(r) for r in data.X}
        if len(widths) > 1:
            errs.append(("data.X", f"rows of X have different lengths: {sorted(widths)}"))
        elif widths == {0}:
            errs.append(("data.X", "rows of X are empty"))
    if errs:
        return errs
    n, d = data_shape(data)
    if n > lim.max_points:
        errs.append(("data", f"{n} data points is over the limit {lim.max_points} "
                     "(EAE_MAX_POINTS)"))
    if d > lim.max_dim:
        errs.append(("data", f"input dimension {d} is over the limit {lim.max_dim} "
                     "(EAE_MAX_DIM)"))
    # model / init / loss consistency
    if c.model.width > lim.max_width:
        errs.append(("model.width", f"width {c.model.width} is over the limit {lim.max_width} "
                     "(EAE_MAX_WIDTH)"))
    if c.init.scheme == "fixed_output" and c.model.train_output:
        errs.append(("model.train_output", "the fixed_output initialisation keeps the output "
                     "layer fixed: set model.train_output to false"))
    if c.loss.kind != "square" and not labels_are_pm1(data):
        errs.append(("loss.kind", f"the {c.loss.kind} loss needs labels ±1, but this "
                     f"{data.kind} data has other labels; use the square loss"))
    # recording
    if c.record.frames > lim.max_frames:
        errs.append(("record.frames", f"{c.record.frames} frames is over the limit "
                     f"{lim.max_frames} (EAE_MAX_FRAMES)"))
    if c.record.scalars > lim.max_scalars:
        errs.append(("record.scalars", f"{c.record.scalars} samples is over the limit "
                     f"{lim.max_scalars} (EAE_MAX_SCALARS)"))
    if c.record.t_first is not None and c.record.t_first >= c.integrator.t_end:
        errs.append(("record.t_first", f"the first recorded time {c.record.t_first:g} must be "
                     f"before the end time {c.integrator.t_end:g}"))
    if c.record.plane == "teacher" and data.kind != "teacher":
        errs.append(("record.plane", "the teacher plane needs teacher data"))
    # integrator and compute budget
    it = c.integrator
    if it.method == "gd":
        steps = it.t_end / it.lr
        if steps > min(it.max_steps, lim.max_steps) + 0.5:
            cap = min(it.max_steps, lim.max_steps)
            errs.append(("integrator.t_end", f"gd needs t_end/lr = {steps:.3g} steps, more than "
                         f"the step limit {cap:.3g} (integrator.max_steps, EAE_MAX_STEPS); "
                         "raise lr, lower t_end, or use gf"))
        work = steps * n * d * c.model.width
    else:
        if it.max_steps > lim.max_steps:
            errs.append(("integrator.max_steps", f"{it.max_steps} steps is over the limit "
                         f"{lim.max_steps} (EAE_MAX_STEPS)"))
        work = min(it.max_steps, lim.max_steps) * 3 * n * d * c.model.width
    if work > lim.max_compute and it.method == "gd":
        errs.append(("integrator", f"this run needs about {work:.2g} multiply-adds, over the "
                     f"compute limit {lim.max_compute:.2g} (EAE_MAX_COMPUTE); shorten t_end, "
                     "raise lr, or shrink the width or the data"))
    return errs


# ----------------------------------------------------------------------------- errors
_FRIENDLY = {
    "finite_number": "must be a finite number",
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "extra_forbidden": "is not a setting this tool knows",
    "missing": "is required",
    "json_invalid": "is not valid JSON",
}


def _loc_to_path(loc: tuple[Any, ...]) -> str:
    parts: list[str] = []
    items = list(loc)
    # discriminated unions add the tag as a location element: data.points.angles_deg
    if len(items) >= 2 and items[0] == "data" and items[1] in DATA_KINDS:
        items.pop(1)
    for it in items:
        if isinstance(it, int):
            parts.append(f"[{it}]")
        elif str(it) in ("function-after[_cross_checks()]",):
            continue
        else:
            parts.append(("." if parts else "") + str(it))
    return "".join(parts)


def _to_config_error(e: ValidationError) -> ConfigError:
    out: list[tuple[str, str]] = []
    for err in e.errors(include_url=False):
        ctx_err = (err.get("ctx") or {}).get("error")
        if isinstance(ctx_err, _CrossError):
            out.extend(ctx_err.errors)
            continue
        path = _loc_to_path(tuple(err.get("loc", ())))
        typ = err.get("type", "")
        msg = _FRIENDLY.get(typ, err.get("msg", "is not valid"))
        if typ == "union_tag_invalid":
            path = "data.kind"
            msg = f"must be one of {', '.join(DATA_KINDS)}"
        elif typ == "union_tag_not_found":
            path = "data.kind"
            msg = "is required to say which data to build"
        elif typ == "literal_error":
            msg = "must be " + err.get("msg", "").removeprefix("Input should be ")
        elif typ in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
            msg = "must be " + err.get("msg", "").removeprefix("Input should be ")
        inp = err.get("input")
        if typ not in ("missing", "union_tag_not_found") and not isinstance(inp, dict | list):
            shown = repr(inp)
            if len(shown) > 40:
                shown = shown[:37] + "..."
            msg = f"{msg} (got {shown})"
        out.append((path or "config", msg))
    if not out:
        out.append(("config", str(e)))
    return ConfigError(out)


# ----------------------------------------------------------------------------- flat URL form
def _flatten(d: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


def _set_path(d: dict[str, Any], key: str, value: Any) -> None:
    parts = key.split(".")
    cur = d
    for p in parts[:-1]:
        nxt = cur.get(p)
        if not isinstance(nxt, dict):
            nxt = {}
            cur[p] = nxt
        cur = nxt
    cur[parts[-1]] = value


def _fmt(v: Any) -> str:
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        if any(isinstance(x, list) for x in v):
            return json.dumps(v, separators=(",", ":"))
        return ",".join(_fmt(x) for x in v)
    return repr(v) if isinstance(v, float) else str(v)


def to_query(c: Config) -> dict[str, str]:
    """Flat URL parameters holding the fields that differ from the defaults (for the same data
    kind), so `from_query(to_query(c)) == c` and shared links stay short."""
    base = Config(data=DATA_CLASSES[c.data.kind]()).to_dict()
    flat, flat_base = _flatten(c.to_dict()), _flatten(base)
    out = {k: _fmt(v) for k, v in flat.items() if flat_base.get(k, object()) != v}
    if c.data.kind != "points":
        out["data.kind"] = c.data.kind
    return dict(sorted(out.items()))


def _field_annotation(path: str, kind: str) -> Any:
    parts = path.split(".")
    if parts[0] == "data" and len(parts) == 2:
        cls = DATA_CLASSES.get(kind, PointsData)
        f = cls.model_fields.get(parts[1])
        return f.annotation if f else None
    if len(parts) == 1:
        f = Config.model_fields.get(parts[0])
        return f.annotation if f else None
    if len(parts) == 2 and parts[0] in Config.model_fields and parts[0] != "data":
        sub = Config.model_fields[parts[0]].annotation
        f = sub.model_fields.get(parts[1]) if hasattr(sub, "model_fields") else None
        return f.annotation if f else None
    return None


def _parse_value(key: str, raw: str, current: Mapping[str, Any] | None = None) -> Any:
    """Turn one URL string into a JSON value guided by the field's type; unknown shapes are left
    as strings so that validation names the field."""
    kind = "points"
    if current is not None:
        kind = str((current.get("data") or {}).get("kind", "points"))
    ann = _field_annotation(key, kind)
    text = raw.strip()
    s = repr(ann)
    if text.lower() in ("none", "null", "") and "None" in s:
        return None
    if "tuple" in s:
        if text.startswith("["):
            try:
                return json.loads(text)
            except ValueError:
                return raw
        if text == "":
            return []
        return [_scalar(x) for x in text.split(",")]
    return _scalar(text)


def _scalar(text: str) -> Any:
    t = text.strip()
    low = t.lower()
    if low in ("true", "false"):
        return low == "true"
    try:
        return int(t)
    except ValueError:
        pass
    try:
        v = float(t)
        return v
    except ValueError:
        return t


def from_query(params: Mapping[str, str | list[str]]) -> Config:
    """Strict: every parameter must be valid, else ConfigError naming each bad one."""
    d: dict[str, Any] = {}
    kind = params.get("data.kind")
    if isinstance(kind, list):
        kind = kind[-1] if kind else None
    if kind is not None:
        _set_path(d, "data.kind", kind)
    errs: list[tuple[str, str]] = []
    for key, raw in params.items():
        if isinstance(raw, list):
            raw = raw[-1] if raw else ""
        if key == "data.kind":
            continue
        if not isinstance(key, str) or len(key) > 64 or not isinstance(raw, str):
            errs.append((str(key)[:64], "is not a setting this tool knows"))
            continue
        if len(raw) > 200_000:
            errs.append((key, "is too long"))
            continue
        if _field_annotation(key, str(kind or "points")) is None:
            errs.append((key, "is not a setting this tool knows"))
            continue
        _set_path(d, key, _parse_value(key, raw, d))
    if errs:
        raise ConfigError(errs)
    if "data" in d:
        d["data"].setdefault("kind", "points")
    return Config.from_dict(d)


def config_from_query(params: Mapping[str, str | list[str]]) -> tuple[Config, list[str]]:
    """Lenient: the config the URL describes, dropping every parameter that is invalid (each
    with a warning), falling back to defaults when nothing valid is left. Never raises."""
    current = {k: (v[-1] if isinstance(v, list) and v else v) for k, v in params.items()
               if isinstance(k, str)}
    warnings: list[str] = []
    for _ in range(len(current) + 2):
        try:
            return from_query(current), warnings
        except ConfigError as e:
            dropped = False
            for path, msg in e.errors:
                for key in [k for k in current if _matches(k, path)]:
                    shown = str(current[key])
                    shown = shown if len(shown) <= 40 else shown[:37] + "..."
                    warnings.append(f"ignored {key}={shown!r}: {msg}")
                    del current[key]
                    dropped = True
            if not dropped:
                break
        except Exception as e:  # a URL must never crash a page
            warnings.append(f"ignored the URL parameters: {e}")
            break
    if current:
        warnings.append("the link's settings did not fit together; showing the defaults")
    return Config(), warnings


def _matches(key: str, path: str) -> bool:
    base = path.split("[")[0]
    if key == base or key.startswith(base + ".") or base.startswith(key + "."):
        return True
    # a cross-field error on a section (e.g. "data" or "integrator") blames its keys
    return base in ("data", "integrator", "config", "") and key.startswith(base)
