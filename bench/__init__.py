"""Benchmarks of the Early Alignment Explorer (not part of the library: `dynamics/` never
imports this package). ``python -m bench`` writes bench/REPORT.md; ``python -m bench -h`` lists
the other benchmarks.

Layout: `problems` (benchmark problems), `peers` (NumPy/PyTorch/JAX reference steps),
`gd_peers`, `flow`, `runtime` (measuring, one subject each), `machine` (what it ran on),
`measure` (runs the sections), `render` (Markdown), `cli`; the stand-alone tools `bench_core`,
`bench_service`, `bench_sweep`, `bench_page` and `load` (browser sessions, via `devtools`).
"""
