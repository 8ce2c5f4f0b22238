"""The "auto" time range (dynamics.timescales): the fit is reached and the alignment gets a
fair share of the (log-spaced) slider at any ε and loss on the default points data."""

from __future__ import annotations

import numpy as np
import pytest

from dynamics.config import Config
from dynamics.phases import alignment_end
from dynamics.simulate import simulate
from dynamics.timescales import auto_time, nice_ceil, with_auto_time


def _config(loss: str, eps: float) -> Config:
    return Config.model_validate({"loss": {"kind": loss}, "init": {"scale": eps}})


@pytest.mark.parametrize("loss", ["square", "logistic"])
@pytest.mark.parametrize("eps", [1e-2, 1e-4, 1e-8])
def test_auto_time_reaches_fit_and_shares_slider(loss: str, eps: float) -> None:
    config, at = with_auto_time(_config(loss, eps))
    assert config.integrator.t_end == at.t_end
    assert config.record.t_first == at.t_first
    assert 0 < at.t_align < at.t_fit <= at.t_end
    traj = simulate(config)
    L = np.asarray(traj.loss)
    fitted = L[-1] < 0.1 * L[0] or (loss != "square" and traj.accuracy[-1] == 1.0)
    assert fitted, (at, L[0], L[-1])
    t_al, _ = alignment_end(traj)
    assert t_al is not None
    frac = np.searchsorted(traj.t, t_al) / len(traj.t)
    assert 0.25 < frac < 0.6, (at, t_al, frac)


def test_auto_time_grows_with_log_inverse_eps() -> None:
    a, b = auto_time(_config("square", 1e-2)), auto_time(_config("square", 1e-8))
    assert b.rate == pytest.approx(a.rate)
    assert b.t_align > 3 * a.t_align  # ∝ ln(1/ε) + const
    assert b.t_end >= a.t_end
    assert auto_time(_config("logistic", 1e-4)).t_end > auto_time(_config("square", 1e-4)).t_end


def test_nice_ceil_and_describe() -> None:
    assert [nice_ceil(x) for x in (0.7, 1.0, 1.1, 2.2, 3.0, 73.0, 240.0)] == \
        [1.0, 1.0, 2.0, 2.5, 5.0, 100.0, 250.0]
    text = auto_time(_config("square", 1e-3)).describe()
    assert text.startswith("t_end = ") and "auto: alignment ≈" in text and "fitting ≈" in text


def test_gd_auto_time_within_step_limit() -> None:
    c = Config.model_validate({"integrator": {"method": "gd", "lr": 0.1}})
    config, _ = with_auto_time(c)
    assert config.integrator.t_end / 0.1 <= config.integrator.max_steps
