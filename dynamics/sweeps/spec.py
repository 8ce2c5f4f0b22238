"""The sweep spec: a base `Config`, axes (any dotted config field with explicit values or a
log/linear range), seeds, and the summaries to record for each run.

Every combination of axis values (the grid, seeds innermost) is one *point*; a point whose
config is invalid becomes a `Point` with its ConfigError message (a row with status "invalid"
when run), so a sweep never fails because of one point. The number of points is capped by
`Limits.max_sweep_points` (`dynamics.limits`).
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
        try:
            d = json.loads(text)
        except ValueError as e:
            raise SweepError([("sweep", f"is not valid JSON ({e})")]) from None
        if not isinstance(d, dict):
            raise SweepError([("sweep", "must be a JSON object")])
        return cls.from_dict(d)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Sweep:
        """Validate everything and raise one SweepError listing every problem."""
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
