"""Shared look of every figure: a colour-blind-safe palette (Okabe–Ito), projector-readable font
sizes and a presenter scale factor. Every figure uses Plotly's "plotly_white" template
(`white_template`).

Colours carry meaning across pages: blue is "positive" (a_j > 0, label +1), vermillion is
"negative" (a_j < 0, label −1); theory overlays use the remaining Okabe–Ito colours.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, replace

import plotly.graph_objects as go
import plotly.io as pio

# Okabe & Ito (2008), "Color Universal Design": distinguishable under the common colour-vision
# deficiencies and on a washed-out projector.
OKABE_ITO: dict[str, str] = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "bluish_green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish_purple": "#CC79A7",
    "grey": "#6E6E6E",
}

POSITIVE = OKABE_ITO["blue"]  # a_j > 0, label +1
NEGATIVE = OKABE_ITO["vermillion"]  # a_j < 0, label −1
NEUTRAL = OKABE_ITO["grey"]
INK = "#1A1A1A"  # text and axes: high contrast on white
GRID = "#D9D9D9"

# Theory overlays, by Direction.kind (see dynamics.annotations.Direction).
DIRECTION_STYLE: dict[str, dict[str, object]] = {
    "extremal_max": {"color": OKABE_ITO["bluish_green"], "dash": "solid", "width": 4},
    "extremal_min": {"color": OKABE_ITO["reddish_purple"], "dash": "dash", "width": 4},
    "extremal_saddle": {"color": OKABE_ITO["orange"], "dash": "dot", "width": 3},
    "signal": {"color": NEUTRAL, "dash": "dashdot", "width": 2},
    "teacher": {"color": OKABE_ITO["black"], "dash": "longdash", "width": 3},
    "target": {"color": "#882255", "dash": "solid", "width": 2.5},  # Tol's wine: its own ray
}
DEFAULT_DIRECTION_STYLE: dict[str, object] = {"color": NEUTRAL, "dash": "dot", "width": 2}

# Phase bands: one colour per phase NAME, the same on every page and in every run (detected =
# solid fill, predicted = dashed outline). Names not listed get a colour from a hash of the
# name (`phase_colour`), never from their position in a list.
PHASE_COLOURS: dict[str, str] = {
    "alignment": OKABE_ITO["sky_blue"],
    "fitting": OKABE_ITO["orange"],
    "convergence": OKABE_ITO["bluish_green"],
    "settled": "#BBBBBB",  # grey (Paul Tol): the loss stopped above zero
    "plateau": "#999933",  # olive (Paul Tol's muted palette, as below)
    "accuracy plateau": OKABE_ITO["yellow"],
    "initial plateau": OKABE_ITO["reddish_purple"],
    "OLS plateau": OKABE_ITO["vermillion"],
    "saddle escape": OKABE_ITO["blue"],
    "Phase I": "#88CCEE",  # Wang & Ma's four phases
    "Phase II": "#DDCC77",
    "Phase III": "#44AA99",
    "Phase IV": "#882255",
}
# For other names: Paul Tol's "muted" scheme (colour-blind safe), picked by a hash of the name.
HASHED_PHASE_COLOURS = ("#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77",
                        "#CC6677", "#882255", "#AA4499")
MARKER_COLOUR = OKABE_ITO["black"]


def phase_key(name: str) -> str:
    """A phase's name without decorations: "fitting (predicted)" → "fitting"; "alignment
    ends" → "alignment" (an event named after its phase keeps the phase's colour)."""
    key = name.strip().removesuffix("(predicted)").strip()
    return key.removesuffix(" ends").strip() if key.endswith(" ends") else key


def phase_colour(name: str) -> str:
    """The colour of phase `name`: fixed for the known phases (`PHASE_COLOURS`, matched without
    regard to case), else a colour chosen by a stable hash (CRC-32) of the name."""
    key = phase_key(name)
    for known, colour in PHASE_COLOURS.items():
        if known.casefold() == key.casefold():
            return colour
    return HASHED_PHASE_COLOURS[zlib.crc32(key.casefold().encode()) % len(HASHED_PHASE_COLOURS)]

# Regression labels: a sequential scale that stays readable for colour-blind viewers.
REGRESSION_SCALE = [[0.0, "#56B4E9"], [0.5, "#009E73"], [1.0, "#1A1A1A"]]  # light → dark


@dataclass(frozen=True)
class Style:
    """Sizes in CSS pixels. `scaled(k)` multiplies every size (presenter mode)."""

    font: float = 15.0  # body text, tick labels ≥ 14 px on a projector
    title: float = 19.0
    small: float = 14.0  # annotations, legend
    line: float = 2.0
    marker_min: float = 6.0  # neuron marker size for the smallest norm in a frame
    marker_max: float = 15.0  # ... and for the largest
    height: int = 650  # figure height that fits 1400×900 beside the controls
    family: str = "Inter, 'Source Sans Pro', 'Helvetica Neue', Arial, sans-serif"

    def scaled(self, k: float) -> Style:
        return replace(self, font=self.font * k, title=self.title * k, small=self.small * k,
                       line=self.line * k, marker_min=self.marker_min * k,
                       marker_max=self.marker_max * k, height=int(self.height * min(k, 1.25)))


PRESENTER_SCALE = 1.35
BASE_STYLE = Style()


def style_for(presenter: bool = False) -> Style:
    """The base style, or the presenter style (everything ×PRESENTER_SCALE) for a projector."""
    return BASE_STYLE.scaled(PRESENTER_SCALE) if presenter else BASE_STYLE


# The Plotly config every page passes to st.plotly_chart (the toolbar's camera saves a PNG at
# 1400 × 820, scale 2); `plotly_config(...)` names the file or sizes the picture per page.
PLOTLY_CONFIG: dict[str, object] = {
    "displaylogo": False,
    "scrollZoom": False,
    "modeBarButtonsToRemove": ["lasso2d", "select2d", "autoScale2d"],
    "toImageButtonOptions": {"format": "png", "filename": "early-alignment", "scale": 2,
                             "width": 1400, "height": 820},
}


def plotly_config(filename: str | None = None, width: int | None = None,
                  height: int | None = None) -> dict[str, object]:
    """PLOTLY_CONFIG with the PNG button's file name or size replaced (a new dict)."""
    image = dict(PLOTLY_CONFIG["toImageButtonOptions"])  # type: ignore[call-overload]
    for key, value in (("filename", filename), ("width", width), ("height", height)):
        if value is not None:
            image[key] = value
    return {**PLOTLY_CONFIG, "toImageButtonOptions": image}


def rgba(hex_colour: str, alpha: float) -> str:
    """'#RRGGBB' → 'rgba(r,g,b,alpha)'."""
    h = hex_colour.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha:g})"


def sign_colour(sign: float) -> str:
    """POSITIVE for sign ≥ 0, NEGATIVE otherwise."""
    return POSITIVE if sign >= 0 else NEGATIVE


def white_template(fig: go.Figure) -> go.Figure:
    """Give `fig` Plotly's "plotly_white" template, unvalidated: the template is Plotly's own
    (valid), and `template="plotly_white"` would build and validate a Template object again —
    ≈ 8 ms of interpreter time per figure, a tenth of the Explorer's. This is the switch Plotly
    itself uses to apply its default template. Modifies, returns `fig`."""
    lay = fig.layout
    lay._validate = False
    try:
        lay.template = pio.templates["plotly_white"]
    finally:
        lay._validate = True
    return fig
