"""The layers stay strict: lower layers never import higher ones.

transforms -> losses -> linear_model -> (datasets, CLI); continuous and
datasets stand apart. Checked on the source (every import statement of every
module) and at run time (importing the transforms does not load
scikit-learn).
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "sksparsemax"

# For each subpackage: the sksparsemax subpackages and third-party top-level
# modules it may import (the standard library is always allowed).
ALLOWED = {
    "transforms": ({"transforms"}, {"numpy"}),
    "losses": ({"losses", "transforms"}, {"numpy", "scipy"}),
    "linear_model": (
        {"linear_model", "losses", "transforms"},
        {"numpy", "scipy", "sklearn"},
    ),
    "continuous": ({"continuous"}, {"numpy", "scipy"}),
    "datasets": ({"datasets"}, {"numpy", "scipy", "sklearn", "pandas"}),
    "integrations": (
        {"integrations", "transforms", "linear_model"},
        {"numpy", "pandas", "dask"},
    ),
}


# Modules of the package root that every layer may import (they import
# NumPy only): the checks of the parameters shared by several layers.
SHARED = {"_checks"}


def _imports(path):
    """(absolute module names, relative targets resolved to subpackages)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    rel = path.relative_to(PACKAGE.parent).with_suffix("").parts  # sksparsemax/x/_y
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                yield node.module
            else:
                base = list(rel[: len(rel) - node.level])
                target = ".".join(base + ([node.module] if node.module else []))
                yield target


def _modules(sub):
    return sorted((PACKAGE / sub).rglob("*.py"))


@pytest.mark.parametrize("sub", sorted(ALLOWED))
def test_subpackage_imports_only_lower_layers(sub):
    own, third_party = ALLOWED[sub]
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    modules = _modules(sub)
    assert modules, f"no modules found for {sub}"
    bad = []
    for path in modules:
        for name in _imports(path):
            top = name.split(".")[0]
            if top == "sksparsemax":
                parts = name.split(".")
                if len(parts) < 2 or parts[1] not in own | SHARED:
                    bad.append((path.name, name))
            elif top in stdlib or top in third_party:
                continue
            elif top in {"numba", "torch", "array_api_compat"}:
                continue  # optional accelerators, imported lazily and guarded
            else:
                bad.append((path.name, name))
    assert not bad, f"{sub} imports outside its layer: {bad}"


def test_importing_transforms_does_not_load_scikit_learn():
    code = (
        "import sys, sksparsemax.transforms, sksparsemax.losses;"
        "sys.exit(1 if 'sklearn' in sys.modules else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True)
    assert result.returncode == 0, result.stderr.decode()


def test_top_level_exports_the_estimators():
    import sksparsemax

    for name in sksparsemax._ESTIMATORS:
        cls = getattr(sksparsemax, name)
        assert cls.__module__.startswith("sksparsemax.linear_model")
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        sksparsemax.nope  # noqa: B018
