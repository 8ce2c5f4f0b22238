"""dynamics.readouts: h(x) from stored weights through the kernels' forward pass."""

from __future__ import annotations

import numpy as np

from dynamics.config import Config
from dynamics.readouts import function_curves, network_output, stored_frames
from dynamics.simulate import simulate


def test_network_output_is_the_model_on_stored_weights():
    cfg = Config.from_dict({"data": {"kind": "three_point"}, "model": {"width": 8, "gamma": 0.2,
                                                                       "c": 0.5},
                            "integrator": {"t_end": 10.0}, "record": {"frames": 10}})
    tr = simulate(cfg)
    X = np.column_stack([np.linspace(-1, 1, 7), np.ones(7)])
    for f in stored_frames(tr, 3):
        W, a = tr.W_at(f), tr.a[f]
        pre = X @ W.T
        want = 0.5 * np.maximum(pre, 0.2 * pre) @ a
        np.testing.assert_allclose(network_output(tr, f, X), want, rtol=1e-12, atol=1e-15)
    curves = function_curves(tr, X, 3)
    assert curves.h.shape == (len(curves.frames), 7) and len(curves.frames) <= 3
    assert curves.frames[-1] == tr.n_frames - 1  # the last frame is always shown
