"""The documentation site builds, with warnings as errors, and stays complete.

The slow test builds the whole site the way a developer would
(``sphinx-build -W --keep-going -b html docs <out>``) in a subprocess, from a
copy of ``docs/``, ``examples/`` and ``benchmarks/results/`` in a temporary
folder (so that the build's generated files never land in the checkout),
with two switches:

- ``SKSPARSEMAX_DOCS_OFFLINE=1``: no intersphinx inventories are fetched (the
  test machines have no network; an unreachable inventory is a warning that
  ``-W`` would turn into an error);
- ``-D plot_gallery=0``: sphinx-gallery renders the example pages without
  running the scripts. ``tests/test_examples.py`` runs every script (and the
  notebooks) anyway; running them again here would double the cost of the
  test suite (about a minute on two cores) for no extra check.

The fast tests check that the API reference lists every public object (each
subpackage's ``__all__``), that the reST code examples of the user guide run
(doctest), and the Markdown-to-reST converter that puts the benchmark reports
on the performance page.
"""

import doctest
import importlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import docutils.core
import docutils.utils
import pytest
import sphinx  # noqa: F401 -- fail early if the docs dependencies are missing

import sksparsemax

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SUBPACKAGES = (
    "transforms", "losses", "linear_model", "datasets", "continuous", "integrations", "conformal",
)
BUILD_TIMEOUT = 1200  # seconds

sys.path.insert(0, str(DOCS / "_ext"))
import sksparsemax_docs  # noqa: E402


def _api_entries():
    """{module: set of names} listed by the autosummary tables of api.rst."""
    entries, module, in_table = {}, None, False
    for line in (DOCS / "api.rst").read_text(encoding="utf-8").splitlines():
        match = re.match(r"\.\. currentmodule:: (\S+)", line)
        if match:
            module = match.group(1)
            continue
        if line.startswith(".. autosummary::"):
            in_table = True
            continue
        if in_table:
            if line.strip().startswith(":") or not line.strip():
                continue
            if line.startswith("   "):
                entries.setdefault(module, set()).add(line.strip())
            else:
                in_table = False
    return entries


@pytest.mark.parametrize("sub", SUBPACKAGES)
def test_api_reference_lists_every_public_object(sub):
    module = importlib.import_module(f"sksparsemax.{sub}")
    listed = _api_entries().get(f"sksparsemax.{sub}", set())
    missing = sorted(set(module.__all__) - listed)
    stale = sorted(listed - set(module.__all__))
    assert not missing, f"docs/api.rst lacks sksparsemax.{sub}: {missing}"
    assert not stale, f"docs/api.rst lists names not in sksparsemax.{sub}.__all__: {stale}"


def _rst_with_doctests():
    return sorted(
        p
        for p in DOCS.rglob("*.rst")
        if "generated" not in p.parts
        and "auto_examples" not in p.parts
        and ">>> " in p.read_text(encoding="utf-8")
    )


@pytest.mark.parametrize("page", _rst_with_doctests(), ids=lambda p: p.relative_to(DOCS).as_posix())
def test_user_guide_doctests(page):
    result = doctest.testfile(
        str(page),
        module_relative=False,
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
        verbose=False,
    )
    assert result.attempted > 0
    assert result.failed == 0, f"{page.name}: {result.failed} doctest example(s) failed"



_UNDERLINE = re.compile(r"([=\-~^\"'`#*+])\1{2,}")


def _glued_titles(text):
    """Lines that underline a title but follow a paragraph line (1-based).

    docutils then reads the title and its underline as two more lines of
    the paragraph, without a warning: the section silently disappears.
    """
    lines = text.splitlines()
    glued = []
    for i in range(2, len(lines)):
        title, before = lines[i - 1], lines[i - 2]
        if (
            _UNDERLINE.fullmatch(lines[i])
            and title.strip()
            and len(lines[i]) >= len(title.rstrip())
            and before.strip()
            and not _UNDERLINE.fullmatch(before)  # an overline
        ):
            glued.append(i + 1)
    return glued


def test_glued_title_detector():
    assert _glued_titles("Text.\nMore text.\nTitle\n=====\n") == [4]
    assert _glued_titles("Text.\n\nTitle\n=====\n") == []
    assert _glued_titles("=====\nTitle\n=====\n") == []  # over- and underline


@pytest.mark.parametrize(
    "page",
    [p for p in sorted(DOCS.rglob("*.rst")) if not {"_build", "generated", "auto_examples"} & set(p.parts)],
    ids=lambda p: p.relative_to(DOCS).as_posix(),
)
def test_no_title_glued_to_a_paragraph(page):
    assert _glued_titles(page.read_text(encoding="utf-8")) == [], (
        f"{page.name}: a section title needs a blank line before it"
    )

# -- the benchmark report converter --------------------------------------------------------

REPORT = """\
# Transforms: time per call

Measured with `timeit`, best of 5; **lower is better**. Shapes are (n, K) and
the PyTorch reference is the [entmax](https://github.com/deep-spin/entmax) package.

| function | (1000, 10) | (1000, 1000) | speed-up vs entmax_* |
|---|---:|---:|---|
| `sparsemax` | 0.12 ms | 8.1 ms | 2.3x |
| entmax_bisect (alpha=1.5) | 1.9 ms | 95 ms | n/a | extra |
| a\\|b | *odd* | snake_case_ | x |

- note one: K_max = 10
- note two

```bash
python benchmarks/bench_transforms.py --write
```

![timings](transforms.png)
"""


def _parse_problems(rst):
    stream = []

    class _Collect:
        def write(self, text):
            stream.append(text)

    docutils.core.publish_doctree(
        rst,
        settings_overrides={
            "report_level": docutils.utils.Reporter.INFO_LEVEL + 1,
            "halt_level": 5,
            "warning_stream": _Collect(),
        },
    )
    return "".join(stream)


def test_markdown_report_becomes_valid_rest():
    rst = sksparsemax_docs.markdown_to_rst(REPORT, image_dir="../benchmarks/results")
    assert ".. rubric:: Transforms: time per call" in rst
    assert ".. list-table::" in rst
    assert ":literal:`sparsemax`" in rst
    assert ".. code-block:: bash" in rst
    assert ".. image:: ../benchmarks/results/transforms.png" in rst
    assert "`entmax <https://github.com/deep-spin/entmax>`__" in rst
    problems = _parse_problems(rst)
    assert not problems, f"{problems}\n---\n{rst}"


def test_results_page_without_results(tmp_path):
    rst = sksparsemax_docs.render_results(tmp_path / "missing", tmp_path)
    assert ".. note::" in rst
    assert not _parse_problems(rst)


def test_results_page_with_reports(tmp_path):
    results = tmp_path / "benchmarks" / "results"
    results.mkdir(parents=True)
    (results / "transforms.md").write_text(REPORT, encoding="utf-8")
    (results / "multilabel.md").write_text("# shown on another page\n", encoding="utf-8")
    (results / "estimators.png").write_bytes(b"")
    docs = tmp_path / "docs"
    docs.mkdir()
    rst = sksparsemax_docs.render_results(results, docs, exclude={"multilabel"})
    assert "``transforms.md``" in rst
    assert "multilabel" not in rst
    assert ".. figure:: ../benchmarks/results/estimators.png" in rst
    assert ".. image:: ../benchmarks/results/transforms.png" in rst


# -- the site ---------------------------------------------------------------------------


@pytest.mark.slow
def test_site_builds_without_warnings(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(
        DOCS,
        src / "docs",
        ignore=shutil.ignore_patterns("_build", "generated", "auto_examples", "sg_execution_times.rst"),
    )
    shutil.copytree(ROOT / "examples", src / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    if (ROOT / "benchmarks" / "results").is_dir():
        shutil.copytree(ROOT / "benchmarks" / "results", src / "benchmarks" / "results")
    out = tmp_path / "html"
    env = dict(os.environ, SKSPARSEMAX_DOCS_OFFLINE="1", MPLBACKEND="Agg", OMP_NUM_THREADS="1")
    # The build documents the very package the tests import (installed or not).
    package_parent = str(Path(sksparsemax.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, env.get("PYTHONPATH", "")) if p)
    cmd = [
        sys.executable, "-m", "sphinx",
        "-W", "--keep-going", "-b", "html", "-q",
        "-D", "plot_gallery=0",
        "-d", str(tmp_path / "doctrees"),
        str(src / "docs"), str(out),
    ]  # fmt: skip
    result = subprocess.run(
        cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT
    )
    assert result.returncode == 0, (
        f"sphinx-build -W failed (exit {result.returncode}):\n"
        f"{result.stderr[-8000:]}\n{result.stdout[-2000:]}"
    )

    # Every public object has its page, every example its gallery page.
    missing = []
    for sub in SUBPACKAGES:
        module = importlib.import_module(f"sksparsemax.{sub}")
        for name in module.__all__:
            page = out / "generated" / f"sksparsemax.{sub}.{name}.html"
            if not page.is_file():
                missing.append(page.name)
    for script in sorted((ROOT / "examples").rglob("plot_*.py")):
        rel = script.relative_to(ROOT / "examples").with_suffix(".html")
        if not (out / "auto_examples" / rel).is_file():
            missing.append(f"auto_examples/{rel.as_posix()}")
    for page in ("index", "api", "quickstart", "install", "performance", "comparison", "notebooks"):
        if not (out / f"{page}.html").is_file():
            missing.append(f"{page}.html")
    assert not missing, f"pages missing from the built site: {missing}"
    mathjax = (out / "user_guide" / "mappings.html").read_text(encoding="utf-8")
    assert "mathjax" in mathjax.lower()


def test_api_page_lists_each_object_once():
    """A subpackage's summary table is dropped where autosummary lists the same objects."""
    import sksparsemax.linear_model as lm

    lines = lm.__doc__.splitlines()
    assert sum("MarginalMultiLabel" in line for line in lines) == 1
    sksparsemax_docs._drop_summary_table(None, "module", "sksparsemax.linear_model", lm, {}, lines)
    assert not any("MarginalMultiLabel" in line for line in lines)
    assert any("LogisticRegression" in line for line in lines)  # the prose stays
    other = ["=====  =====", "a      b", "=====  ====="]
    sksparsemax_docs._drop_summary_table(None, "class", "sksparsemax.X", None, {}, other)
    assert len(other) == 3
    api = (DOCS / "api.rst").read_text()
    assert api.count("   MarginalMultiLabel\n") == 1
