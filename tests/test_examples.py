"""The example gallery and the notebooks run, against the current code.

Every gallery script (``examples/**/plot_*.py``) runs in a subprocess with the
``Agg`` matplotlib backend, one BLAS thread (the gallery is sized for two
shared cores; oversubscribed BLAS threads slow the small fits tenfold) and
``ConvergenceWarning`` turned into an error (an example must not show a model
that did not converge), from a temporary working directory. Every notebook
(``examples/notebooks/*.ipynb``) is executed afresh, from a copy, with nbclient
on the ``python3`` kernel, and its *claims* are compared with the committed
notebook's (see below). Both are marked ``slow`` but run in the default test
run.

The notebooks are committed **with** their outputs (the docs site renders
them as they are, with myst-nb, without running them). Their text is of two
kinds, and both are checked:

- computed sentences: the Markdown that a code cell displays (``say(...)`` in
  the notebook, a ``text/markdown`` output) is built from the results. The
  fresh run must display the same sentences as the committed outputs: the
  same words and the same numbers (a number printed with decimals may differ
  by one unit of its last digit, for rounding on another machine; integers
  must be equal). A code cell tagged ``timing`` displays machine-dependent
  times: it must display something, but its text is not compared.
- the prose of the Markdown cells: every number in it must be a literal of
  the code (a parameter such as ``test_size=0.3`` or ``k=3``), not a result;
  a qualitative claim about results is checked by an ``assert`` in the code
  cell that follows it (run by the fresh execution).

Cheap structural checks (not slow): every example folder has a README.txt
(sphinx-gallery needs one), every script starts with a docstring whose first
line is a title and uses ``# %%`` cells, the notebooks are committed with the
outputs of one top-to-bottom run (figures included) and their prose holds no
number that the code does not.

After changing a notebook (or the code it runs), re-execute it in place and
commit the outputs::

    jupyter execute --inplace examples/notebooks/compare_with_logistic_regression.ipynb
"""

import ast
import copy
import os
import re
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


# -- notebooks: committed outputs and the claims of their text ------------------------
NUMBER = re.compile(r"\d+(?:\.\d+)?")
REGENERATE = "re-execute it: jupyter execute --inplace {}"


def _markdown_outputs(cell):
    """The Markdown a code cell displayed (its computed sentences), in order."""
    return [
        "".join(out["data"]["text/markdown"])
        for out in cell.get("outputs", [])
        if "text/markdown" in out.get("data", {})
    ]


def _is_timing(cell):
    return "timing" in cell.get("metadata", {}).get("tags", [])


def _same_number(committed, fresh):
    if committed == fresh:
        return True
    # Printed with decimals: one unit of the last digit apart (a rounding flip).
    if "." in committed and "." in fresh:
        digits = len(committed.split(".")[1])
        if digits == len(fresh.split(".")[1]):
            return abs(float(committed) - float(fresh)) <= 1.001 * 10.0**-digits
    return False


def _claim_mismatches(committed, fresh):
    """Differences between the computed sentences of two runs of one notebook."""
    problems = []
    for i, (old, new) in enumerate(zip(committed.cells, fresh.cells)):
        if old.cell_type != "code":
            continue
        old_md, new_md = _markdown_outputs(old), _markdown_outputs(new)
        if _is_timing(old):
            if not old_md or not new_md:
                problems.append(f"cell {i} (timing): no sentence displayed")
            continue
        if len(old_md) != len(new_md):
            problems.append(f"cell {i}: {len(old_md)} committed sentences, {len(new_md)} in a fresh run")
            continue
        for old_text, new_text in zip(old_md, new_md):
            old_numbers, new_numbers = NUMBER.findall(old_text), NUMBER.findall(new_text)
            same = NUMBER.sub("#", old_text) == NUMBER.sub("#", new_text) and all(
                _same_number(a, b) for a, b in zip(old_numbers, new_numbers)
            )
            if not same:
                problems.append(f"cell {i}:\n  committed: {old_text!r}\n  fresh run: {new_text!r}")
    if len(committed.cells) != len(fresh.cells):
        problems.append("the cells differ")
    return problems


def _code_literals(nb):
    """The numeric literals of the notebook's code cells."""
    values = set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        source = "\n".join(
            line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!"))
        )
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Constant) and type(node.value) in (int, float):
                values.add(float(node.value))
    return values


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=_id)
def test_notebook_is_committed_with_outputs(notebook):
    nb = nbformat.read(notebook, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    fix = REGENERATE.format(notebook.relative_to(ROOT).as_posix())
    # One top-to-bottom run of every cell.
    assert [cell.execution_count for cell in code] == list(range(1, len(code) + 1)), (
        f"{notebook.name}: the outputs are not those of one top-to-bottom run; {fix}"
    )
    outputs = [out for cell in code for out in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"], f"{notebook.name}: an error output"
    stderr = [o.text for o in outputs if o.output_type == "stream" and o.name == "stderr"]
    assert not stderr, f"{notebook.name}: warnings or stderr in the outputs: {stderr}"
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) >= 3, f"{notebook.name}: expected its figures in the outputs; {fix}"
    silent = [
        i for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code" and "say(" in cell.source and not _markdown_outputs(cell)
    ]  # fmt: skip
    assert not silent, f"{notebook.name}: sentence cells {silent} have no Markdown output; {fix}"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=_id)
def test_notebook_prose_states_no_uncomputed_number(notebook):
    """A number in a Markdown cell is a literal of the code (a parameter), not a result."""
    nb = nbformat.read(notebook, as_version=4)
    literals = _code_literals(nb)
    stray = [
        (i, number)
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "markdown"
        for number in NUMBER.findall(cell.source)
        if float(number) not in literals
    ]
    assert not stray, (
        f"{notebook.name}: numbers in the prose that the code does not hold (cell, number): {stray}; "
        "compute such a sentence in a code cell (say(f'...')) instead"
    )


def test_comparison_notebook_uses_the_main_jobs_split_and_models():
    """The notebook's digits split, models and max_iter are those of ``python -m sksparsemax``."""
    import inspect

    from sksparsemax import _cli

    nb = nbformat.read(EXAMPLES / "notebooks" / "compare_with_logistic_regression.ipynb", as_version=4)
    source = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "code")
    match = re.search(r"^TEST_SIZE, SEED, MAX_ITER = ([\d.]+), (\d+), (\d+)$", source, re.M)
    assert match, "the notebook must set TEST_SIZE, SEED, MAX_ITER in one line"
    test_size, seed, max_iter = float(match[1]), int(match[2]), int(match[3])
    from sksparsemax import _report

    assert _report.TEST_SIZE == test_size
    assert "test_size=_report.TEST_SIZE, stratify=y, random_state=args.seed" in (
        inspect.getsource(_cli._builtin_tasks)
    )
    assert _cli.build_parser().parse_args([]).seed == seed
    assert _cli._max_iter(False) == max_iter
    main_job = dict(_cli._multiclass_models(False, seed))
    assert all(f'"{name}"' in source for name in main_job), list(main_job)
    assert "EntmaxClassifier(alpha=1.5, max_iter=MAX_ITER)" in source
    assert "SparseSoftmaxClassifier(k=3, max_iter=MAX_ITER)" in source


@pytest.mark.slow
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=_id)
def test_notebook_runs(notebook, tmp_path, monkeypatch):
    for key, value in _env().items():
        monkeypatch.setenv(key, value)  # inherited by the kernel
    committed = nbformat.read(notebook, as_version=4)
    nb = copy.deepcopy(committed)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
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
    mismatches = _claim_mismatches(committed, nb)
    assert not mismatches, (
        f"{notebook.name}: the committed sentences disagree with a fresh run "
        f"({REGENERATE.format(notebook.relative_to(ROOT).as_posix())}):\n" + "\n".join(mismatches)
    )
