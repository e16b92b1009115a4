"""The example gallery and the notebooks run, against the current code.

Every gallery script (``examples/**/plot_*.py``) runs in a subprocess with the
``Agg`` matplotlib backend, one BLAS thread (the gallery is sized for two
shared cores; oversubscribed BLAS threads slow the small fits tenfold) and
``ConvergenceWarning`` turned into an error (an example must not show a model
that did not converge), from a temporary working directory. Every notebook
(``examples/notebooks/*.ipynb``) is executed with nbclient on the ``python3``
kernel. Both are marked ``slow`` but run in the default test run.

Cheap structural checks (not slow): every example folder has a README.txt
(sphinx-gallery needs one), every script starts with a docstring whose first
line is a title and uses ``# %%`` cells, and the notebooks are committed
without outputs.
"""

import ast
import os
import subprocess
import sys
from pathlib import Path

import nbclient
import nbformat
import pytest

import sksparsemax

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_PARENT = Path(sksparsemax.__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
SCRIPTS = sorted(EXAMPLES.rglob("plot_*.py"))
NOTEBOOKS = sorted((EXAMPLES / "notebooks").glob("*.ipynb"))
SCRIPT_TIMEOUT = 600  # seconds; each script takes well under 30 s on one idle core
NOTEBOOK_TIMEOUT = 600  # seconds per cell


def _env():
    env = dict(os.environ)
    env.update(
        MPLBACKEND="Agg",
        OMP_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        PYTHONHASHSEED="0",
    )
    # The examples import the very package the tests import (installed or not).
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(PACKAGE_PARENT), env.get("PYTHONPATH", "")) if p
    )
    return env


def _id(path):
    return path.relative_to(EXAMPLES).as_posix()


def test_gallery_is_not_empty():
    assert len(SCRIPTS) >= 7, SCRIPTS
    assert NOTEBOOKS, "examples/notebooks has no notebook"


@pytest.mark.parametrize(
    "folder",
    sorted({p.parent for p in SCRIPTS} | {EXAMPLES, EXAMPLES / "notebooks"}),
    ids=lambda p: p.relative_to(ROOT).as_posix(),
)
def test_example_folder_has_readme(folder):
    assert (folder / "README.txt").is_file(), f"{folder} needs a README.txt for sphinx-gallery"


@pytest.mark.parametrize("script", SCRIPTS, ids=_id)
def test_example_script_structure(script):
    source = script.read_text(encoding="utf-8")
    docstring = ast.get_docstring(ast.parse(source))
    assert docstring, f"{script.name} must start with a docstring (the example's title and text)"
    lines = [line.strip() for line in docstring.splitlines() if line.strip()]
    if set(lines[0]) <= set("=-~^#*"):  # overline
        lines = lines[1:]
    title, underline = lines[0], lines[1] if len(lines) > 1 else ""
    assert underline and set(underline) <= set("=-~^#*") and len(underline) >= len(title), (
        f"{script.name}: the docstring must start with a reST title, got {title!r}"
    )
    assert "# %%" in source, f"{script.name} must be split into '# %%' cells"


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS, ids=_id)
def test_example_script_runs(script, tmp_path):
    cmd = [
        sys.executable,
        "-W",
        "error::sklearn.exceptions.ConvergenceWarning",
        str(script),
    ]
    try:
        result = subprocess.run(
            cmd,
            cwd=tmp_path,
            env=_env(),
            capture_output=True,
            text=True,
            timeout=SCRIPT_TIMEOUT,
        )
    except subprocess.TimeoutExpired as exc:  # pragma: no cover - reported as failure
        pytest.fail(f"{_id(script)} did not finish within {SCRIPT_TIMEOUT} s: {exc}")
    assert result.returncode == 0, (
        f"{_id(script)} failed (exit {result.returncode}).\n"
        f"--- stdout ---\n{result.stdout[-3000:]}\n--- stderr ---\n{result.stderr[-6000:]}"
    )


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=_id)
def test_notebook_is_committed_without_outputs(notebook):
    nb = nbformat.read(notebook, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"
    dirty = [
        i
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code" and (cell.get("outputs") or cell.get("execution_count"))
    ]
    assert not dirty, f"{notebook.name}: code cells {dirty} carry outputs; clear them"


@pytest.mark.slow
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=_id)
def test_notebook_runs(notebook, tmp_path, monkeypatch):
    for key, value in _env().items():
        monkeypatch.setenv(key, value)  # inherited by the kernel
    nb = nbformat.read(notebook, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        timeout=NOTEBOOK_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as exc:
        pytest.fail(f"{notebook.name} failed:\n{str(exc)[-6000:]}")
    errors = [
        out
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if out.get("output_type") == "error"
    ]
    assert not errors
