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
    "conformal": ({"conformal", "transforms", "linear_model"}, {"numpy", "scipy", "sklearn"}),
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
            elif sub == "linear_model" and top in {"dask", "pandas"}:
                continue  # fits on Dask collections (_dask_fit.py), imported lazily
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


def _sources(sub):
    return [(path, path.read_text()) for path in _modules(sub)]


def _imported_names(path):
    """``(module, name)`` of every ``from module import name`` (module resolved)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    rel = path.relative_to(PACKAGE.parent).with_suffix("").parts
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0:
                module = node.module
            else:
                base = list(rel[: len(rel) - node.level])
                module = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                yield module, alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None


def test_linear_models_name_no_loss_class_and_no_compiled_module():
    """The linear layer asks the loss for its kernel: it imports no loss class
    (only the extension point, FenchelYoungLoss, and MarginalLoss, which makes
    any of them a per-label loss) and no numba module."""
    bad = []
    for path in _modules("linear_model"):
        for module, name in _imported_names(path):
            if module.split(".")[0] == "numba" or "numba" in module.split(".")[-1]:
                bad.append((path.name, module))
            if module.startswith("sksparsemax.losses") and name and (
                name.endswith("Loss") and name not in ("FenchelYoungLoss", "MarginalLoss")
            ):
                bad.append((path.name, name))
            if name and "numba" in name:
                bad.append((path.name, name))
    assert not bad, f"linear_model reaches past the loss interface: {bad}"


def test_one_module_decides_the_backend():
    """Only transforms/_backend.py reads the backend setting; every other
    module asks its numba_enabled() (or kernels())."""
    bad = []
    for sub in ALLOWED:
        for path, text in _sources(sub):
            if path.name == "_backend.py" or path.name == "__init__.py":
                continue
            if "get_backend()" in text or "find_spec(\"numba\")" in text:
                bad.append(str(path.relative_to(PACKAGE)))
    assert not bad, f"modules deciding the backend themselves: {bad}"


def test_no_isinstance_on_loss_types_outside_the_losses():
    bad = []
    for sub in ("linear_model", "integrations"):
        for path, text in _sources(sub):
            tree = ast.parse(text)
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Call)
                    and getattr(node.func, "id", None) == "isinstance"
                    and len(node.args) == 2
                    and "Loss" in ast.unparse(node.args[1])
                ):
                    bad.append((path.name, ast.unparse(node)))
    assert not bad, bad


def test_each_shipped_loss_owns_its_compiled_kernel():
    """A loss's row kernel lives in its own module, imported only by the loss."""
    from sksparsemax.losses import loss_names

    losses_dir = PACKAGE / "losses"
    kernels = sorted(p.name for p in losses_dir.glob("_*_numba.py"))
    assert kernels, "no compiled row kernels found"
    for kernel in kernels:
        stem = kernel[: -len("_numba.py")]
        users = [
            p.name for p in losses_dir.glob("*.py")
            if p.name != kernel and f".{kernel[:-3]} import" in p.read_text()
        ]
        assert users == [f"{stem}.py"], (kernel, users)
    # Every name estimators accept is a registered FenchelYoungLoss subclass.
    from sksparsemax.losses import FenchelYoungLoss, get_loss

    for name in loss_names():
        assert isinstance(get_loss(name), FenchelYoungLoss)


def test_losses_do_not_switch_on_alpha():
    """Special values of alpha are cases chosen once, not `alpha ==` branches."""
    text = (PACKAGE / "losses" / "_entmax.py").read_text()
    tree = ast.parse(text)
    switches = [
        ast.unparse(node) for node in ast.walk(tree)
        if isinstance(node, ast.Compare) and "alpha" in ast.unparse(node.left)
        and any(isinstance(op, ast.Eq) for op in node.ops)
    ]
    # tsallis_rows' Shannon limit is the formula itself, not a loss switch.
    assert len(switches) <= 1, switches


#: The shape limits of the package's code: modules of about 500 lines at most
#: (a few lines of slack), functions of at most 80 lines of code (docstrings,
#: comments and blank lines not counted).
MAX_MODULE_LINES = 520
MAX_FUNCTION_CODE_LINES = 80


def _code_lines(source_lines, node):
    body = node.body
    start = body[0].lineno
    first = body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and (
        isinstance(first.value.value, str)
    ):
        if len(body) == 1:
            return 0
        start = body[1].lineno
    return sum(
        1 for line in source_lines[start - 1 : node.end_lineno]
        if line.strip() and not line.strip().startswith("#")
    )


def test_modules_and_functions_stay_small():
    long_modules, long_functions = [], []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text()
        lines = text.splitlines()
        if len(lines) > MAX_MODULE_LINES:
            long_modules.append((str(path.relative_to(PACKAGE)), len(lines)))
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = _code_lines(lines, node)
                if n > MAX_FUNCTION_CODE_LINES:
                    long_functions.append((f"{path.name}:{node.name}", n))
    assert not long_modules, f"modules over {MAX_MODULE_LINES} lines: {long_modules}"
    assert not long_functions, (
        f"functions over {MAX_FUNCTION_CODE_LINES} lines of code: {long_functions}"
    )
