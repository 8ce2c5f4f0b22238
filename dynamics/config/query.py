"""Configurations in URLs: flat parameters (`model.width=50&data.angles_deg=20,70,200`) read
strictly (`from_query`: every bad parameter is an error) or leniently (`config_from_query`:
bad parameters are dropped, each with a warning; a URL never crashes a page), and written as
the fields that differ from a base (`to_query`). Parameters are changes of a base config
(default: the defaults); a new `data.kind` starts from that kind's defaults.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any

from pydantic import ValidationError

from .canonical import json_default
from .errors import ConfigError, CrossFieldError, to_config_error
from .models import Config, field_annotation, parse_field
from .urlvalues import set_path


def to_query(c: Config, base: Config | None = None, *,
             omit: Collection[str] = ()) -> dict[str, str]:
    """Flat URL parameters holding the fields of `c` that differ from `base` (default: the
    defaults), so `from_query(to_query(c, base), base) == c`; see `Config.to_query`."""
    return c.to_query(base, omit=omit)


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
        set_path(d, "data.kind", kind)
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
            set_path(d, key, parse_field(key, raw, d))
        except ConfigError as e:
            errs.extend(e.errors)
    if errs:
        raise ConfigError(errs)
    if isinstance(d.get("data"), dict):  # `data=x` stays text and is refused by validation
        d["data"].setdefault("kind", "points")
    return Config.from_dict(d)


def config_from_query(params: Mapping[str, str | list[str]], base: Config | None = None
                      ) -> tuple[Config, list[str]]:
    """Lenient: the config the URL describes (as changes of `base`, default: the defaults),
    dropping every parameter that is invalid (each with a warning naming it) and keeping every
    other one. A problem of a field the link does not set (`data.labels` when the link gives
    two angles for four labels) is blamed on the link's parameter whose removal cures it
    (`_culprit`). Falls back to `base` only when nothing valid is left. Never raises."""
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
            if not blamed:
                blamed = _culprits(current, [(p, m) for p, m in e.errors], base)
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


def _culprits(current: Mapping[str, Any], errors: list[tuple[str, str]],
              base: Config | None) -> dict[str, str]:
    """For errors no parameter names: the parameter of the same section (else any) whose
    removal makes that error go away, tried one at a time (`data.kind` last); key → message.
    A few validations per error: a link holds at most a few dozen known settings."""
    out: dict[str, str] = {}
    for path, msg in errors:
        section = path.split(".")[0].split("[")[0]
        keys = [k for k in current if k not in out]
        same = [k for k in keys if k.split(".")[0] == section]
        order = sorted(same or keys, key=lambda k: k == "data.kind")
        for key in order:
            rest = {k: v for k, v in current.items() if k != key and k not in out}
            try:
                from_query(rest, base)
            except ConfigError as e:
                if any(p == path for p, _m in e.errors):
                    continue
            except Exception:  # a URL must never crash a page: try the next key
                continue
            out[key] = msg
            break
    return out


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
    set_path(d, path, parse_field(path, value, d) if isinstance(value, str) else value)
    try:
        Config.model_validate_json(json.dumps(d, default=json_default), strict=True)
    except ValidationError as e:
        if any(isinstance((err.get("ctx") or {}).get("error"), CrossFieldError)
               for err in e.errors(include_url=False)):
            return ""
        errs = to_config_error(e).errors
        own = [m for p, m in errs if p == path or p.startswith(path + "[")]
        return "; ".join(own) or "; ".join(f"{p}: {m}" for p, m in errs)
    except (TypeError, ValueError) as e:
        return str(e)
    return ""
