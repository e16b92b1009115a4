"""The "Numerical guarantees" page of the user guide is backed by tests.

``docs/user_guide/numerical_guarantees.rst`` states, per mapping and loss,
what is accepted, what raises and how accurate the result is. Every bullet
item of the page is a guarantee and must end with ``Checked by`` and the
pytest node ids of the tests that check it. This module reads the page and
fails if

- an item names no test, or a named test file, test function, class or
  method does not exist (the test files are parsed with :mod:`ast`, never
  imported);
- an item states a number (a tolerance, a range, a size) that none of the
  tests it cites uses: the numbers of a test are the numeric literals, and
  the numbers written in string literals, of the test function (with its
  decorators), of the module-level functions and constants it refers to,
  recursively, and of the ``conftest.py`` files above it;
- an item states a bound ("within X", "a relative X", "at most X") that
  none of the tests it cites asserts: the bounds of a test are the numbers in
  its comparisons, its ``atol=``/``rtol=``-like keywords and argument
  defaults, its assignments to names containing ``tol`` and its functions
  whose name contains ``tol`` (with the same closure as above);
- the accuracy items of alpha-entmax disagree with the constants ``TOL`` and
  ``ALPHAS`` of ``tests/transforms/test_entmax_accuracy.py``, or those tests
  no longer run over ``ALPHAS``;
- a number appears in the prose outside the items (where no test is cited).

``BREAKAGES`` lists careless edits of the page (a tightened bound, a wider
alpha range, a dropped citation, a misspelt test, a number in the prose);
each, applied to a copy of the page, must be caught by its check.

The module also holds the tests of the guarantees that no other test
checked (the page cites them like the others): no K×K matrix for a large K,
exact zeros below the support bound of sparsemax and entmax, the errors of
``SoftmaxLoss`` on invalid scores, and the numerics that a user's
:class:`~sksparsemax.losses.FenchelYoungLoss` subclass inherits.
"""

import ast
import importlib.util
import math
import re
from functools import cache
from pathlib import Path

import numpy as np
import pytest

import sksparsemax.transforms as T
from sksparsemax.losses import FenchelYoungLoss, SparsemaxLoss

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "user_guide" / "numerical_guarantees.rst"
INDEX = ROOT / "docs" / "user_guide" / "index.rst"
ACCURACY = ROOT / "tests" / "transforms" / "test_entmax_accuracy.py"

#: ``tests/path.py::test_function`` or ``tests/path.py::TestClass::test_method``
NODE_ID = re.compile(r"``(tests/[\w/.-]+?\.py)::(\w+)(?:::(\w+))?``")
#: the uniform ending of a guarantee item
CHECKED_BY = re.compile(r"Checked by ``tests/[^`]+``(?:,\s*``tests/[^`]+``)*\.$")
#: a number standing alone (not part of a name such as float32 or entmax15)
NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?(?:e[-+]?\d+)?)(?!\w|\.\d)")

#: the accuracy tests of alpha-entmax, whose items must state TOL and ALPHAS
ACCURACY_TESTS = (
    "test_entmax_bisect_accuracy",
    "test_entmax_bisect_accuracy_array_api",
    "test_entmax_jvp_accuracy",
    "test_entmax_loss_accuracy",
)

#: the objects in the scope of the page (each must appear on it)
IN_SCOPE = (
    "softmax", "sparsemax", "sparsemax_threshold", "sparse_softmax", "entmax15",
    "entmax_bisect", "softmax_jvp", "sparsemax_jvp", "sparse_softmax_jvp", "entmax_jvp",
    "SparsemaxLoss", "SoftmaxLoss", "SparseSoftmaxLoss", "EntmaxLoss", "sparsemax_loss",
    "softmax_loss", "sparse_softmax_loss", "entmax_loss", "FenchelYoungLoss",
    "rbf_expectation_1d", "rbf_expectation_2d",
    "normmax", "normmax_jvp", "budget_sparsemax", "budget_sparsemax_jvp",
    "NormmaxLoss", "normmax_loss", "BudgetSparsemaxLoss", "budget_sparsemax_loss",
    "MarginalLoss", "check_marginals",
)


# ---------------------------------------------------------------------------
# Reading the page
# ---------------------------------------------------------------------------
def guarantee_items(text):
    """``[(line number, text of the item)]`` for every bullet item of ``text``.

    An item starts with ``- `` (or ``* ``) and continues over the following
    non-blank lines indented past its marker.
    """
    items, current = [], None
    for lineno, line in enumerate(text.splitlines(), start=1):
        start = re.match(r"^( *)[-*] (\S.*)$", line)
        if start:
            current = (lineno, len(start.group(1)), [start.group(2).strip()])
            items.append(current)
        elif current and line.strip() and line.startswith(" " * (current[1] + 2)):
            current[2].append(line.strip())
        else:
            current = None
    return [(lineno, " ".join(parts)) for lineno, _, parts in items]


def cited_tests(item):
    """The node ids of an item: ``[(file, name, method or None)]``."""
    return [(f, name, method or None) for f, name, method in NODE_ID.findall(item)]


def stated_numbers(item):
    """The numbers an item states, as floats (test ids and API names removed)."""
    text = NODE_ID.sub(" ", item)
    text = re.sub(r":\w+:`[^`]*`", " ", text)  # :func:`entmax15`, ...
    text = re.sub(r"\b\d-D\b", " ", text)  # 1-D, 2-D: a shape, not a bound
    return [float(m) for m in NUMBER.findall(text)]


def stated_bounds(item):
    """The numbers an item states as bounds ("within 1e-9", "a relative 1e-12")."""
    text = NODE_ID.sub(" ", item)
    text = re.sub(r":\w+:`[^`]*`", " ", text)
    return [float(m) for m in BOUND_PHRASE.findall(text)]


@cache
def page_items():
    return guarantee_items(PAGE.read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------
# Reading the tests (ast only)
# ---------------------------------------------------------------------------
@cache
def parsed(path):
    return ast.parse((ROOT / path).read_text(encoding="utf-8"), filename=str(path))


def module_definitions(tree):
    """{name: node} of the module-level functions, classes and assignments."""
    defs = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defs[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        defs[name.id] = node
    return defs


def find_test(path, name, method=None):
    """The ast node(s) of a test: ``[function]`` or ``[class decorators..., method]``.

    Returns None if the file, the function, the class or the method is missing.
    """
    if not (ROOT / path).is_file():
        return None
    node = module_definitions(parsed(path)).get(name)
    if method is None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and name.startswith("test"):
            return [node]
        return None
    if not isinstance(node, ast.ClassDef) or not name.startswith("Test"):
        return None
    for child in node.body:
        if (
            isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            and child.name == method
            and method.startswith("test")
        ):
            return list(node.decorator_list) + [child]
    return None


#: keyword arguments that set the bound of a comparison
BOUND_KEYWORDS = {"atol", "rtol", "tol", "abs", "rel", "abs_tol", "rel_tol"}
#: "within X", "a relative X", "at most X": X is a bound the tests must assert
BOUND_PHRASE = re.compile(
    r"(?:within|relative|at most|at least)\s+-?(\d+(?:\.\d+)?(?:e[-+]?\d+)?)(?!\w|\.\d)"
)


def _bound_nodes(tree):
    """The sub-trees of ``tree`` whose numbers are bounds of a check: comparisons,
    ``atol=``/``rtol=``-like keywords and argument defaults, assignments to a
    name containing ``tol`` and functions whose name contains ``tol``."""
    for sub in ast.walk(tree):
        if isinstance(sub, ast.Compare):
            yield sub
        elif (isinstance(sub, ast.keyword) and sub.arg in BOUND_KEYWORDS) or (
            isinstance(sub, ast.Assign)
            and any(isinstance(t, ast.Name) and "tol" in t.id.lower() for t in sub.targets)
        ):
            yield sub.value
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if "tol" in sub.name.lower():
                yield sub
            args = sub.args
            positional = args.posonlyargs + args.args
            pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
            pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
            for arg, default in pairs:  # def check(..., atol=1e-12)
                if arg.arg in BOUND_KEYWORDS:
                    yield default


def _numbers_of(node, bounds_only=False):
    if bounds_only:
        return set().union(set(), *(_numbers_of(n) for n in _bound_nodes(node)))
    out = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant):
            value = sub.value
            if isinstance(value, bool):
                continue
            if isinstance(value, (int, float)):
                out.add(abs(float(value)))
            elif isinstance(value, str):
                out.update(float(m) for m in NUMBER.findall(value))
    return out


def _conftests(path):
    folder = (ROOT / path).parent
    while folder != ROOT and ROOT in folder.parents:
        conftest = folder / "conftest.py"
        if conftest.is_file():
            yield conftest.relative_to(ROOT).as_posix()
        folder = folder.parent


@cache
def numbers_used_by(path, name, method=None, bounds_only=False):
    """Every number a test uses (see the module docstring); with ``bounds_only``,
    only those that bound a check (see :func:`_bound_nodes`)."""
    nodes = find_test(path, name, method)
    defs = module_definitions(parsed(path))
    seen, todo, numbers = set(), list(nodes), set()
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        numbers |= _numbers_of(node, bounds_only)
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and sub.id in defs:
                todo.append(defs[sub.id])
    for conftest in _conftests(path):
        numbers |= _numbers_of(parsed(conftest), bounds_only)
    return frozenset(numbers)


def _same(x, y):
    return math.isclose(x, y, rel_tol=1e-12, abs_tol=0.0)


def accuracy_constants():
    """``TOL`` ({'float64': ..., 'float32': ...}) and ``ALPHAS`` of the accuracy tests."""
    tree = parsed(ACCURACY.relative_to(ROOT).as_posix())
    tol = alphas = None
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            if node.targets[0].id == "ALPHAS":
                alphas = [float(a) for a in ast.literal_eval(node.value)]
            elif node.targets[0].id == "TOL":
                tol = {
                    key.attr: float(ast.literal_eval(value))
                    for key, value in zip(node.value.keys, node.value.values)
                }
    assert alphas and tol and set(tol) == {"float64", "float32"}, (alphas, tol)
    return tol, alphas


# ---------------------------------------------------------------------------
# The page is consistent with the tests
# ---------------------------------------------------------------------------
def test_the_page_is_in_the_user_guide_toctree():
    lines = [line.strip() for line in INDEX.read_text(encoding="utf-8").splitlines()]
    assert "numerical_guarantees" in lines
    assert lines.index("numerical_guarantees") == lines.index("custom_loss") + 1
    title = [line.strip() for line in PAGE.read_text(encoding="utf-8").splitlines()[:6]]
    assert "Numerical guarantees" in title


def test_the_page_has_guarantees_for_every_object_in_scope():
    text = PAGE.read_text(encoding="utf-8")
    assert len(page_items()) >= 40
    missing = [name for name in IN_SCOPE if f"`{name}`" not in text]
    assert not missing, f"the page says nothing about {missing}"


def uncited_items(items):
    """Items that do not end with ``Checked by`` and node ids."""
    return [
        f"line {lineno}: {item[:70]}..."
        for lineno, item in items
        if not cited_tests(item) or not CHECKED_BY.search(item)
    ]


def missing_tests(items):
    """Cited node ids whose file, function, class or method does not exist."""
    return [
        f"line {lineno}: {f}::{name}" + (f"::{method}" if method else "")
        for lineno, item in items
        for f, name, method in cited_tests(item)
        if find_test(f, name, method) is None
    ]


def drifted_numbers(items):
    """Numbers (and bounds) of the items that the cited tests do not use (assert)."""
    drifted = []
    for lineno, item in items:
        tests = [t for t in cited_tests(item) if find_test(*t) is not None]
        if not tests:
            continue  # reported by uncited_items / missing_tests
        names = [t[1] for t in tests]
        used = set().union(*(numbers_used_by(*t) for t in tests))
        for x in stated_numbers(item):
            if not any(_same(x, y) for y in used):
                drifted.append(f"line {lineno}: {x:g} is used by none of {names}")
        bounds = set().union(*(numbers_used_by(*t, bounds_only=True) for t in tests))
        for x in stated_bounds(item):
            if not any(_same(x, y) for y in bounds):
                drifted.append(f"line {lineno}: the bound {x:g} is asserted by none of {names}")
    return drifted


def entmax_accuracy_mismatches(items):
    """Where the accuracy items of alpha-entmax disagree with ``TOL`` and ``ALPHAS``."""
    tol, alphas = accuracy_constants()
    problems, cited = [], {}
    for lineno, item in items:
        for _, name, _ in cited_tests(item):
            if name in ACCURACY_TESTS:
                cited.setdefault(name, []).append((lineno, item))
    problems += [f"{name} is cited by no item" for name in ACCURACY_TESTS if name not in cited]
    number = r"(\d+(?:\.\d+)?(?:e[-+]?\d+)?)"
    for name, found in cited.items():
        for lineno, item in found:
            where = f"line {lineno} ({name})"
            bound = re.search(rf"within {number} \(float64\) or {number} \(float32\)", item)
            span = re.search(rf"``alpha`` from {number} to {number} \(([^)]*)\)", item)
            if not bound:
                problems.append(f"{where}: no 'within X (float64) or Y (float32)'")
            elif (float(bound.group(1)), float(bound.group(2))) != (tol["float64"], tol["float32"]):
                problems.append(f"{where}: the bounds are not TOL = {tol}")
            if not span:
                problems.append(f"{where}: no '``alpha`` from X to Y (...)'")
                continue
            if (float(span.group(1)), float(span.group(2))) != (min(alphas), max(alphas)):
                problems.append(f"{where}: the alpha range is not that of ALPHAS")
            listed = span.group(3)
            if listed != "the same values" and [float(v) for v in NUMBER.findall(listed)] != alphas:
                problems.append(f"{where}: the values listed are not ALPHAS = {alphas}")
    return problems


def prose_lines(text):
    """``[(line number, line)]`` of the text outside the items, titles and directives."""
    in_item = {n for n, _ in guarantee_items(text)}
    out, inside = [], False
    for lineno, line in enumerate(text.splitlines(), start=1):
        if lineno in in_item:
            inside = True
            continue
        if inside and line.startswith("  ") and line.strip():
            continue
        inside = False
        stripped = line.strip()
        if not stripped or stripped.startswith("..") or re.fullmatch(r"([=\-~^])\1+", stripped):
            continue
        out.append((lineno, line))
    return out


def stray_numbers(text):
    """Prose lines (outside the items, so citing no test) that state a number."""
    return [f"line {n}: {line.strip()}" for n, line in prose_lines(text) if stated_numbers(line)]


def test_every_guarantee_names_its_tests():
    bad = uncited_items(page_items())
    assert not bad, "items without a final 'Checked by ``tests/...::test``.':\n" + "\n".join(bad)


def test_every_named_test_exists():
    missing = missing_tests(page_items())
    assert not missing, "the page cites tests that do not exist:\n" + "\n".join(missing)


def test_every_stated_number_is_used_by_a_cited_test():
    drifted = drifted_numbers(page_items())
    assert not drifted, "numbers on the page that no cited test uses:\n" + "\n".join(drifted)


def test_entmax_accuracy_items_state_the_constants_of_the_accuracy_tests():
    path = ACCURACY.relative_to(ROOT).as_posix()
    for name in ACCURACY_TESTS:  # the accuracy tests really run over ALPHAS and read TOL
        (node,) = find_test(path, name)
        names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        assert {"ALPHAS", "TOL"} <= names, name
    problems = entmax_accuracy_mismatches(page_items())
    assert not problems, "\n".join(problems)


def test_numbers_are_stated_only_in_items_that_cite_tests():
    text = PAGE.read_text(encoding="utf-8")
    assert len(prose_lines(text)) >= 10  # the introductions are read
    stray = stray_numbers(text)
    assert not stray, "numbers outside the items (cite a test for them):\n" + "\n".join(stray)


#: (what a careless edit of the page does, the check that must catch it)
BREAKAGES = [
    # a tightened accuracy claim
    ("is\n  within 1e-9 (float64) or 1e-5 (float32) of an mpmath",
     "is\n  within 1e-10 (float64) or 1e-5 (float32) of an mpmath", "entmax"),
    # a wider alpha range than the tests check
    ("For ``alpha`` from 1.01 to 100 (the same\n  values), every entry of :math:`Jv`",
     "For ``alpha`` from 1.01 to 200 (the same\n  values), every entry of :math:`Jv`", "entmax"),
    # a bound no cited test asserts
    ("- **Against finite differences**, away from the kinks: :func:`sparsemax_jvp`\n  within 1e-9,",
     "- **Against finite differences**, away from the kinks: :func:`sparsemax_jvp`\n  within 1e-10,",
     "numbers"),
    ("is within 2e-12 times", "is within 1e-13 times", "numbers"),
    # an item left without its test
    ("relative 1e-14. Checked by ``tests/transforms/test_softmax.py::test_known_values``.",
     "relative 1e-14.", "uncited"),
    # a misspelt test
    ("::test_numpy_integer_k_accepted``", "::test_numpy_integer_k_acepted``", "missing"),
    # a number in the prose
    ("Unless said otherwise,", "To 1e-12 unless said otherwise,", "prose"),
]


@pytest.mark.parametrize("old, new, check", BREAKAGES, ids=[b[2] + str(i) for i, b in enumerate(BREAKAGES)])
def test_the_checks_fail_on_a_broken_page(old, new, check):
    """Each careless edit, made to a copy of the page, is caught by its check
    (and the unaltered page passes them all: the tests above)."""
    text = PAGE.read_text(encoding="utf-8")
    assert text.count(old) == 1, "the page changed: update BREAKAGES"
    broken = text.replace(old, new)
    items = guarantee_items(broken)
    found = {
        "entmax": entmax_accuracy_mismatches(items),
        "numbers": drifted_numbers(items),
        "uncited": uncited_items(items),
        "missing": missing_tests(items),
        "prose": stray_numbers(broken),
    }[check]
    assert found, f"the {check!r} check missed: {new!r}"


# ---------------------------------------------------------------------------
# Guarantees that no other test checked
# ---------------------------------------------------------------------------
BACKENDS = ["numpy"] + (["numba"] if importlib.util.find_spec("numba") else [])


@pytest.fixture(params=BACKENDS)
def backend(request):
    with T.backend(request.param) as name:
        yield name


def test_no_k_by_k_matrix_is_formed(backend):
    """K = 200000: a K×K float64 matrix would not fit in this machine's memory."""
    K = 200_000
    rng = np.random.default_rng(0)
    z = rng.standard_normal((1, K))
    v = rng.standard_normal((1, K))
    mappings = {
        "softmax": T.softmax(z),
        "sparsemax": T.sparsemax(z),
        "sparse_softmax": T.sparse_softmax(z, 10),
        "entmax15": T.entmax15(z),
        "entmax_bisect-1.3": T.entmax_bisect(z, 1.3),
        "entmax_bisect-4": T.entmax_bisect(z, 4.0),
    }
    for name, p in mappings.items():
        assert p.shape == (1, K), name
        np.testing.assert_allclose(p.sum(), 1.0, rtol=0, atol=1e-9, err_msg=name)
    _, size = T.sparsemax_threshold(z)
    assert int(size[0]) == np.count_nonzero(mappings["sparsemax"])
    jvps = [
        T.softmax_jvp(mappings["softmax"], v),
        T.sparsemax_jvp(mappings["sparsemax"], v),
        T.sparse_softmax_jvp(mappings["sparse_softmax"], v),
        T.entmax_jvp(mappings["entmax15"], v, 1.5),
        T.entmax_jvp(mappings["entmax_bisect-4"], v, 4.0),
    ]
    for jv in jvps:
        assert jv.shape == (1, K)
        np.testing.assert_allclose(jv.sum(), 0.0, rtol=0, atol=1e-9)


def _rows_at_the_bound(rng, gap):
    """Rows on the dyadic grid (multiples of 1/8, exact arithmetic) with entries
    exactly ``gap`` below the maximum, others further below, and random rows."""
    rows = []
    for _ in range(60):
        K = int(rng.integers(2, 12))
        z = rng.integers(-24, 25, size=K) / 8.0
        z[rng.integers(K)] = z.max() - gap  # exactly at the bound
        if K > 2:
            z[rng.integers(K)] = z.max() - gap - 0.125  # beyond it
        rows.append(z)
    Z = np.full((len(rows) + 200, 12), -np.inf)
    for i, z in enumerate(rows):
        Z[i, : z.size] = z
    Z[len(rows):] = rng.normal(scale=rng.choice([0.3, 1.0, 3.0], size=(200, 1)), size=(200, 12))
    return Z


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_exact_zeros_below_the_support_bound(backend, dtype):
    """sparsemax: z_i <= max z - 1 gives exactly 0; entmax15: z_i <= max z - 2;
    entmax_bisect: (alpha - 1)(max z - z_i) >= 1, the boundary included.

    The boundary rows are dyadic, so the gaps are exact in both dtypes; on the
    random rows only entries clearly beyond the bound (by 1e-6 relative) count."""
    rng = np.random.default_rng(42)
    cases = [("sparsemax", T.sparsemax, 1.0), ("entmax15", T.entmax15, 2.0)]
    for alpha in (1.25, 1.5, 2.0, 3.0, 5.0):
        cases.append((f"entmax_bisect-{alpha}", lambda z, a=alpha: T.entmax_bisect(z, a),
                      1.0 / (alpha - 1.0)))
    for name, f, gap in cases:
        Z = _rows_at_the_bound(rng, gap).astype(dtype)
        Z64 = Z.astype(np.float64)
        with np.errstate(invalid="ignore"):  # -inf - -inf in the padding
            below = Z64.max(axis=1, keepdims=True) - Z64
        n = 60
        beyond = np.zeros(Z.shape, dtype=bool)
        beyond[:n] = below[:n] >= gap
        beyond[n:] = below[n:] >= gap * (1 + 1e-6)
        beyond &= np.isfinite(Z64)
        assert beyond[:n].sum() >= n  # the boundary is exercised
        p = f(Z)
        assert p.dtype == dtype
        assert np.all(p[beyond] == 0), (name, Z[np.nonzero(beyond & (p != 0))[0][:1]])
        # and the bound is sharp: something positive remains inside it
        assert np.all(p[np.isfinite(Z64) & (below == 0)] > 0), name


class ProjectionLoss(FenchelYoungLoss):
    """The sparsemax loss written by a user: a sort-based Euclidean projection
    onto the simplex (not the library's) and Omega(p) = (||p||^2 - 1) / 2."""

    def predict_proba(self, Z):
        """Projection of each row onto the simplex (sorted closed form)."""
        Z = np.asarray(Z)
        S = -np.sort(-Z, axis=1)  # -inf masks last
        ks = np.arange(1, Z.shape[1] + 1)
        with np.errstate(invalid="ignore"):
            csum = np.cumsum(S, axis=1)
            size = np.sum(S * ks > csum - 1, axis=1)
        tau = (np.take_along_axis(csum, size[:, None] - 1, axis=1) - 1) / size[:, None]
        return np.maximum(Z - tau, 0).astype(Z.dtype, copy=False)

    def omega(self, P):
        """(||p||^2 - 1) / 2 for each row."""
        return 0.5 * (np.einsum("ij,ij->i", P, P) - 1)


def test_a_new_loss_inherits_the_numerics():
    rng = np.random.default_rng(7)
    n, K = 40, 6
    Z = 2.0 * rng.standard_normal((n, K))
    y = rng.integers(0, K, size=n)
    Q = rng.dirichlet(np.ones(K), size=n)
    ours, shipped = ProjectionLoss(), SparsemaxLoss()
    # values and gradients: those of the shipped loss
    for target in (y, Q):
        v, g = ours.loss_gradient(Z, target)
        v0, g0 = shipped.loss_gradient(Z, target)
        np.testing.assert_allclose(v, v0, rtol=0, atol=1e-12)
        np.testing.assert_allclose(g, g0, rtol=0, atol=1e-12)
    # float32 kept
    v32, g32 = ours.loss_gradient(Z.astype(np.float32), y)
    assert v32.dtype == g32.dtype == np.float32
    # a row shift changes nothing (up to rounding)
    v, g = ours.loss_gradient(Z + 1e3, y)
    np.testing.assert_allclose(v, ours.loss(Z, y), rtol=0, atol=1e-9)
    # -inf masks: a class with zero target probability is as if removed ...
    Zm = Z.copy()
    other = (y + 1) % K
    Zm[np.arange(n), other] = -np.inf
    v, g = ours.loss_gradient(Zm, y)
    assert np.all(g[np.arange(n), other] == 0)
    for i in range(n):
        keep = np.arange(K) != other[i]
        ref = shipped.loss(Z[i : i + 1, keep], [int(np.sum(keep[: y[i]]))])[0]
        np.testing.assert_allclose(v[i], ref, rtol=0, atol=1e-12)
    # ... and one with positive target probability gives +inf, never NaN
    Zm[0, y[0]] = -np.inf
    v, g = ours.loss_gradient(Zm, y)
    assert v[0] == np.inf and not np.isnan(v).any() and not np.isnan(g).any()
    # the same errors as the shipped losses
    for bad, message in [(np.nan, r"Z contains NaN at row 1"), (np.inf, r"\+inf .* at row 1")]:
        Zb = Z.copy()
        Zb[1, 2] = bad
        with pytest.raises(ValueError, match=message):
            ours.loss_gradient(Zb, y)
    Zb = Z.copy()
    Zb[3] = -np.inf
    with pytest.raises(ValueError, match=r"every entry equal to -inf .* at row 3"):
        ours.loss(Zb, y)


@pytest.mark.parametrize(
    "Z, message",
    [
        ([[0.0, 1.0], [np.nan, 0.0]], r"Z contains NaN at row 1"),
        ([[0.0, np.inf], [0.0, 0.0]], r"Z contains \+inf .* at row 0"),
        ([[0.0, 1.0], [-np.inf, -np.inf]], r"every entry equal to -inf .* at row 1"),
        ([0.0, 1.0], r"2-D array of scores"),
        (np.zeros((2, 2, 2)), r"2-D array of scores"),
        (np.zeros((2, 0)), r"0 columns"),
    ],
)
def test_softmax_loss_refuses_invalid_scores_like_the_others(Z, message):
    """tests/losses/test_losses_numerics.py checks the other losses; SoftmaxLoss too."""
    from sksparsemax.losses import SoftmaxLoss, softmax_loss

    with pytest.raises(ValueError, match=message):
        SoftmaxLoss().loss_gradient(Z, [0, 1])
    with pytest.raises(ValueError, match=message):
        SoftmaxLoss().predict_proba(Z)
    with pytest.raises(ValueError, match=message):
        softmax_loss(Z, [0, 1])
    with pytest.raises(TypeError, match="Z must be an array of real numbers"):
        softmax_loss([["a", "b"]], [0])
