"""Plotly figure builders: Trajectory (+ Analysis) and options → go.Figure. Pure and testable:
no Streamlit, no integration."""

from .main_figure import (
    add_time_annotations,
    figure_json_size,
    frame_indices,
    main_figure,
    neuron_subset,
    time_axis_spec,
)
from .style import NEGATIVE, OKABE_ITO, POSITIVE, Style, style_for

__all__ = [
    "NEGATIVE",
    "OKABE_ITO",
    "POSITIVE",
    "Style",
    "add_time_annotations",
    "figure_json_size",
    "frame_indices",
    "main_figure",
    "neuron_subset",
    "style_for",
    "time_axis_spec",
]
