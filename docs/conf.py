"""Sphinx configuration of the sksparsemax documentation.

Build (from the repository root)::

    pip install -e ".[docs]"
    sphinx-build -W --keep-going -b html docs docs/_build/html

Environment variables:

``SKSPARSEMAX_DOCS_OFFLINE=1``
    Do not fetch the intersphinx inventories of NumPy, SciPy and scikit-learn
    (for machines without network access: an unreachable inventory is a
    warning that no ``suppress_warnings`` entry can silence, so ``-W`` would
    fail). Cross-references to those projects then render as plain text.
    MathJax is then served from the bundled copy of ``sphinx-mathjax-offline``
    (if installed) instead of a CDN.

``-D plot_gallery=0`` (a sphinx-gallery option, not an environment variable)
    Build the gallery pages without running the example scripts (no figures);
    ``tests/test_docs.py`` does this because ``tests/test_examples.py`` runs
    every script anyway.

The notebooks (``examples/notebooks/*.ipynb``, the single committed copy) are
rendered by myst-nb with the outputs they are committed with (no execution
here; ``tests/test_examples.py`` runs them and checks the committed outputs).
Sphinx reads sources only from ``docs/``, so each build first copies them to
``docs/generated/notebooks/`` (ignored by git, like the rest of
``docs/generated/``); sphinx-gallery ignores ``examples/notebooks/``.
"""

import os
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE / "_ext"))
try:  # the installed package (pip install -e .), else the checkout
    import sksparsemax
except ImportError:
    sys.path.insert(0, str(ROOT))
    import sksparsemax

# -- Project -------------------------------------------------------------------
project = "sksparsemax"
author = "The sksparsemax developers"
copyright = "The sksparsemax developers, BSD-3-Clause"  # noqa: A001
release = sksparsemax.__version__
version = ".".join(release.split(".")[:2])

# -- General -------------------------------------------------------------------
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "sphinx.ext.doctest",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_nb",  # the notebooks, rendered with their committed outputs
    "sksparsemax_docs",  # docs/_ext: the benchmark results page
]

templates_path = ["_templates"]
# auto_examples/*.ipynb: sphinx-gallery's downloadable notebooks of the scripts,
# not pages (myst-nb would read them as sources).
exclude_patterns = [
    "_build", "generated/*.txt", "auto_examples/**.ipynb", "**.ipynb_checkpoints",
    "Thumbs.db", ".DS_Store",
]  # fmt: skip
# reST is the main format; myst-nb adds ".ipynb" (and ".md", unused here).
source_suffix = {".rst": "restructuredtext", ".ipynb": "myst-nb"}
root_doc = "index"
default_role = "literal"
pygments_style = "sphinx"
nitpicky = False

# -- autodoc / autosummary / numpydoc -------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": False, "inherited-members": False}
autodoc_typehints = "none"
# numpydoc renders the class docstrings; the class template lists the methods
# with autosummary, so numpydoc must not add its own member tables.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

# Methods inherited from scikit-learn (get_params, score, the metadata-routing
# set_*_request, ...) are documented there; their docstrings refer to labels
# of scikit-learn's own site. The class template lists them in one line.
def _inherited_from_sklearn():
    import sklearn.base

    names = set()
    for base in (sklearn.base.BaseEstimator, sklearn.base.ClassifierMixin):
        names.update(n for n in dir(base) if not n.startswith("_"))
    names.update(
        f"set_{method}_request"
        for method in ("fit", "score", "predict", "predict_proba", "predict_log_proba",
                       "decision_function", "partial_fit", "transform")
    )
    return sorted(names)


autosummary_context = {"sklearn_methods": _inherited_from_sklearn()}

# -- intersphinx -----------------------------------------------------------------
if os.environ.get("SKSPARSEMAX_DOCS_OFFLINE", "").strip() not in ("", "0"):
    intersphinx_mapping = {}
    # MathJax normally comes from a CDN; offline, serve a bundled copy (the
    # `sphinx-mathjax-offline` package, in the docs extra) so formulas render.
    import importlib.util

    if importlib.util.find_spec("sphinx-mathjax-offline") is not None:
        extensions.append("sphinx-mathjax-offline")
else:
    intersphinx_mapping = {
        "python": ("https://docs.python.org/3", None),
        "numpy": ("https://numpy.org/doc/stable/", None),
        "scipy": ("https://docs.scipy.org/doc/scipy/", None),
        "sklearn": ("https://scikit-learn.org/stable/", None),
        "matplotlib": ("https://matplotlib.org/stable/", None),
        "pandas": ("https://pandas.pydata.org/docs/", None),
    }
intersphinx_timeout = 10

# -- sphinx-gallery ------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    # examples/notebooks holds Jupyter notebooks, not gallery scripts.
    "ignore_pattern": r"(__init__\.py|/notebooks/)",
    "within_subsection_order": "FileNameSortKey",
    "subsection_order": [
        f"../examples/{name}"
        for name in ("mappings", "losses", "classification", "multilabel", "continuous", "notebooks")
    ]
    + ["*"],
    "doc_module": ("sksparsemax",),
    "reference_url": {"sksparsemax": None},
    "backreferences_dir": "generated/backreferences",
    "download_all_examples": False,
    "remove_config_comments": True,
    "matplotlib_animations": False,
    "abort_on_example_error": True,
    "min_reported_time": 1,
    "write_computation_times": False,
    "show_memory": False,
    "capture_repr": ("_repr_html_", "__repr__"),
    # Readable figures and thumbnails: a 2x image for high-resolution screens,
    # and thumbnails larger than the default 400x280 cropped down.
    "image_srcset": ["2x"],
    "thumbnail_size": (480, 336),
}

# -- myst-nb: the notebooks ------------------------------------------------------------
nb_execution_mode = "off"  # render the committed outputs; the test suite executes them
nb_merge_streams = True
myst_enable_extensions = ["dollarmath"]  # $...$ math in the notebooks' Markdown
NOTEBOOKS_SOURCE = ROOT / "examples" / "notebooks"
NOTEBOOKS_PAGES = HERE / "generated" / "notebooks"  # referenced by notebooks.rst


def _copy_notebooks():
    """Copy examples/notebooks/*.ipynb into the source tree (only when changed,
    so that an unchanged notebook is not read again), dropping stale copies."""
    NOTEBOOKS_PAGES.mkdir(parents=True, exist_ok=True)
    sources = {p.name: p for p in NOTEBOOKS_SOURCE.glob("*.ipynb")}
    for stale in NOTEBOOKS_PAGES.glob("*.ipynb"):
        if stale.name not in sources:
            stale.unlink()
    for name, path in sources.items():
        target = NOTEBOOKS_PAGES / name
        if not target.is_file() or target.read_bytes() != path.read_bytes():
            shutil.copyfile(path, target)


_copy_notebooks()

# -- HTML ---------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"sksparsemax {release}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_theme_options = {
    "navbar_end": ["theme-switcher", "navbar-icon-links"],
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "secondary_sidebar_items": ["page-toc", "sourcelink"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"index": [], "install": [], "comparison": []}
html_show_sourcelink = True

# -- the benchmark results page (docs/_ext/sksparsemax_docs.py) -----------------
sksparsemax_benchmark_results = str(ROOT / "benchmarks" / "results")
