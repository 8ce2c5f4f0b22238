"""View options: the second typed model of a page's state, beside its `Config`.

A `Config` says what is run; a view says how it is shown (presenter mode, axis scales, time
unit, the selected paper or preset…). Each page declares its view as a subclass of `View`; a
field's URL key is its alias (`view.radius`, `paper`). Like `Config`, a view round-trips through
the URL: `to_query` writes only the fields that differ from the defaults, `from_query` reads
them back and drops each bad value with a warning (never an exception), so
`from_query(v.to_query()) == (v, [])`.

Widgets take their option lists from the fields' `Literal` types (`View.options`), so a choice
is spelled once, in the model. Pure: no Streamlit here (tested without a page).
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Mapping
from typing import Any, Literal, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

VIEW_PREFIX = "view."
TRUE, FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")


def literal_options(annotation: Any) -> tuple[Any, ...]:
    """The values of a `Literal[...]` annotation (also inside `Optional`); () if it is none."""
    if typing.get_origin(annotation) is Literal:
        return typing.get_args(annotation)
    for arg in typing.get_args(annotation):
        got = literal_options(arg)
        if got:
            return got
    return ()


def field_options(model: type[BaseModel], name: str) -> tuple[Any, ...]:
    """The allowed values of a model's Literal field (e.g. `LossConfig, "kind"`)."""
    return literal_options(model.model_fields[name].annotation)


def _short(text: str, n: int = 40) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


class View(BaseModel):
    """Options shared by every page: presenter mode (a projector view, one URL flag)."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    presenter: bool = Field(False, alias="view.presenter")

    # -- the URL ----------------------------------------------------------------------------
    @classmethod
    def url_keys(cls) -> dict[str, str]:
        """URL key → field name."""
        return {(f.alias or name): name for name, f in cls.model_fields.items()}

    @classmethod
    def options(cls, name: str) -> tuple[Any, ...]:
        """The allowed values of a Literal field, for a widget's option list."""
        return field_options(cls, name)

    def to_query(self) -> dict[str, str]:
        """URL parameters of the fields that differ from the defaults (sorted)."""
        default = type(self)()
        out: dict[str, str] = {}
        for key, name in self.url_keys().items():
            v = getattr(self, name)
            if v != getattr(default, name):
                out[key] = ("true" if v else "false") if isinstance(v, bool) else str(v)
        return dict(sorted(out.items()))

    @classmethod
    def from_query(cls, params: Mapping[str, str]) -> tuple[Self, list[str]]:
        """Lenient: the view the parameters describe, and a warning per dropped value. Only
        this view's keys are read, except that an unknown `view.*` key is warned about too
        (other keys belong to the page's configs)."""
        keys = cls.url_keys()
        values: dict[str, Any] = {}
        warnings: list[str] = []
        for key, raw in params.items():
            if key not in keys:
                if key.startswith(VIEW_PREFIX):
                    warnings.append(f"ignored {_short(key)}: not a display option")
                continue
            name = keys[key]
            value, problem = cls._parse(name, str(raw))
            if problem:
                warnings.append(f"ignored {_short(key)}={_short(str(raw))!r}: {problem}")
            else:
                values[name] = value
        return cls(**values), warnings

    @classmethod
    def _parse(cls, name: str, raw: str) -> tuple[Any, str]:
        """(value, "") or (None, why not) for one field from its URL text."""
        ann = cls.model_fields[name].annotation
        if ann is bool:
            low = raw.strip().lower()
            if low in TRUE or low in FALSE:
                return low in TRUE, ""
            return None, "must be true or false"
        choices = literal_options(ann)
        if choices:
            for c in choices:
                if str(c) == raw:
                    return c, ""
            return None, "must be one of " + ", ".join(str(c) for c in choices)
        try:
            got = cls.model_validate({name: raw}, strict=False)
        except ValidationError as e:
            return None, "; ".join(err["msg"] for err in e.errors())
        return getattr(got, name), ""


V = TypeVar("V", bound=View)


def page_view(namespace: Mapping[str, Any]) -> Callable[[type[V]], type[V]]:
    """Class decorator for a view declared in a page script: Streamlit runs a page as
    `__main__`, so pydantic cannot find the page's names (e.g. a `Literal` of its presets) in
    the string annotations; they are resolved in `namespace` (the page's `globals()`)."""

    def finish(model: type[V]) -> type[V]:
        model.model_rebuild(force=True, _types_namespace=dict(namespace))
        return model

    return finish


TimeAxis = Literal["log", "linear"]
Radius = Literal["normalised", "log"]
TimeScale = Literal["t", "t_over_log_inv_eps"]


class FigureView(View):
    """Display options of the main figure (viz.main_figure's keyword arguments)."""

    radius: Radius = Field("normalised", alias="view.radius")
    time_axis: TimeAxis = Field("log", alias="view.time_axis")
    time_scale: TimeScale = Field("t", alias="view.time_scale")

    def figure_kwargs(self) -> dict[str, Any]:
        return {"radius": self.radius, "time_axis": self.time_axis,
                "time_scale": self.time_scale, "presenter": self.presenter}


# how the view options read in widgets (the values come from the Literal types above)
LABELS: dict[str, dict[str, str]] = {
    "radius": {"normalised": "‖w‖ / max‖w‖", "log": "log ‖w‖"},
    "time_axis": {"log": "log", "linear": "linear"},
    "time_scale": {"t": "t", "t_over_log_inv_eps": "t / ln(1/ε)"},
}

__all__ = ["LABELS", "VIEW_PREFIX", "FigureView", "Radius", "TimeAxis", "TimeScale", "View",
           "field_options", "literal_options", "page_view"]
