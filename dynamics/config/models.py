"""`Config`: the single, validated, serialisable description of a run.

A `Config` fixes everything that determines a trajectory: data, model, loss, initialisation,
integrator, recording and seed. It is immutable; its canonical JSON is hashed with
`NUMERICS_VERSION` into the cache key (`canonical`), and it round-trips through JSON, dicts and
flat URL parameters (`model.width=50&data.angles_deg=20,70,200`, `query`).

Validation is strict (no silent type coercion) and collects every problem at once into a
`ConfigError` whose entries name the field by its dotted path and say what to change.
Uploaded data (`ArrayData`) stays a read-only float64 array inside the config (`arrays`).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Annotated, Any

import numpy as np
from pydantic import BaseModel, Field, ValidationError, model_validator

from . import canonical
from .arrays import ARRAYS, hand_over_arrays
from .checks import cross_field_errors, labels_are_pm1
from .errors import ConfigError, CrossFieldError, to_config_error
from .sections import (
    DATA_CLASSES,
    DataConfig,
    InitConfig,
    IntegratorConfig,
    LossConfig,
    ModelConfig,
    PointsData,
    RecordConfig,
    Section,
)
from .urlvalues import (
    URL_ARRAY_VALUES,
    flatten,
    format_value,
    is_digest,
    parse_value,
    set_path,
    url_dict,
)


class Config(Section):
    """One run. See the module docstring for conventions."""

    data: DataConfig = Field(default_factory=PointsData)
    model: ModelConfig = Field(default_factory=ModelConfig)
    loss: LossConfig = Field(default_factory=LossConfig)
    init: InitConfig = Field(default_factory=InitConfig)
    integrator: IntegratorConfig = Field(default_factory=IntegratorConfig)
    record: RecordConfig = Field(default_factory=RecordConfig)
    seed: Annotated[int, Field(ge=0, le=2**32 - 1)] = 0

    @model_validator(mode="after")
    def _cross_checks(self) -> Config:  # its name is skipped in error paths (errors.py)
        errs = cross_field_errors(self)
        if errs:
            raise CrossFieldError(errs)
        return self

    # -- construction ----------------------------------------------------------------------
    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Config:
        """Strict validation of a JSON-like dict (no silent type coercion). Raises ConfigError."""
        d, arrays = hand_over_arrays(d)
        try:
            text = json.dumps(d, default=canonical.json_default, allow_nan=True)
        except (TypeError, ValueError) as e:
            raise ConfigError([("", f"the configuration is not JSON-like data ({e})")]) from None
        except RecursionError:
            raise ConfigError([("", "the configuration is nested too deeply; settings are at "
                                "most two levels of lists deep")]) from None
        return cls.from_json(text, _arrays=arrays)

    @classmethod
    def from_json(cls, text: str | bytes, *, _arrays: list[np.ndarray] | None = None) -> Config:
        """Strict validation of JSON text. Raises ConfigError."""
        try:
            return cls.model_validate_json(text, strict=True, context={ARRAYS: _arrays or []})
        except ValidationError as e:
            raise to_config_error(e) from None
        except CrossFieldError as e:  # pragma: no cover - pydantic wraps it, kept for safety
            raise ConfigError(e.errors) from None
        except RecursionError:  # pragma: no cover - the JSON parser limits depth itself
            raise ConfigError([("", "the configuration is nested too deeply")]) from None

    # -- serialisation -----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (arrays in their compact encoded form)."""
        return self.model_dump(mode="json")

    def to_json(self) -> str:
        """Canonical JSON: sorted keys, no spaces, shortest exact float repr."""
        return canonical.canonical_json(self.to_dict())

    def cache_key(self) -> str:
        """sha256 of the numerics version and the canonical JSON, in which an array stands as
        the sha256 of its bytes (so hashing an upload reads it once and copies nothing)."""
        return canonical.cache_key(self)

    def to_query(self, base: Config | None = None, *,
                 omit: Collection[str] = ()) -> dict[str, str]:
        """Flat URL parameters holding the fields that differ from `base` (default: the
        defaults), so `from_query(c.to_query(base), base) == c` and shared links stay short. A
        data kind other than base's is written as `data.kind` with its fields relative to that
        kind's defaults. Paths in `omit` are left out (an upload never goes into a link).

        Arrays (uploads) are compared by their digests, so an upload costs no more than one
        sha256 of its bytes here; one that differs and is not omitted is written as lists, up
        to `URL_ARRAY_VALUES` values — a larger one cannot be a link, and is refused with a
        ConfigError naming it."""
        ref = url_dict(base if base is not None else Config(), arrays=False)
        if ref["data"]["kind"] != self.data.kind:
            ref["data"] = url_dict(DATA_CLASSES[self.data.kind](), arrays=False)
            ref["data.kind"] = None  # forces the kind into the output
        flat, flat_base = flatten(url_dict(self, arrays=False)), flatten(ref)
        out: dict[str, str] = {}
        for k, v in flat.items():
            if k in omit or flat_base.get(k, object()) == v:
                continue
            if is_digest(v):
                arr = getattr(self.data, k.rsplit(".", 1)[-1])
                if arr.size > URL_ARRAY_VALUES:
                    raise ConfigError([(k, f"an array of {arr.size:,} values cannot go into a "
                                        f"link (at most {URL_ARRAY_VALUES:,}); leave it out")])
                v = arr.tolist()
            out[k] = format_value(v)
        if "data.kind" in ref and "data.kind" not in omit:
            out["data.kind"] = self.data.kind
        return dict(sorted(out.items()))

    def with_updates(self, updates: Mapping[str, Any]) -> Config:
        """A copy with dotted-path updates; string values are parsed as in URLs."""
        d = self.to_dict()
        kind = updates.get("data.kind")
        if kind is not None and kind != self.data.kind:
            d["data"] = {"kind": kind}  # a new data kind starts from its own defaults
        for key, value in updates.items():
            set_path(d, key, parse_field(key, value, d) if isinstance(value, str) else value)
        return Config.from_dict(d)

    # -- derived ------------------------------------------------------------------------------
    @property
    def gd_steps(self) -> int:
        return max(1, round(self.integrator.t_end / self.integrator.lr))

    @property
    def is_classification(self) -> bool:
        return labels_are_pm1(self.data)


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
        if not (isinstance(sub, type) and issubclass(sub, BaseModel)):
            return None
        f = sub.model_fields.get(parts[1])
        return f.annotation if f else None
    return None


def parse_field(key: str, raw: str, current: Mapping[str, Any] | None = None) -> Any:
    """The URL text `raw` of field `key` as a JSON value, read by the field's type; the data
    kind (for `data.*`) is the one in the config dict `current` (default: points)."""
    data = current.get("data") if current is not None else None
    kind = str(data.get("kind", "points")) if isinstance(data, Mapping) else "points"
    return parse_value(key, raw, field_annotation(key, kind))
