"""What is wrong with a configuration, said so that the user knows what to change.

`ConfigError` lists every problem at once as (dotted field path, sentence) pairs. The phrases
for size limits (`over_limit`, ...) are shared by the checks across fields; `to_config_error`
turns pydantic's field errors into the same form.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import ValidationError

from ..limits import Limits, get_limits
from .sections import DATA_KINDS


class ConfigError(ValueError):
    """Every problem with a configuration: a list of (dotted field path, message)."""

    def __init__(self, errors: list[tuple[str, str]]):
        self.errors = list(errors)
        super().__init__("; ".join(f"{p}: {m}" for p, m in self.errors))

    def for_field(self, prefix: str) -> list[str]:
        """Messages whose path starts with `prefix` (for showing them next to a control)."""
        return [m for p, m in self.errors if p == prefix or p.startswith(prefix + ".")
                or p.startswith(prefix + "[")]


class CrossFieldError(ValueError):
    """Raised inside validation by the checks across fields; pydantic wraps it, and
    `to_config_error` unwraps its (path, message) pairs unchanged."""

    def __init__(self, errors: list[tuple[str, str]]):
        self.errors = errors
        super().__init__("; ".join(f"{p}: {m}" for p, m in errors))


# ----------------------------------------------------------------------------- limit phrases
def count(v: float) -> str:
    """A count for messages: thousands separators from 10,000 on."""
    v = int(v)
    return f"{v:,}" if abs(v) >= 10_000 else str(v)


def over_limit(lim: Limits, name: str, got: int, unit: str) -> str:
    """"use at most N units: got is over the limit N (the server's name, EAE_NAME)"."""
    cap = getattr(lim, name)
    return (f"use at most {count(cap)} {unit}: {count(got)} is over the limit {count(cap)} (the "
            f"server's {name}, {lim.env_name(name)})")


def above(need: float, cap: float) -> str:
    """`need` with as many digits as it takes to read as more than `cap` shown with 3."""
    for digits in range(3, 17):
        shown = f"{need:.{digits}g}"
        if float(shown) > float(f"{cap:.3g}"):
            return shown
    return repr(need)


def round_down(x: float) -> str:
    """`x` rounded down to 4 significant digits (an upper bound to suggest)."""
    if x <= 0 or not math.isfinite(x):
        return f"{x:g}"
    step = 10.0 ** (math.floor(math.log10(x)) - 3)
    return f"{math.floor(x / step) * step:.4g}"


# ----------------------------------------------------------------------------- field errors
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
    "dict_type": "is a group of settings, not one value: set its fields by their dotted names",
    "model_type": "is a group of settings, not one value: set its fields by their dotted names",
}

# whole-number fields with a server limit: 1e9 written for them is answered with the limit
_LIMITED = {"model.width": ("max_width", "hidden neurons"),
            "data.d": ("max_dim", "input dimensions"),
            "record.frames": ("max_frames", "frames"),
            "record.scalars": ("max_scalars", "scalar samples"),
            "integrator.max_steps": ("max_steps", "steps")}


def _loc_to_path(loc: tuple[Any, ...]) -> str:
    parts: list[str] = []
    items = list(loc)
    # discriminated unions add the tag as a location element: data.points.angles_deg
    if len(items) >= 2 and items[0] == "data" and items[1] in DATA_KINDS:
        items.pop(1)
    for it in items:
        if isinstance(it, int):
            parts.append(f"[{it}]")
        elif str(it) in ("function-after[_cross_checks()]",):  # Config's validator
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
        if isinstance(ctx_err, CrossFieldError):
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


def _whole_number(path: str, value: float) -> str:
    """A whole number written as a float (1e9, 100.0): the limit, if it is over one, else how
    to write it."""
    lim = get_limits()
    name, unit = _LIMITED.get(path, ("", ""))
    if name and value > getattr(lim, name):
        return over_limit(lim, name, int(value), unit)
    return (f"must be a whole number written without a decimal point or exponent, such as "
            f"{int(value)} (got {value:g})")
