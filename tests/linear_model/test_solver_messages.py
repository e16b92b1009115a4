"""The L-BFGS driver's non-convergence warnings name the cause."""

import pytest
from scipy.optimize import OptimizeResult
from sklearn.exceptions import ConvergenceWarning

from sksparsemax.linear_model._solver import _check_lbfgs_result


def test_max_iter_warning():
    result = OptimizeResult(status=1, nit=5, message="STOP: TOTAL NO. OF ITERATIONS")
    with pytest.warns(ConvergenceWarning, match=r"Increase the number of iterations"):
        assert _check_lbfgs_result(result, max_iter=5) == 5


def test_line_search_failure_warning():
    result = OptimizeResult(status=2, nit=3, message="ABNORMAL_TERMINATION_IN_LNSRCH")
    with pytest.warns(ConvergenceWarning, match=r"line search could not make progress"):
        assert _check_lbfgs_result(result, max_iter=100) == 3

