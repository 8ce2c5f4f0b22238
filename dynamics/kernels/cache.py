"""numba's disk cache for the kernels, keyed on the source of the whole package.

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
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numba

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
