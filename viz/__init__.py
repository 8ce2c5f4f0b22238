"""Plotly figure builders: Trajectory (+ Analysis) and options → go.Figure. Pure and testable:
no Streamlit, no integration, no physics (h(x) and alignment curves come from
`dynamics.readouts`).

Building blocks, used by every figure: `style` (colours, sizes, PLOTLY_CONFIG), `arrays`
(typed-array encoding), `time_axes`, `time_panels`, `neuron_panel`, `phase_marks`, `player`.
Figures: `main_figure`, `compare`, `real_data`, `sweeps`, `paper_figures`, `report_figures`;
`export` writes HTML and PNG.
"""

from .main_figure import figure_json_size, main_figure
from .neuron_panel import neuron_subset
from .phase_marks import add_time_annotations
from .style import NEGATIVE, OKABE_ITO, PLOTLY_CONFIG, POSITIVE, Style, plotly_config, style_for
from .time_axes import frame_indices, time_axis_spec

__all__ = [
    "NEGATIVE",
    "OKABE_ITO",
    "PLOTLY_CONFIG",
    "POSITIVE",
    "Style",
    "add_time_annotations",
    "figure_json_size",
    "frame_indices",
    "main_figure",
    "neuron_subset",
    "plotly_config",
    "style_for",
    "time_axis_spec",
]
