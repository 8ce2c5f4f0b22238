"""Plotly figure builders: Trajectory (+ Analysis) and `FigureOptions` → a figure (animated
ones: `AnimatedFigure`, a small figure plus its frames as arrays). Pure and testable:
no Streamlit, no integration, no physics (h(x) and alignment curves come from
`dynamics.readouts`).

Building blocks, used by every figure: `style` (colours, sizes, PLOTLY_CONFIG), `arrays`
(typed-array encoding), `time_axes`, `time_panels`, `neuron_panel`, `phase_marks`, `options`;
`animation` and `payload` (frames as arrays, and their bytes), `player` (the browser player).
Figures: `main_figure`, `compare`, `real_data`, `sweeps`, `paper_figures`, `report_figures`;
`export` writes HTML and PNG.
"""

from .animation import AnimatedFigure, Animation
from .main_figure import main_figure
from .neuron_panel import neuron_subset
from .options import FigureOptions
from .phase_marks import add_time_annotations
from .style import NEGATIVE, OKABE_ITO, PLOTLY_CONFIG, POSITIVE, Style, plotly_config, style_for
from .time_axes import frame_indices, time_axis_spec

__all__ = [
    "NEGATIVE",
    "OKABE_ITO",
    "PLOTLY_CONFIG",
    "POSITIVE",
    "AnimatedFigure",
    "Animation",
    "FigureOptions",
    "Style",
    "add_time_annotations",
    "frame_indices",
    "main_figure",
    "neuron_subset",
    "plotly_config",
    "style_for",
    "time_axis_spec",
]
