"""numba's disk cache for the kernels, keyed on the source of the whole package; and the
uncompiled path a server takes while it compiles them.

numba keys a cached kernel on its own file only. The kernels here call each other across
modules (gd.py and gf.py inline loss.py's ``evaluate``), so after an edit of loss.py a cached
``_gf_run`` would still run the old gradient. The locators below give every kernel of this
package one source stamp: the hash of all its .py files, so any edit recompiles them all.
In a cache directory of its own (NUMBA_CACHE_DIR, or numba's user-wide one) the kernels sit
under that stamp instead of under their files' path: a copy of the same sources elsewhere (an
installed wheel beside a checkout, another virtual environment) loads what one of them
compiled, and different sources never share an entry. They use numba's locator hook
(``CacheImpl._locator_classes``); if that hook is missing in some numba version, the default
per-file caching applies unchanged.

While a server compiles the kernels (`dynamics.warmup`: `warming` is set, in its own thread), a
page must not wait for the compiler: `call(kernel)` — how every Python-level call site reaches a
kernel — gives the kernel's own Python source, interpreted (`interpreted`: its calls to other
kernels interpreted too), in every thread but the warm-up's. Same equations and operations in
the same order: square-loss runs give the same bits as the compiled kernels, the exp/log of the
other losses may differ in the last bits (libm against NumPy's); a run computed so is
provisional (`dynamics.simulate`) and is never cached. It is some hundred times slower than the
compiled kernels, so only small runs take it (`dynamics.cost.interpreted_seconds`).
"""

from __future__ import annotations

import hashlib
import threading
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import numba
from numba.core.registry import CPUDispatcher

HERE = Path(__file__).resolve().parent


def package_stamp() -> str:
    """sha256 of this package's .py sources (names and contents, in name order)."""
    h = hashlib.sha256()
    for f in sorted(HERE.glob("*.py")):
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def _install() -> None:
    try:
        from numba.core import caching
    except ImportError:  # pragma: no cover - numba without the caching module
        return
    stamp = package_stamp()

    def ours(py_file: str) -> bool:
        return Path(py_file).resolve().parent == HERE

    class _Mixin:
        def get_source_stamp(self) -> str:
            return stamp

        @classmethod
        def get_suitable_cache_subpath(cls, py_file: str) -> str:
            return f"eae_kernels_{stamp[:16]}"

        @classmethod
        def from_function(cls, py_func, py_file):
            return super().from_function(py_func, py_file) if ours(py_file) else None

    locators = []
    for name in ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator"):
        base = getattr(caching, name, None)
        if base is not None:
            locators.append(type("Kernels" + name, (_Mixin, base), {}))
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    classes = getattr(impl, "_locator_classes", None)
    if isinstance(classes, list) and not any(c.__name__.startswith("Kernels") for c in classes):
        classes[:0] = locators


_install()

#: Every kernel: compiled once per machine (disk cache), GIL released, IEEE semantics (no
#: fast-math: a kernel compiled here and one loaded from the cache give the same bits).
jit = numba.njit(cache=True, nogil=True)


# ----------------------------------------------------------------------------- uncompiled path
_warming = threading.Event()  # a warm-up is compiling the kernels in this process
_warm_thread: list[threading.Thread] = []  # the thread compiling them (it compiles)
_interp: dict[Any, Callable[..., Any]] = {}
_interp_lock = threading.Lock()


def interpreted(kernel: Any) -> Callable[..., Any]:
    """`kernel`'s Python function, run by the interpreter, with every kernel it calls
    interpreted too (its globals copied and those names rebound); one per kernel."""
    with _interp_lock:
        return _interpreted(kernel)


def _interpreted(kernel: Any) -> Callable[..., Any]:
    got = _interp.get(kernel)
    if got is not None:
        return got
    f = kernel.py_func
    glob = dict(f.__globals__)
    fn = types.FunctionType(f.__code__, glob, f.__name__, f.__defaults__, f.__closure__)
    _interp[kernel] = fn
    for name, value in list(glob.items()):
        if isinstance(value, CPUDispatcher):
            glob[name] = _interpreted(value)
    return fn


def begin_warming() -> None:
    """The calling thread compiles the kernels now; the others interpret them meanwhile."""
    _warm_thread[:] = [threading.current_thread()]
    _warming.set()


def end_warming() -> None:
    """The kernels are compiled (or loaded): every thread calls them from now on."""
    _warming.clear()
    _warm_thread.clear()


def compiling_elsewhere() -> bool:
    """Whether another thread of this process is compiling the kernels right now (a warm-up)."""
    return _warming.is_set() and threading.current_thread() not in _warm_thread


Mode = Literal["compiled", "interpreted"]
_local = threading.local()


@contextmanager
def running(mode: Mode | None) -> Iterator[None]:
    """Call the kernels `mode` in this thread meanwhile (None: as `call` decides)."""
    old = getattr(_local, "mode", None)
    _local.mode = mode
    try:
        yield
    finally:
        _local.mode = old


def mode() -> Mode | None:
    """This thread's mode (`running`), or None."""
    return getattr(_local, "mode", None)


def call(kernel: Any) -> Callable[..., Any]:
    """The kernel to call from Python: interpreted when this thread runs "interpreted", or
    (no mode set) while another thread compiles the kernels; else compiled (a first call
    compiles it, waiting for numba's compiler)."""
    m = getattr(_local, "mode", None)
    if m == "interpreted" or (m is None and compiling_elsewhere()):
        return interpreted(kernel)
    return kernel
