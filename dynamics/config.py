"""The single, validated, serialisable description of a run.

A `Config` fixes everything that determines a trajectory: data, model, loss, initialisation,
integrator, recording and seed. It is immutable; its canonical JSON (sorted keys, exact float
repr) is hashed with `NUMERICS_VERSION` into the cache key, and it round-trips through JSON,
dicts and flat URL parameters (`model.width=50&data.angles_deg=20,70,200`).

Conventions (see DESIGN.md): h(x) = c Σ_j a_j σ(⟨w_j, x⟩), σ(u) = max(u, γu); a bias is an
appended input coordinate equal to 1; loss reduced by mean (1/n Σ) or sum; time is gradient-flow
time (GD: t = kη).

Validation collects every problem at once into a `ConfigError` whose entries name the field by
its dotted path and say in a sentence what is wrong (what to change, and to what range).

Uploaded data (`ArrayData`) stays a read-only float64 NumPy array inside the config: the cache
key hashes its bytes (sha256 of the little-endian float64 values, with the shape), the JSON form
is ``{"dtype": "<f8", "shape": [n, d], "zlib_base64": ...}`` (exact, about the size of the
uploaded file), and it is never put in a URL. Nested lists are still accepted on input.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import weakref
import zlib
from collections.abc import Mapping
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import numpy as np
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    SerializationInfo,
    ValidationError,
    ValidationInfo,
    model_validator,
)
from pydantic_core import PydanticCustomError

from .limits import Limits, get_limits

NUMERICS_VERSION = "3"  # 3: kernels without fast-math; GD blocks fixed by the size

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


# Arrays (uploads) ------------------------------------------------------------------------
_ARRAYS = "eae_arrays"  # validation context: arrays handed over by `Config.from_dict`
_DIGEST = "eae_digest"  # serialisation context: arrays as digests (for the cache key)
_LISTS = "eae_lists"  # serialisation context: arrays as nested lists (URL parameters)
_MAX_NESTING = 8  # brackets deeper than this in a URL or --set value are refused unparsed


class _ArrayMemo:
    """Per-array memo of the sha256 digest and the JSON encoding. Arrays held by configs are
    read-only and never change, so both are computed at most once per array object."""

    def __init__(self) -> None:
        self._items: dict[int, dict[str, Any]] = {}

    def get(self, arr: np.ndarray, what: str, make: Any) -> Any:
        slot = self._items.get(id(arr))
        if slot is None:
            slot = self._items[id(arr)] = {}
            weakref.finalize(arr, self._items.pop, id(arr), None)
        if what not in slot:
            slot[what] = make(arr)
        return slot[what]


_MEMO = _ArrayMemo()


def _bytes_le(arr: np.ndarray) -> memoryview:
    """The array's values as little-endian float64 bytes (no copy on little-endian hosts)."""
    le = np.ascontiguousarray(arr, dtype="<f8")
    return memoryview(le).cast("B")


def array_digest(arr: np.ndarray) -> str:
    """sha256 of shape and little-endian float64 bytes: what the cache key sees of an array."""
    def make(a: np.ndarray) -> str:
        h = hashlib.sha256(f"<f8{tuple(a.shape)}".encode())
        h.update(_bytes_le(a))
        return h.hexdigest()
    return str(_MEMO.get(arr, "digest", make))


def _encode_array(arr: np.ndarray, info: SerializationInfo) -> Any:
    ctx = info.context or {}
    if ctx.get(_LISTS):
        return arr.tolist()
    if ctx.get(_DIGEST):
        return {"dtype": "<f8", "shape": list(arr.shape), "sha256": array_digest(arr)}

    def make(a: np.ndarray) -> dict[str, Any]:
        packed = base64.b64encode(zlib.compress(_bytes_le(a), 1)).decode("ascii")
        return {"dtype": "<f8", "shape": list(a.shape), "zlib_base64": packed}
    return dict(_MEMO.get(arr, "json", make))


def _array_error(msg: str) -> PydanticCustomError:
    return PydanticCustomError("array_invalid", msg)


def _immutable(arr: np.ndarray) -> bool:
    """Whether no one can change these values: read-only all the way down to the memory."""
    base: Any = arr
    while isinstance(base, np.ndarray):
        if base.flags.writeable:
            return False
        if base.base is None:
            return True
        base = base.base
    return isinstance(base, bytes)


def _decode_array(d: Mapping[str, Any], ndim: int) -> np.ndarray:
    if set(d) != {"dtype", "shape", "zlib_base64"} or d["dtype"] != "<f8":
        raise _array_error('must be a list of numbers, or {"dtype": "<f8", "shape": [...], '
                           '"zlib_base64": "..."} as written by this tool')
    shape = d["shape"]
    if (not isinstance(shape, list) or len(shape) != ndim
            or not all(type(k) is int and k >= 0 for k in shape)):
        raise _array_error(f"shape must be a list of {ndim} whole numbers")
    lim = get_limits()
    size = math.prod(shape)
    if size > max(lim.max_points, 1) * max(lim.max_dim + 1, 1):
        raise _array_error(f"holds {size:,} values, more than the limits allow ("
                           f"{lim.max_points} points × {lim.max_dim} dimensions)")
    out = np.empty(size, dtype="<f8")
    view, pos = memoryview(out).cast("B"), 0
    try:  # inflate in 16 MB pieces straight into `out`: peak memory is the array itself
        z = zlib.decompressobj()
        pending = base64.b64decode(str(d["zlib_base64"]), validate=True)
        while not z.eof:
            piece = z.decompress(pending, 1 << 24)
            pending = z.unconsumed_tail
            if pos + len(piece) > len(view):
                raise _array_error("its encoded values do not match its shape")
            view[pos:pos + len(piece)] = piece
            pos += len(piece)
            if not piece and not pending:
                break
    except (binascii.Error, zlib.error):
        raise _array_error("its encoded values are damaged") from None
    if pos != len(view) or not z.eof:
        raise _array_error("its encoded values do not match its shape")
    out.flags.writeable = False
    return out.reshape(shape)


def _from_lists(value: Any, ndim: int) -> np.ndarray:
    """A strict float array from (nested) lists: numbers only (no strings, no booleans)."""
    rows = list(value) if ndim == 2 else [value]
    if ndim == 2 and not rows:
        return np.zeros((0, 0))
    widths = set()
    for i, row in enumerate(rows):
        if not isinstance(row, list | tuple):
            raise _array_error(f"row {i} must be a list of numbers (got {_short(row)})")
        widths.add(len(row))
        for j, v in enumerate(row):
            if type(v) not in (int, float) and not isinstance(v, np.floating | np.integer):
                where = f"[{i}][{j}]" if ndim == 2 else f"[{j}]"
                raise _array_error(f"entry {where} must be a number (got {_short(v)})")
    if len(widths) > 1:
        raise _array_error(f"rows of X have different lengths: {sorted(widths)[:10]}; give "
                           "every row the same number of columns")
    arr = np.array(rows, dtype=np.float64)
    return arr if ndim == 2 else arr.reshape(-1)


def _short(v: Any) -> str:
    shown = repr(v)
    return shown if len(shown) <= 40 else shown[:37] + "..."


def _to_array(ndim: int) -> Any:
    def validate(value: Any, info: ValidationInfo) -> np.ndarray:
        if isinstance(value, dict) and set(value) == {"__array__"}:
            held = (info.context or {}).get(_ARRAYS)
            idx = value["__array__"]
            if held is None or type(idx) is not int or not 0 <= idx < len(held):
                raise _array_error("must be a list of numbers")
            value = held[idx]
        if isinstance(value, np.ndarray):
            arr = value
            if arr.dtype.kind not in "iuf":
                raise _array_error(f"must hold numbers, not values of type {arr.dtype}")
        elif isinstance(value, dict):
            arr = _decode_array(value, ndim)
        elif isinstance(value, list | tuple):
            arr = _from_lists(value, ndim)
        else:
            raise _array_error(f"must be a list of numbers (got {_short(value)})")
        if arr.ndim != ndim:
            raise _array_error(f"must be {'a table (rows × columns)' if ndim == 2 else 'a list'}"
                               f" of numbers; got an array of shape {arr.shape}")
        if not (arr.dtype == np.float64 and arr.flags.c_contiguous and _immutable(arr)):
            arr = np.array(arr, dtype=np.float64, order="C")  # our own copy
            arr.flags.writeable = False
        if arr.size:
            bad = ~np.isfinite(arr)
            if bad.any():
                where = tuple(int(i) for i in np.argwhere(bad)[0])
                raise _array_error(f"entry {list(where)} must be a finite number (got "
                                   f"{arr[where]!r}); {int(bad.sum())} entries are NaN or "
                                   "infinite")
        return arr
    return validate


FloatMatrix = Annotated[np.ndarray, PlainValidator(_to_array(2)),
                        PlainSerializer(_encode_array, when_used="json")]
FloatVector = Annotated[np.ndarray, PlainValidator(_to_array(1)),
                        PlainSerializer(_encode_array, when_used="json")]


def _same_array(a: np.ndarray, b: np.ndarray) -> bool:
    return a is b or (a.shape == b.shape and array_digest(a) == array_digest(b))


class ArrayData(_DataBase):
    """Data given directly (uploads): rows of X (n × d) and their labels y (n), held as
    read-only float64 arrays; equal when their bits are equal."""

    kind: Literal["array"] = "array"
    X: FloatMatrix = Field(default_factory=lambda: _frozen([[1.0, 0.0], [0.0, 1.0]]))
    y: FloatVector = Field(default_factory=lambda: _frozen([1.0, -1.0]))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ArrayData):
            return NotImplemented
        return (self.bias == other.bias and _same_array(self.X, other.X)
                and _same_array(self.y, other.y))

    def __hash__(self) -> int:
        return hash((self.bias, array_digest(self.X), array_digest(self.y)))


def _frozen(rows: Any) -> np.ndarray:
    arr = np.array(rows, dtype=np.float64)
    arr.flags.writeable = False
    return arr


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
        d, arrays = _hand_over_arrays(d)
        try:
            text = json.dumps(d, default=_json_default, allow_nan=True)
        except (TypeError, ValueError) as e:
            raise ConfigError([("", f"the configuration is not JSON-like data ({e})")]) from None
        except RecursionError:
            raise ConfigError([("", "the configuration is nested too deeply; settings are at "
                                "most two levels of lists deep")]) from None
        return cls.from_json(text, _arrays=arrays)

    @classmethod
    def from_json(cls, text: str | bytes, *, _arrays: list[np.ndarray] | None = None) -> Config:
        try:
            return cls.model_validate_json(text, strict=True, context={_ARRAYS: _arrays or []})
        except ValidationError as e:
            raise to_config_error(e) from None
        except _CrossError as e:  # pragma: no cover - pydantic wraps it, kept for safety
            raise ConfigError(e.errors) from None
        except RecursionError:  # pragma: no cover - the JSON parser limits depth itself
            raise ConfigError([("", "the configuration is nested too deeply")]) from None

    # -- serialisation -----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (arrays in their compact encoded form)."""
        return self.model_dump(mode="json")

    def to_json(self) -> str:
        """Canonical JSON: sorted keys, no spaces, shortest exact float repr."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    def cache_key(self) -> str:
        """sha256 of the numerics version and the canonical JSON, in which an array stands as
        the sha256 of its bytes (so hashing an upload reads it once and copies nothing)."""
        d = self.model_dump(mode="json", context={_DIGEST: True})
        h = hashlib.sha256()
        h.update(NUMERICS_VERSION.encode())
        h.update(b"\0")
        h.update(json.dumps(d, sort_keys=True, separators=(",", ":")).encode())
        return h.hexdigest()

    def to_query(self, base: Config | None = None) -> dict[str, str]:
        return to_query(self, base)

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


def _hand_over_arrays(d: Mapping[str, Any]) -> tuple[Mapping[str, Any], list[np.ndarray]]:
    """Array data's NumPy arrays are passed to validation as they are (not as JSON lists):
    they are replaced by placeholders in a shallow copy of `d`."""
    data = d.get("data") if isinstance(d, Mapping) else None
    if not isinstance(data, Mapping) or data.get("kind") != "array":
        return d, []
    arrays: list[np.ndarray] = []
    new_data = dict(data)
    for name in ("X", "y"):
        v = new_data.get(name)
        if isinstance(v, np.ndarray):
            new_data[name] = {"__array__": len(arrays)}
            arrays.append(v)
    return ({**d, "data": new_data}, arrays) if arrays else (d, [])


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
        n, d = len(data.y), (data.X.shape[1] if data.X.ndim == 2 else 0)
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
            errs.append(("data.d", _over(lim, "max_dim", data.d, "input dimensions")))
    elif data.kind == "digits":
        if data.classes[0] == data.classes[1]:
            errs.append(("data.classes", "pick two different digit classes"))
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
        errs.append(("data", _over(lim, "max_points", n, "data points")))
    if d > lim.max_dim:
        errs.append(("data", _over(lim, "max_dim", d, "input dimensions (bias included)")))
    # model / init / loss consistency
    if c.model.width > lim.max_width:
        errs.append(("model.width", _over(lim, "max_width", c.model.width, "hidden neurons")))
    if c.init.scheme == "fixed_output" and c.model.train_output:
        errs.append(("model.train_output", "the fixed_output initialisation keeps the output "
                     "layer fixed: set model.train_output to false"))
    if c.loss.kind != "square" and not labels_are_pm1(data):
        errs.append(("loss.kind", f"the {c.loss.kind} loss needs labels ±1, but this "
                     f"{data.kind} data has other labels; use the square loss"))
    # recording
    if c.record.frames > lim.max_frames:
        errs.append(("record.frames", _over(lim, "max_frames", c.record.frames, "frames")))
    if c.record.scalars > lim.max_scalars:
        errs.append(("record.scalars", _over(lim, "max_scalars", c.record.scalars,
                                             "scalar samples")))
    if c.record.t_first is not None and c.record.t_first >= c.integrator.t_end:
        errs.append(("record.t_first", f"the first recorded time {c.record.t_first:g} must be "
                     f"before the end time {c.integrator.t_end:g}"))
    if c.record.plane == "teacher" and data.kind != "teacher":
        errs.append(("record.plane", "the teacher plane needs teacher data"))
    if not any(p in ("data", "data.d", "model.width") for p, _ in errs):  # sizes first
        errs.extend(_compute_errors(c, n, d, lim))
    return errs


GF_MIN_STEPS = 200
"""The steps (3 gradient evaluations each) the compute limit counts for any gf run, or one per
recorded frame if more. Measured: a default run (t_end 60) takes about 350 steps, short ones
(t_end 5) about 100, long ones 10³–10⁵. The limit thus bounds the cost of one evaluation
(n·d·m ≤ max_compute / 600, about a second here) before any work is done; the deadline
bounds how many are taken."""


def gf_min_evaluations(c: Config) -> int:
    """Gradient evaluations the compute limit counts for a gf run of `c`."""
    return 3 * max(GF_MIN_STEPS, c.record.frames)


def _num(v: float) -> str:
    """A count for messages: thousands separators from 10,000 on."""
    v = int(v)
    return f"{v:,}" if abs(v) >= 10_000 else str(v)


def _over(lim: Limits, name: str, got: int, unit: str) -> str:
    cap = getattr(lim, name)
    return (f"use at most {_num(cap)} {unit}: {_num(got)} is over the limit {_num(cap)} (the "
            f"server's {name}, {lim.env_name(name)})")


def _about(need: float, cap: float) -> str:
    """`need` with as many digits as it takes to read as more than `cap` shown with 3."""
    for digits in range(3, 17):
        shown = f"{need:.{digits}g}"
        if float(shown) > float(f"{cap:.3g}"):
            return shown
    return repr(need)


def _down(x: float) -> str:
    """`x` rounded down to 4 significant digits (an upper bound to suggest)."""
    if x <= 0 or not math.isfinite(x):
        return f"{x:g}"
    step = 10.0 ** (math.floor(math.log10(x)) - 3)
    return f"{math.floor(x / step) * step:.4g}"


def _compute_errors(c: Config, n: int, d: int, lim: Limits) -> list[tuple[str, str]]:
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
                         f"integrator.t_end to at most {_down(cap * it.lr)}, raise "
                         f"integrator.lr to at least {_about(it.t_end / cap, it.lr)}, or use "
                         "gf"))
        work = steps * per_eval
        if work > cap_c:
            fixes = [f"lower integrator.t_end to at most {_down(cap_c / per_eval * it.lr)}",
                     f"raise integrator.lr to at least {_about(work / cap_c * it.lr, it.lr)}"]
            m_max = min(int(cap_c // (steps * n * d)), lim.max_width)
            if m_max >= 1:
                fixes.append(f"lower model.width to at most {_num(m_max)}")
            errs.append(("integrator", f"this run needs about {_about(work, cap_c)} "
                         f"multiply-adds ({steps:.3g} steps of n·d·m = {_num(per_eval)}), over "
                         f"the compute limit {cap_c:.3g} (the server's max_compute, "
                         f"EAE_MAX_COMPUTE): {', '.join(fixes[:-1])} or {fixes[-1]}"))
    else:
        if it.max_steps > lim.max_steps:
            errs.append(("integrator.max_steps", _over(lim, "max_steps", it.max_steps, "steps")))
        evals = gf_min_evaluations(c)
        work = evals * per_eval
        if work > cap_c:
            m_max = min(int(cap_c // (evals * n * d)), lim.max_width)
            head = (f"a gf run takes hundreds of gradient evaluations (the limit counts "
                    f"{_num(evals)}) of n·d·m = {_num(per_eval)} multiply-adds each, about "
                    f"{_about(work, cap_c)} in all, over the compute limit {cap_c:.3g} (the "
                    f"server's max_compute, EAE_MAX_COMPUTE)")
            if m_max >= 1:
                errs.append(("model.width", f"{head}: lower model.width to at most "
                             f"{_num(m_max)}, or use fewer data points or dimensions"))
            else:
                errs.append(("data", f"{head}: use fewer data points or dimensions (n·d at "
                             f"most {_num(cap_c // (evals * m))} at this width)"))
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


def to_config_error(e: ValidationError) -> ConfigError:
    """A pydantic ValidationError (of a Config or of a model holding one) as a ConfigError with
    readable (dotted path, message) pairs."""
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
        if (typ in ("int_type", "int_from_float") and isinstance(inp, float)
                and inp.is_integer()):
            out.append((path, _whole_number(path, inp)))
            continue
        if typ not in ("missing", "union_tag_not_found", "array_invalid") and not isinstance(
                inp, dict | list):
            shown = repr(inp)
            if len(shown) > 40:
                shown = shown[:37] + "..."
            msg = f"{msg} (got {shown})"
        out.append((path or "config", msg))
    if not out:
        out.append(("config", str(e)))
    return ConfigError(out)


_LIMITED = {"model.width": ("max_width", "hidden neurons"),
            "data.d": ("max_dim", "input dimensions"),
            "record.frames": ("max_frames", "frames"),
            "record.scalars": ("max_scalars", "scalar samples"),
            "integrator.max_steps": ("max_steps", "steps")}


def _whole_number(path: str, value: float) -> str:
    """A whole number written as a float (1e9, 100.0): the limit, if it is over one, else how
    to write it."""
    lim = get_limits()
    name, unit = _LIMITED.get(path, ("", ""))
    if name and value > getattr(lim, name):
        return _over(lim, name, int(value), unit)
    return (f"must be a whole number written without a decimal point or exponent, such as "
            f"{int(value)} (got {value:g})")


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


def _url_dict(c: Config) -> dict[str, Any]:
    """`to_dict` with arrays as nested lists (what a URL parameter holds)."""
    return c.model_dump(mode="json", context={_LISTS: True})


def to_query(c: Config, base: Config | None = None) -> dict[str, str]:
    """Flat URL parameters holding the fields that differ from `base` (default: the defaults),
    so `from_query(to_query(c, base), base) == c` and shared links stay short. A data kind other
    than base's is written as `data.kind` with its fields relative to that kind's defaults."""
    ref = _url_dict(base if base is not None else Config())
    if ref["data"]["kind"] != c.data.kind:
        ref["data"] = DATA_CLASSES[c.data.kind]().model_dump(mode="json",
                                                               context={_LISTS: True})
        ref["data.kind"] = None  # forces the kind into the output
    flat, flat_base = _flatten(_url_dict(c)), _flatten(ref)
    out = {k: _fmt(v) for k, v in flat.items() if flat_base.get(k, object()) != v}
    if "data.kind" in ref:
        out["data.kind"] = c.data.kind
    return dict(sorted(out.items()))


def field_annotation(path: str, kind: str) -> Any:
    """The type annotation of a dotted field (`data.*` for data of `kind`), None if no such
    field."""
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
    ann = field_annotation(key, kind)
    text = raw.strip()
    s = repr(ann)
    if text.lower() in ("none", "null", "") and "None" in s:
        return None
    if "tuple" in s or ann is np.ndarray:
        if text.startswith("["):
            depth = _nesting(text)
            if depth > _MAX_NESTING:
                raise ConfigError([(key, f"is nested {depth} levels deep; give a list of "
                                    "numbers such as 1,2,3 or, for a table, [[1,2],[3,4]]")])
            try:
                return json.loads(text)
            except (ValueError, RecursionError):
                return raw
        if text == "":
            return []
        return [_scalar(x) for x in text.split(",")]
    value = _scalar(text)
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63 and _is_int(ann):
        return int(value)  # 1e9 for a whole-number field: let the range check speak
    return value


def _nesting(text: str) -> int:
    """Deepest bracket nesting in `text` (one linear pass, no recursion)."""
    depth = deepest = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def _is_int(ann: Any) -> bool:
    """Whether a field annotation is a whole number (possibly optional or constrained)."""
    if ann is int:
        return True
    return any(a is int or (get_origin(a) is Annotated and get_args(a)[0] is int)
               for a in get_args(ann))


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


def from_query(params: Mapping[str, str | list[str]], base: Config | None = None) -> Config:
    """Strict: every parameter must be valid, else ConfigError naming each bad one. Parameters
    change `base` (default: the defaults); a new `data.kind` starts from that kind's defaults."""
    d: dict[str, Any] = base.to_dict() if base is not None else {}
    kind = params.get("data.kind")
    if isinstance(kind, list):
        kind = kind[-1] if kind else None
    if kind is not None:
        if base is None or kind != base.data.kind:
            d.pop("data", None)
        _set_path(d, "data.kind", kind)
    elif base is not None:
        kind = base.data.kind
    errs: list[tuple[str, str]] = []
    for key, raw in params.items():
        if isinstance(raw, list):
            raw = raw[-1] if raw else ""
        if key == "data.kind":
            continue
        problem = _param_problem(key, raw, str(kind or "points"))
        if problem:
            errs.append((str(key)[:64], problem))
            continue
        try:
            _set_path(d, key, _parse_value(key, raw, d))
        except ConfigError as e:
            errs.extend(e.errors)
    if errs:
        raise ConfigError(errs)
    if "data" in d:
        d["data"].setdefault("kind", "points")
    return Config.from_dict(d)


def config_from_query(params: Mapping[str, str | list[str]], base: Config | None = None
                      ) -> tuple[Config, list[str]]:
    """Lenient: the config the URL describes (as changes of `base`, default: the defaults),
    dropping every parameter that is invalid (each with a warning), falling back to `base`
    when nothing valid is left. Never raises."""
    warnings: list[str] = []
    kind = params.get("data.kind")
    kind = kind[-1] if isinstance(kind, list) and kind else kind
    if not isinstance(kind, str):
        kind = base.data.kind if base is not None else "points"
    # one pass drops every parameter that is wrong by itself (unknown, too long, not text);
    # what is left are known fields, at most a few dozen, so the retries below stay cheap
    current: dict[str, Any] = {}
    refused = 0
    for k, v in params.items():
        raw = v[-1] if isinstance(v, list) and v else v
        problem = None if k == "data.kind" else _param_problem(k, raw, kind)
        if problem is None:
            current[k] = raw
            continue
        refused += 1
        if refused <= _MAX_WARNINGS:
            warnings.append(f"ignored {_shown(k)}={_shown(raw)}: {problem}")
    if refused > _MAX_WARNINGS:
        warnings.append(f"ignored {refused - _MAX_WARNINGS:,} more parameters this tool does "
                        "not know")
    for _ in range(len(current) + 2):
        try:
            return from_query(current, base), warnings
        except ConfigError as e:
            blamed: dict[str, str] = {}
            for path, msg in e.errors:
                for key in current:
                    if key not in blamed and _matches(key, path):
                        blamed[key] = msg
            for key, msg in blamed.items():
                warnings.append(f"ignored {key}={_shown(current.pop(key))}: {msg}")
            if not blamed:
                break
        except Exception as e:  # a URL must never crash a page
            warnings.append(f"ignored the URL parameters: {e}")
            break
    if current:
        warnings.append("the link's settings did not fit together; showing the defaults")
    return (base if base is not None else Config()), warnings


_MAX_WARNINGS = 20  # unknown URL parameters listed one by one, the rest counted


def _param_problem(key: Any, raw: Any, kind: str) -> str | None:
    """Why one URL parameter cannot be a setting on its own, or None."""
    if not isinstance(key, str) or len(key) > 64 or not isinstance(raw, str):
        return "is not a setting this tool knows"
    if len(raw) > 200_000:
        return "is too long (at most 200,000 characters)"
    if field_annotation(key, kind) is None:
        return "is not a setting this tool knows"
    return None


def _shown(v: Any) -> str:
    s = str(v)
    return repr(s if len(s) <= 40 else s[:37] + "...")


def _matches(key: str, path: str) -> bool:
    base = path.split("[")[0]
    if key == base or key.startswith(base + ".") or base.startswith(key + "."):
        return True
    # a cross-field error on a section (e.g. "data" or "integrator") blames its keys
    return base in ("data", "integrator", "config", "") and key.startswith(base)


def field_error(base: Config, path: str, value: Any) -> str:
    """The message when `value` is wrong for `path` in itself ("" when it is fine): a field-level
    error of `base` with `path` set to `value` (a string is parsed as in a URL). Checks across
    fields run only once every field is valid, so a cross-field error means the value is fine
    alone and only the combination is wrong (sweeps make such a point an "invalid" row)."""
    d = base.to_dict()
    _set_path(d, path, _parse_value(path, value, d) if isinstance(value, str) else value)
    try:
        Config.model_validate_json(json.dumps(d, default=_json_default), strict=True)
    except ValidationError as e:
        if any(isinstance((err.get("ctx") or {}).get("error"), _CrossError)
               for err in e.errors(include_url=False)):
            return ""
        errs = to_config_error(e).errors
        own = [m for p, m in errs if p == path or p.startswith(path + "[")]
        return "; ".join(own) or "; ".join(f"{p}: {m}" for p, m in errs)
    except (TypeError, ValueError) as e:
        return str(e)
    return ""
