"""Figure builders: Trajectory (+ Analysis) and `FigureOptions` → a figure. Animated figures
are `Scene`s (`viz.scene`: panels, items, the run's arrays and frames) that the browser player
composes into Plotly traces and animates; static ones (sweeps, the papers' figures) are Plotly
figures. Pure and testable: no Streamlit, no integration, no physics (h(x) and alignment
curves come from `dynamics.readouts`).

Building blocks, used by every figure: `style` (colours, sizes, PLOTLY_CONFIG), `arrays`
(typed-array encoding), `time_axes`, `time_panels`, `neuron_panel`, `panel_labels`, `rim_labels`,
`phase_strip`, `commentary` (the sentence under the slider), `wording`, `options`;
`scene` and `payload` (a figure as data, and its bytes), `player` (the browser player that
composes and plays it).
Figures: `main_figure`, `compare`, `real_data`, `sweeps`, `paper_figures`, `report_figures`;
`export` writes HTML and PNG.
"""

from .commentary import captions
from .main_figure import main_figure
from .neuron_panel import neuron_subset
from .options import FigureOptions
from .phase_strip import StripLayout, plan_strip
from .scene import Scene
from .style import NEGATIVE, OKABE_ITO, PLOTLY_CONFIG, POSITIVE, Style, plotly_config, style_for
from .time_axes import frame_indices, time_axis_spec

__all__ = [
    "NEGATIVE",
    "OKABE_ITO",
    "PLOTLY_CONFIG",
    "POSITIVE",
    "FigureOptions",
    "Scene",
    "StripLayout",
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
