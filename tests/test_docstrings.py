"""Every public docstring passes numpydoc's validator and is valid reST.

Public objects are discovered, not listed: for each subpackage of
:mod:`sksparsemax` (``transforms``, ``losses``, ``linear_model``, ``datasets``,
``continuous``), every name of its ``__all__``; for a class, also every public
method and property (and ``__call__``) defined in sksparsemax's own code
(methods inherited from scikit-learn, such as ``get_params``, are not ours to
check). One test per object, so each failure names its object.

``numpydoc.validate.validate`` reports error codes; a test fails on the codes
in ``CHECKED`` below:

====== =========================================================
GL08   the object has a docstring
GL05   no tabs for indentation
GL06   no unknown section
GL07   sections in the numpydoc order
GL10   no stray double-colon code block
SS01   there is a summary line
SS02   it starts with a capital letter
SS03   it ends with a period
SS04   it is on one line, without leading whitespace
SS05   it starts with an infinitive verb ("Return", not "Returns")
SS06   it fits in one line
PR01   every parameter is documented
PR02   no documented parameter that does not exist
PR03   the parameters are documented in the signature's order
PR04   every parameter has a type
PR05   parameter types do not end with a period
PR06   types use "int", "bool", "str" (not "integer", "boolean", "string")
PR07   every parameter has a description
PR08   the descriptions start with a capital letter
PR09   and end with a period
PR10   "name : type" has a space before the colon
RT01   functions that return something have a Returns section
RT03   every returned value has a description
RT04   which starts with a capital letter
RT05   and ends with a period
YD01   generators have a Yields section
EX01   public functions and classes have an Examples section (methods
       and properties are covered by their class's examples)
====== =========================================================

Left out on purpose: GL01/GL02 (blank lines around the docstring: a layout
preference), GL03 (double blank lines), ES01 (extended summary), SA01 (See
Also present), SA02-SA04 (See Also formatting), RT02 (scikit-learn names its
return values, ``self : object``, which numpydoc's RT02 flags) and GL09.

A second test renders every docstring the way the documentation does (numpydoc's
Sphinx rendering) and parses it with docutils: reST errors (a stray ``name_``
that docutils reads as a link, a definition list without a blank line, ...)
break the ``-W`` documentation build, so they are reported here, per object.
"""

import importlib
import inspect

import docutils.core
import docutils.nodes
import docutils.parsers.rst
import docutils.utils
import pytest
from docutils.parsers.rst import Directive, directives, roles
from numpydoc.docscrape_sphinx import get_doc_object
from numpydoc.validate import validate

SUBPACKAGES = (
    "transforms", "losses", "linear_model", "datasets", "continuous", "integrations", "conformal",
)

CHECKED = frozenset(
    """GL05 GL06 GL07 GL08 GL10 SS01 SS02 SS03 SS04 SS05 SS06 PR01 PR02 PR03 PR04
    PR05 PR06 PR07 PR08 PR09 PR10 RT01 RT03 RT04 RT05 YD01 EX01""".split()
)
NOT_FOR_MEMBERS = frozenset({"EX01"})


def _own(cls, name):
    """Whether ``name`` is defined by sksparsemax code in ``cls``'s MRO."""
    for klass in cls.__mro__:
        if name in vars(klass):
            return klass.__module__.startswith("sksparsemax")
    return False


def _public_objects():
    found = []
    for sub in SUBPACKAGES:
        module = importlib.import_module(f"sksparsemax.{sub}")
        for name in module.__all__:
            obj = getattr(module, name)
            qualname = f"sksparsemax.{sub}.{name}"
            found.append((qualname, False))
            if inspect.isclass(obj):
                for member in sorted(dir(obj)):
                    if (member.startswith("_") and member != "__call__") or not _own(obj, member):
                        continue
                    attr = inspect.getattr_static(obj, member)
                    if isinstance(attr, (staticmethod, classmethod, property)) or inspect.isfunction(attr):
                        found.append((f"{qualname}.{member}", True))
    return found


PUBLIC = _public_objects()


def test_discovery_finds_every_subpackage():
    prefixes = {name.split(".")[1] for name, _ in PUBLIC}
    assert prefixes == set(SUBPACKAGES)
    assert len(PUBLIC) > 50


@pytest.mark.parametrize("qualname,is_member", PUBLIC, ids=[name for name, _ in PUBLIC])
def test_numpydoc_validation(qualname, is_member):
    result = validate(qualname)
    codes = CHECKED - NOT_FOR_MEMBERS if is_member else CHECKED
    errors = [(code, message) for code, message in result["errors"] if code in codes]
    assert not errors, f"{qualname}:\n" + "\n".join(f"  {c}: {m}" for c, m in errors)


# -- reST validity -------------------------------------------------------------------


class _Ignore(Directive):
    """Stand-in for Sphinx directives that plain docutils does not know."""

    has_content = True
    optional_arguments = 10
    final_argument_whitespace = True
    option_spec = None

    def run(self):
        return []


class _AnyOptions(dict):
    def __getitem__(self, key):
        return directives.unchanged


_Ignore.option_spec = _AnyOptions()


def _sphinx_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    return [docutils.nodes.literal(rawtext, text)], []


for _role in (
    "func meth class mod attr obj data exc ref term doc py:func py:meth py:class "
    "py:mod py:attr py:obj py:data py:exc"
).split():
    roles.register_local_role(_role, _sphinx_role)
for _directive in "seealso only autosummary versionadded versionchanged deprecated plot".split():
    directives.register_directive(_directive, _Ignore)


def _import(qualname):
    parts = qualname.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = inspect.getattr_static(obj, attr) if inspect.isclass(obj) else getattr(obj, attr)
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        return obj
    raise ImportError(qualname)


@pytest.mark.parametrize("qualname,is_member", PUBLIC, ids=[name for name, _ in PUBLIC])
def test_docstring_is_valid_rest(qualname, is_member):
    obj = _import(qualname)
    if not (obj.__doc__ if not isinstance(obj, property) else obj.fget.__doc__):
        pytest.fail(f"{qualname} has no docstring")
    what = "class" if inspect.isclass(obj) else "method" if is_member else "function"
    if isinstance(obj, property):
        obj, what = obj.fget, "method"
    rendered = str(
        get_doc_object(
            obj, what=what, config={"show_class_members": False, "attributes_as_param_list": True}
        )
    )
    stream = []

    class _Collect:
        def write(self, text):
            stream.append(text)

    docutils.core.publish_doctree(
        rendered,
        settings_overrides={
            "report_level": docutils.utils.Reporter.WARNING_LEVEL,
            "halt_level": docutils.utils.Reporter.SEVERE_LEVEL + 1,
            "warning_stream": _Collect(),
            "file_insertion_enabled": False,
            "raw_enabled": False,
        },
    )
    problems = "".join(stream).strip()
    assert not problems, f"{qualname}: invalid reST once rendered by numpydoc:\n{problems}"
