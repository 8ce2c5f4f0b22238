"""NumPy's BLAS thread setting applied by the service (dynamics/blas.py), in fresh processes
so that the one-way, process-wide setting does not leak into other tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_PROBE = """
import json, tempfile
from threadpoolctl import threadpool_info
from dynamics.service import Service
Service(cache_dir=tempfile.mkdtemp())
print(json.dumps([i["num_threads"] for i in threadpool_info()
                  if i.get("user_api") == "blas" and "numpy" in i["filepath"]]))
"""


def _numpy_blas_threads_after_service(env_value: str | None) -> list[int]:
    env = dict(os.environ, PYTHONPATH=str(REPO), OPENBLAS_NUM_THREADS="")
    env.pop("OPENBLAS_NUM_THREADS")
    env.pop("EAE_NUMPY_BLAS_THREADS", None)
    if env_value is not None:
        env["EAE_NUMPY_BLAS_THREADS"] = env_value
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, cwd=str(REPO),
                         capture_output=True, text=True, timeout=120, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_service_sets_numpy_blas_threads_once():
    default = _numpy_blas_threads_after_service("0")  # 0: the library's own default
    assert len(default) == 1 and default[0] == min(os.cpu_count() or 1, default[0]) >= 1
    assert _numpy_blas_threads_after_service(None) == [1]
    assert _numpy_blas_threads_after_service("2") == [2]
    assert _numpy_blas_threads_after_service("many") == [1]  # unreadable: the default 1


_RAISED = """
import json, tempfile
from threadpoolctl import ThreadpoolController
from dynamics.blas import apply_numpy_blas_threads
from dynamics.service import Service
Service(cache_dir=tempfile.mkdtemp())
ctl = ThreadpoolController()
numpy_blas = ctl.select(filepath=[i["filepath"] for i in ctl.info()
                                  if i.get("user_api") == "blas" and "numpy" in i["filepath"]])
numpy_blas.limit(limits=2)  # other code raising it again
raised = [i["num_threads"] for i in numpy_blas.info()]
apply_numpy_blas_threads()  # as the service does before each computation
print(json.dumps([raised, [i["num_threads"] for i in numpy_blas.info()]]))
"""


def test_service_lowers_numpy_blas_threads_again_before_a_computation():
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("OPENBLAS_NUM_THREADS", None)
    env.pop("EAE_NUMPY_BLAS_THREADS", None)
    out = subprocess.run([sys.executable, "-c", _RAISED], env=env, cwd=str(REPO),
                         capture_output=True, text=True, timeout=120, check=True)
    raised, after = json.loads(out.stdout.strip().splitlines()[-1])
    assert raised == [2] and after == [1]
