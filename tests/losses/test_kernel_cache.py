"""The compiled loss kernels are cached on disk: a first fit compiles them once per installation.

Each loss's entry point dispatches on its task by a constant of the task's
type (``sksparsemax/losses/_numba_engine.py``); a dispatch that numba could
not cache (a Python object in the machine code) would make every new process
compile the kernels again, seconds per kernel. Fresh processes with an empty
``NUMBA_CACHE_DIR``: the first compiles each loss's kernel on the rows task,
with numba's warnings as errors (numba warns when it cannot cache), the
second must load every one of them from the cache.
"""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("numba") is None,
    reason="numba is not installed (pip install 'sksparsemax[fast]') - numba backend not tested",
)

ROOT = Path(__file__).resolve().parents[2]

_CALL_EACH_KERNEL = r"""
import json, warnings
import numpy as np
from numba.core.errors import NumbaWarning
from sksparsemax.losses import EntmaxLoss, SoftmaxLoss, SparseSoftmaxLoss, SparsemaxLoss

warnings.simplefilter("error", NumbaWarning)
rng = np.random.default_rng(0)
n, K = 16, 6
Z = rng.standard_normal((n, K))
y = rng.integers(0, K, n).astype(np.intp)
hits = {}
for name, loss in [("sparsemax", SparsemaxLoss()), ("softmax", SoftmaxLoss()),
                   ("top-k", SparseSoftmaxLoss(k=2)), ("1.5-entmax", EntmaxLoss(1.5))]:
    kernel, params = loss._row_kernel_for(K)
    losses, zmax = np.empty(n), np.empty(n)
    out = np.empty_like(Z)
    task = (Z, y, np.empty((0, 0)), np.zeros(1), out, losses, zmax)
    assert kernel(task, np.asarray(params, dtype=np.float64)) == -1
    # The loss gradient p - q, against the NumPy path (too few scores for
    # the compiled one).
    assert np.allclose(out, loss.gradient(Z, y), rtol=1e-12, atol=1e-12), name
    hits[name] = sum(kernel.stats.cache_hits.values())
print(json.dumps(hits))
"""


def _run(cache_dir):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir), PYTHONPATH=str(ROOT))
    env.pop("NUMBA_DISABLE_JIT", None)
    result = subprocess.run([sys.executable, "-c", _CALL_EACH_KERNEL], env=env,
                            capture_output=True, text=True, cwd=str(cache_dir))
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_loss_kernels_compile_once_and_load_from_the_cache(tmp_path):
    first = _run(tmp_path)
    assert first == {name: 0 for name in first}  # compiled: nothing cached yet
    second = _run(tmp_path)
    assert set(second) == {"sparsemax", "softmax", "top-k", "1.5-entmax"}
    assert all(hits >= 1 for hits in second.values()), second


_SMALL_FITS = r"""
import json
import numpy as np
import numba.core.dispatcher as dispatcher
from sksparsemax.linear_model import EntmaxClassifier, SparseSoftmaxClassifier, SparsemaxClassifier

compiled = []
original = dispatcher.Dispatcher.compile


def compile(self, sig):
    compiled.append(self.py_func.__qualname__)
    return original(self, sig)


dispatcher.Dispatcher.compile = compile
rng = np.random.default_rng(0)
X = rng.standard_normal((1000, 20))
y = np.argmax(X @ rng.standard_normal((20, 5)) + rng.gumbel(size=(1000, 5)), axis=1)
for model in (SparsemaxClassifier(), EntmaxClassifier(alpha=1.5), SparseSoftmaxClassifier(k=2)):
    model.fit(X, y)
print(json.dumps(compiled))
"""


def test_a_fit_too_small_for_the_kernels_compiles_none(tmp_path):
    # The Performance page's claim: below the size rules of the compiled
    # losses a fit takes the NumPy path, and nothing else in the fit (the
    # intercepts' scales, the solver) compiles a kernel either.
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, "-c", _SMALL_FITS], env=env,
                            capture_output=True, text=True, cwd=str(tmp_path))
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []
