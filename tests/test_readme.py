"""The README's quick start runs and prints what it says."""

import re
import warnings
from pathlib import Path

import numpy as np

README = Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_quick_start_runs():
    blocks = _python_blocks()
    assert blocks, "README has no python block"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. no ConvergenceWarning
        for block in blocks:
            namespace = {}
            exec(compile(block, str(README), "exec"), namespace)  # noqa: S102
    proba = namespace["clf"].predict_proba(namespace["X"][[0, 52, 146]])
    shown = re.search(r"# array\(\[\[(.*?)\]\]\)", README.read_text(), flags=re.S)
    assert shown, "no commented predict_proba output"
    rows = [
        [float(v) for v in row.replace("#", "").replace("[", "").split(",") if v.strip()]
        for row in shown.group(1).split("],")
    ]
    np.testing.assert_allclose(proba, rows, atol=5e-4)
    assert np.count_nonzero(proba == 0) >= 3  # the promised exact zeros


def test_quick_start_comments_match_the_outputs():
    # The quick start shows softmax and sparsemax of z in comments; check them.
    from sksparsemax.transforms import softmax, sparsemax

    text = README.read_text()
    z = np.array([2.0, 1.2, 0.1, -1.0])
    assert "z = np.array([2.0, 1.2, 0.1, -1.0])" in text
    for name, func in (("softmax", softmax), ("sparsemax", sparsemax)):
        match = re.search(rf"^{name}\(z\)\s+# array\(\[([^\]]*)\]\)", text, flags=re.M)
        assert match, f"no commented output for {name}(z)"
        shown = np.array([float(v) for v in match.group(1).split(",")])
        np.testing.assert_allclose(func(z), shown, atol=5e-4)
    # sparsemax's exact zeros are what the README promises.
    assert np.count_nonzero(sparsemax(z) == 0) == 2


def test_stated_python_version_is_the_packages():
    import tomllib

    project = tomllib.loads((README.parent / "pyproject.toml").read_text())["project"]
    minimum = re.fullmatch(r">=(\d+\.\d+)", project["requires-python"]).group(1)
    assert f"needs Python {minimum} or later" in README.read_text()
    ci = (README.parent / ".ci" / "run").read_text()
    assert "pip install -e \".[test,fast]\" && pytest" in ci  # the command the README shows
