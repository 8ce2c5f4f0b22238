"""The sweep spec: a base `Config`, axes (any dotted config field with explicit values or a
log/linear range), seeds, and the summaries to record for each run.

Every combination of axis values (the grid, seeds innermost) is one *point*; a point whose
config is invalid becomes a `Point` with its ConfigError message (a row with status "invalid"
when run), so a sweep never fails because of one point. The number of points is capped by
`Limits.max_sweep_points` (`dynamics.limits`).

A spec is bounded by its size before anything is expanded, with a message, never an
exception: its JSON text by `Limits.max_spec_mb` and its nesting by `MAX_NESTING` (checked by
one linear scan before parsing, `json_nesting`; a dict by an iterative walk), each axis's count
(`linear`/`log` = [start, stop, count], explicit `values`) and the seeds by the point limit,
and their product too (`size_errors`) — a 70-byte spec asking for 10⁹ widths took a machine's
memory expanding them, and a million explicit values took minutes of validation, one by one.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..config import Config, ConfigError, field_annotation, field_error, to_config_error
from ..limits import get_limits
from .summaries import SUMMARIES


class SweepError(ConfigError):
    """Every problem with a sweep spec: (dotted path, message) pairs, like ConfigError."""


MAX_NESTING = 16
"""Levels of lists and objects a spec may have (its base config's tables are 5 deep)."""


def json_nesting(text: str, stop: int = MAX_NESTING) -> int:
    """The deepest nesting of brackets and braces in JSON `text`, outside its strings (one
    linear pass, no recursion); stops counting past `stop` (returns `stop` + 1)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > stop:
                    return stop + 1
        elif ch in "]}":
            depth -= 1
    return deepest


def nesting(value: Any, stop: int = MAX_NESTING) -> int:
    """The deepest nesting of lists, tuples and mappings in `value` (an iterative walk that
    stops past `stop`, returning `stop` + 1)."""
    deepest = 0
    todo: list[tuple[Any, int]] = [(value, 0)]
    while todo:
        v, depth = todo.pop()
        if isinstance(v, Mapping):
            kids: Any = v.values()
        elif isinstance(v, list | tuple):
            kids = v
        else:
            continue
        depth += 1
        if depth > stop:
            return stop + 1
        deepest = max(deepest, depth)
        todo.extend((k, depth) for k in kids if isinstance(k, Mapping | list | tuple))
    return deepest


def _count(v: Any) -> int | None:
    """A count as a spec gives it (a whole number, possibly written 3.0), else None."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    if isinstance(v, float) and not (v == v and abs(v) < 2**63 and v.is_integer()):
        return None
    return int(v)


def size_errors(d: Mapping[str, Any]) -> list[tuple[str, str]]:
    """What makes raw spec `d` too large, read before any validation or expansion: its nesting,
    an axis's count or number of values, the seeds, their product (each against the point
    limit). Shapes it does not recognise are left to the validation."""
    limits = get_limits()
    cap = limits.max_sweep_points
    env = limits.env_name("max_sweep_points")
    if nesting(d) > MAX_NESTING:
        return [("sweep", f"is nested more than {MAX_NESTING} levels deep; a sweep spec is an "
                 "object of axes, seeds and a base configuration")]
    errs: list[tuple[str, str]] = []
    sizes: list[int] = []
    axes = d.get("axes", ())
    if isinstance(axes, list | tuple):
        if len(axes) > cap:
            return [("axes", f"{len(axes):,} axes, over the limit of {cap:,} points ({env})")]
        for i, ax in enumerate(axes):
            if not isinstance(ax, Mapping):
                continue
            n: int | None = None
            values = ax.get("values")
            if isinstance(values, list | tuple):
                n, where = len(values), f"axes[{i}].values"
            for key in ("linear", "log"):
                rng = ax.get(key)
                if isinstance(rng, list | tuple) and len(rng) == 3 and \
                        (c := _count(rng[2])) is not None:
                    n, where = c, f"axes[{i}].{key}"
            if n is None:
                continue
            if n > cap:
                errs.append((where, f"asks for {n:,} values, over the limit of {cap:,} points "
                             f"in a sweep ({env}); use fewer"))
            sizes.append(max(n, 1))
    seeds = d.get("seeds", 1)
    n_seeds = _count(seeds) if not isinstance(seeds, list | tuple) else len(seeds)
    if n_seeds is not None and n_seeds > cap:
        errs.append(("seeds", f"{n_seeds:,} seeds, over the limit of {cap:,} points in a sweep "
                     f"({env}); use fewer"))
    if not errs:
        total = max(n_seeds or 1, 1)
        for n in sizes:
            total *= n
        if total > cap:
            shown = " × ".join(f"{n:,}" for n in sizes)
            errs.append(("axes", f"this sweep has {shown + ' × ' if shown else ''}"
                         f"{max(n_seeds or 1, 1):,} seeds = {total:,} points, over the limit "
                         f"{cap:,} ({env}); use fewer values or seeds"))
    return errs


def max_points() -> int:
    """The point limit (`Limits.max_sweep_points`, env EAE_MAX_SWEEP_POINTS)."""
    return get_limits().max_sweep_points


Scalar = bool | int | float | str | None


class Axis(BaseModel):
    """One swept field: explicit ``values``, or ``log``/``linear`` = [start, stop, count]."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    field: Annotated[str, Field(min_length=1, max_length=64)]
    values: tuple[Scalar | tuple[Scalar, ...], ...] | None = None
    log: tuple[float, float, int] | None = None
    linear: tuple[float, float, int] | None = None

    def points(self) -> tuple[Any, ...]:
        """The axis values, ranges expanded (12 significant digits; integers for int fields)."""
        if self.values is not None:
            return tuple(list(v) if isinstance(v, tuple) else v for v in self.values)
        lo, hi, n = self.log if self.log is not None else self.linear  # type: ignore[misc]
        grid = np.geomspace(lo, hi, n) if self.log is not None else np.linspace(lo, hi, n)
        vals = [float(f"{v:.12g}") for v in grid]
        if _is_int_field(self.field):
            vals = list(dict.fromkeys(round(v) for v in vals))
        return tuple(vals)

    @property
    def label(self) -> str:
        return self.field


def _is_int_field(path: str) -> bool:
    for kind in ("teacher", "clusters", "points"):
        ann = field_annotation(path, kind)
        if ann is not None:
            s = repr(ann)
            return ("int" in s) and ("float" not in s) and ("tuple" not in s)
    return False


@dataclass(frozen=True)
class Point:
    """One point of the grid: its axis values, seed, and config (None: invalid, see error)."""

    index: int
    values: dict[str, Any]
    seed: int
    config: Config | None
    error: str


class Sweep(BaseModel):
    """A validated sweep. Build with `Sweep.from_dict` / `from_json` for clear messages."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: Annotated[str, Field(max_length=80)] = "sweep"
    description: Annotated[str, Field(max_length=2000)] = ""
    builtin: str | None = None  # the built-in this spec came from (figures use it)
    base: Config = Field(default_factory=Config)
    axes: tuple[Axis, ...] = ()
    seeds: tuple[Annotated[int, Field(ge=0, le=2**32 - 1)], ...] = (0,)
    record: tuple[str, ...] = tuple(SUMMARIES)
    trap_tol: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 1e-3
    trap_threshold: Annotated[float, Field(allow_inf_nan=False)] | None = None

    @field_validator("seeds", mode="before")
    @classmethod
    def _seed_count(cls, v: Any) -> Any:
        if isinstance(v, int) and not isinstance(v, bool):
            if v < 1:
                raise ValueError("give at least one seed")
            return tuple(range(v))
        return v

    # -- construction -----------------------------------------------------------------------
    @classmethod
    def from_json(cls, text: str | bytes) -> Sweep:
        """Validate JSON text: its size and nesting first (`Limits.max_spec_mb`,
        `MAX_NESTING`), then everything `from_dict` checks."""
        limits = get_limits()
        if len(text) > limits.max_spec_mb * 2**20:
            raise SweepError([("sweep", f"is {len(text) / 2**20:,.1f} MB of text, over the "
                               f"limit of {limits.max_spec_mb:g} MB "
                               f"({limits.env_name('max_spec_mb')})")])
        if isinstance(text, bytes):
            try:
                text = text.decode("utf-8-sig")
            except UnicodeDecodeError as e:
                raise SweepError([("sweep", f"is not UTF-8 text ({e.reason} at byte "
                                   f"{e.start})")]) from None
        if json_nesting(text) > MAX_NESTING:
            raise SweepError([("sweep", f"is nested more than {MAX_NESTING} levels deep; a "
                               "sweep spec is an object of axes, seeds and a base "
                               "configuration")])
        try:
            d = json.loads(text)
        except (ValueError, RecursionError) as e:
            raise SweepError([("sweep", f"is not valid JSON ({e})")]) from None
        if not isinstance(d, dict):
            raise SweepError([("sweep", "must be a JSON object")])
        return cls.from_dict(d)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Sweep:
        """Validate everything and raise one SweepError listing every problem (its size first,
        `size_errors`, before anything is expanded)."""
        if not isinstance(d, Mapping):
            raise SweepError([("sweep", "must be an object (a mapping)")])
        too_big = size_errors(d)
        if too_big:
            raise SweepError(too_big)
        errors: list[tuple[str, str]] = []
        base: Config | None = None
        raw_base = d.get("base", {})
        if isinstance(raw_base, Config):
            base = raw_base
        elif not isinstance(raw_base, Mapping):
            errors.append(("base", "must be a configuration object"))
        else:
            try:
                base = Config.from_dict(raw_base)
            except ConfigError as e:
                errors.extend((f"base.{p}" if p else "base", m) for p, m in e.errors)
        rest = {k: v for k, v in d.items() if k != "base"}
        spec: Sweep | None = None
        try:
            spec = cls.model_validate({**rest, "base": base or Config()})
        except ValidationError as e:
            errors.extend(to_config_error(e).errors)
        if spec is not None:
            errors.extend(spec._semantic_errors())
        if errors:
            raise SweepError(errors)
        assert spec is not None
        return spec

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    def with_seeds(self, seeds: Sequence[int]) -> Sweep:
        return Sweep.from_dict({**self.to_dict(), "seeds": list(seeds)})

    # -- validation -------------------------------------------------------------------------
    def _semantic_errors(self) -> list[tuple[str, str]]:
        errs: list[tuple[str, str]] = []
        kinds: set[str] = {self.base.data.kind}
        for ax in self.axes:
            if ax.field == "data.kind" and ax.values is not None:
                kinds |= {str(v) for v in ax.values}
        seen: set[str] = set()
        for i, ax in enumerate(self.axes):
            p = f"axes[{i}]"
            given = [k for k in ("values", "log", "linear") if getattr(ax, k) is not None]
            if len(given) != 1:
                errs.append((p, f"give exactly one of values, log or linear for {ax.field!r} "
                             f"(got {', '.join(given) or 'none'})"))
                continue
            if ax.field in ("seed", "seeds"):
                errs.append((f"{p}.field", "sweep seeds with the 'seeds' list, not an axis"))
                continue
            if ax.field in seen:
                errs.append((f"{p}.field", f"{ax.field!r} is swept twice"))
            seen.add(ax.field)
            if all(field_annotation(ax.field, k) is None for k in kinds | {"points"}):
                errs.append((f"{p}.field", f"{ax.field!r} is not a configuration field "
                             "(dotted path such as init.scale, model.width, data.angle_deg)"))
                continue
            if ax.values is not None and len(ax.values) == 0:
                errs.append((f"{p}.values", "give at least one value"))
                continue
            rng = ax.log if ax.log is not None else ax.linear
            if rng is not None:
                lo, hi, n = rng
                key = "log" if ax.log is not None else "linear"
                if n < 1:
                    errs.append((f"{p}.{key}", f"the count must be at least 1 (got {n})"))
                    continue
                if ax.log is not None and (lo <= 0 or hi <= 0):
                    errs.append((f"{p}.log", f"a log range needs positive ends (got {lo:g}, "
                                 f"{hi:g})"))
                    continue
            if "data.kind" in seen and ax.field.startswith("data."):
                continue  # its values are checked point by point, with the kind of each point
            for j, v in enumerate(ax.points()):
                msg = field_error(self.base, ax.field, v)
                if msg:
                    errs.append((f"{p}.values[{j}]", f"{ax.field} = {_show(v)}: {msg}"))
        bad = [r for r in self.record if r not in SUMMARIES]
        if bad:
            errs.append(("record", f"unknown summaries {bad}; choose from {list(SUMMARIES)}"))
        if len(set(self.seeds)) != len(self.seeds):
            errs.append(("seeds", "seeds repeat"))
        if not errs:
            n = self.n_points()
            limits = get_limits()
            cap = limits.max_sweep_points
            if n > cap:
                sizes = " × ".join(str(len(ax.points())) for ax in self.axes)
                sizes = f"{sizes} × " if sizes else ""
                errs.append(("axes", f"this sweep has {sizes}{len(self.seeds)} seeds = {n} "
                             f"points, over the limit {cap} "
                             f"({limits.env_name('max_sweep_points')}); use fewer values or "
                             "seeds"))
        return errs

    # -- points -----------------------------------------------------------------------------
    def n_points(self) -> int:
        n = len(self.seeds)
        for ax in self.axes:
            n *= len(ax.points())
        return n

    def points(self) -> list[Point]:
        """Every point (grid over the axes, seeds innermost), each with its config or error."""
        out: list[Point] = []
        grids = [ax.points() for ax in self.axes]
        fields = [ax.field for ax in self.axes]
        for combo in itertools.product(*grids):
            values = dict(zip(fields, combo, strict=True))
            for seed in self.seeds:
                idx = len(out)
                try:
                    cfg = self.base.with_updates({**values, "seed": seed})
                    out.append(Point(idx, values, seed, cfg, ""))
                except ConfigError as e:
                    out.append(Point(idx, values, seed, None, str(e)))
        return out

    @property
    def axis_fields(self) -> tuple[str, ...]:
        return tuple(ax.field for ax in self.axes)


def _show(v: Any) -> str:
    s = json.dumps(v) if not isinstance(v, str) else repr(v)
    return s if len(s) <= 40 else s[:37] + "..."
