"""View options: the second typed model of a page's state, beside its `Config`.

A `Config` says what is run; a view says how it is shown (presenter mode, axis scales, time
unit, the selected paper or preset…). Each page declares its view as a subclass of `View`; a
field's URL key is its alias (`view.radius`, `paper`). Like `Config`, a view round-trips through
the URL: `to_query` writes only the fields that differ from the defaults, `from_query` reads
them back and drops each bad value with a warning (never an exception), so
`from_query(v.to_query()) == (v, [])`.

Widgets take their option lists from the fields' `Literal` types (`View.options`), so a choice
is spelled once, in the model. The shared options (presenter mode, the figure's radius, time
axis and unit) are rows of the settings table (`ui.settings`): their types, defaults, labels
and URL codec come from there; every field is read from URL text by the table's one reader
(`ui.settings.read`). Pure: no Streamlit here (tested without a page).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .settings import SETTINGS, VIEW_LABELS, Radius, TimeAxis, TimeScale, literal_values, read

VIEW_PREFIX = "view."
literal_options = literal_values


def view_default(path: str) -> Any:
    """A view option's default, from the settings table (a page's own view uses it too)."""
    return SETTINGS[path].default


def field_options(model: type[BaseModel], name: str) -> tuple[Any, ...]:
    """The allowed values of a model's Literal field (e.g. `LossConfig, "kind"`)."""
    return literal_options(model.model_fields[name].annotation)


def _short(text: str, n: int = 40) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


class View(BaseModel):
    """Options shared by every page: presenter mode (a projector view, one URL flag)."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    presenter: bool = Field(view_default("view.presenter"), alias="view.presenter")

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
        """(value, "") or (None, why not) for one field from its URL text: the settings
        table's codec for its row (`view.radius`…), else the one reader by the field's type;
        then the field's own constraints."""
        f = cls.model_fields[name]
        row = SETTINGS.get(f.alias or name)
        if row is not None and row.type() == f.annotation:
            value, problem = row.decode(raw)
        else:
            value, problem = read(raw, f.annotation, path=f.alias or name,
                                  options=literal_values(f.annotation))
        if problem:
            return None, problem
        try:
            got = cls.model_validate({name: value}, strict=False)
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


class FigureView(View):
    """Display options of the main figure as URL state (`viz.options.FigureOptions`'s fields,
    `ui.charts.options_of` turns it into one)."""

    radius: Radius = Field(view_default("view.radius"), alias="view.radius")
    time_axis: TimeAxis = Field(view_default("view.time_axis"), alias="view.time_axis")
    time_scale: TimeScale = Field(view_default("view.time_scale"), alias="view.time_scale")


# how the view options read in widgets (the settings table's labels)
LABELS: dict[str, dict[str, str]] = VIEW_LABELS

__all__ = ["LABELS", "VIEW_PREFIX", "FigureView", "Radius", "TimeAxis", "TimeScale", "View",
           "field_options", "literal_options", "page_view", "view_default"]
