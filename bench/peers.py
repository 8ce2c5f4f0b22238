"""Reference full-batch GD steps in NumPy, PyTorch and JAX, written the way users would.

Every peer runs the same model as the core's benchmark problem: h = c Σ_j a_j relu(⟨w_j, x⟩),
square loss ½(h − y)² averaged over the n points, both layers trained, float64, and exposes

    make_<peer>(X, y, W, a, lr, c) -> run(n_steps) -> (W, a) as NumPy arrays

so that the benchmark times ``run`` alone (set-up and compilation excluded; a first call warms
up). PyTorch and JAX are optional: ``available()`` lists what imports, and the reason for what
does not. No peer changes thread settings: each runs as a user would get it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

import numpy as np

Run = Callable[[int], tuple[np.ndarray, np.ndarray]]
PEERS = ("numpy", "torch", "jax")


def make_numpy(X: np.ndarray, y: np.ndarray, W: np.ndarray, a: np.ndarray, lr: float,
               c: float = 1.0) -> Run:
    """Plain NumPy: forward, hand-written backward, in-place update."""
    n = X.shape[0]
    W0, a0 = W.copy(), a.copy()

    def run(n_steps: int) -> tuple[np.ndarray, np.ndarray]:
        W, a = W0.copy(), a0.copy()
        for _ in range(n_steps):
            z = X @ W.T
            act = np.maximum(z, 0.0)
            h = c * act @ a
            r = (h - y) / n
            ga = c * act.T @ r
            gW = c * a[:, None] * (((z > 0) * r[:, None]).T @ X)
            W -= lr * gW
            a -= lr * ga
        return W, a

    return run


def make_torch(X: np.ndarray, y: np.ndarray, W: np.ndarray, a: np.ndarray, lr: float,
               c: float = 1.0) -> Run:
    """PyTorch (CPU, float64) with autograd: loss.backward() and an in-place update."""
    import torch

    Xt = torch.from_numpy(np.ascontiguousarray(X))
    yt = torch.from_numpy(np.ascontiguousarray(y))

    def run(n_steps: int) -> tuple[np.ndarray, np.ndarray]:
        Wt = torch.tensor(W, dtype=torch.float64, requires_grad=True)
        at = torch.tensor(a, dtype=torch.float64, requires_grad=True)
        for _ in range(n_steps):
            h = c * torch.relu(Xt @ Wt.T) @ at
            loss = 0.5 * ((h - yt) ** 2).mean()
            loss.backward()
            with torch.no_grad():
                Wt -= lr * Wt.grad
                at -= lr * at.grad
            Wt.grad = None
            at.grad = None
        return Wt.detach().numpy(), at.detach().numpy()

    return run


def make_jax(X: np.ndarray, y: np.ndarray, W: np.ndarray, a: np.ndarray, lr: float,
             c: float = 1.0) -> Run:
    """JAX (CPU, float64): jax.grad of the loss, the steps fused by jit + lax.scan."""
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    Xj, yj = jnp.asarray(X), jnp.asarray(y)

    def loss(params):
        Wp, ap = params
        h = c * jax.nn.relu(Xj @ Wp.T) @ ap
        return 0.5 * jnp.mean((h - yj) ** 2)

    grad = jax.grad(loss)

    def step(params, _):
        g = grad(params)
        return (params[0] - lr * g[0], params[1] - lr * g[1]), None

    compiled: dict[int, Callable] = {}

    def run(n_steps: int) -> tuple[np.ndarray, np.ndarray]:
        f = compiled.get(n_steps)
        if f is None:
            f = jax.jit(lambda p, k=n_steps: jax.lax.scan(step, p, None, length=k)[0])
            compiled[n_steps] = f
        Wp, ap = f((jnp.asarray(W), jnp.asarray(a)))
        Wp.block_until_ready()
        return np.asarray(Wp), np.asarray(ap)

    return run


MAKERS: dict[str, Callable[..., Run]] = {"numpy": make_numpy, "torch": make_torch,
                                         "jax": make_jax}


def available() -> dict[str, str | None]:
    """{peer: None if importable else the reason it is skipped}."""
    out: dict[str, str | None] = {"numpy": None}
    for name, module in (("torch", "torch"), ("jax", "jax")):
        try:
            importlib.import_module(module)
            out[name] = None
        except Exception as e:  # ImportError, or a broken install raising something else
            out[name] = f"not importable ({type(e).__name__}: {e})".splitlines()[0][:160]
    return out


def versions() -> dict[str, str]:
    """Versions of the importable peers."""
    out = {"numpy": np.__version__}
    for name in ("torch", "jax", "jaxlib"):
        try:
            out[name] = importlib.import_module(name).__version__
        except Exception:
            pass
    return out
