"""Plotly figure builders: Trajectory (+ Analysis) and `FigureOptions` → a figure (animated
ones: `AnimatedFigure`, a small figure plus its frames as arrays). Pure and testable:
no Streamlit, no integration, no physics (h(x) and alignment curves come from
`dynamics.readouts`).

Building blocks, used by every figure: `style` (colours, sizes, PLOTLY_CONFIG), `arrays`
(typed-array encoding), `time_axes`, `time_panels`, `neuron_panel`, `panel_labels`, `rim_labels`,
`phase_strip`, `commentary` (the sentence under the slider), `wording`, `options`;
`animation` and `payload` (frames as arrays, and their bytes), `player` (the browser player).
Figures: `main_figure`, `compare`, `real_data`, `sweeps`, `paper_figures`, `report_figures`;
`export` writes HTML and PNG.
"""

from .animation import AnimatedFigure, Animation
from .commentary import captions
from .main_figure import main_figure
from .neuron_panel import neuron_subset
from .options import FigureOptions
from .phase_strip import plan_strip
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
    "captions",
    "frame_indices",
    "main_figure",
    "neuron_subset",
    "plan_strip",
    "plotly_config",
    "style_for",
    "time_axis_spec",
]
