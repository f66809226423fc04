"""The documentation's contract: every public name is in the API reference and has a numpydoc
docstring with a runnable example; the benchmark page picks up every results file.

"Public" is each module's ``__all__`` (the package's own and every submodule's that does not
start with an underscore), plus the public methods of the public classes defined in the
package. The examples themselves are run by ``pytest --doctest-modules levy_sklearn`` and the
gallery by the docs build; here only their presence and the docstrings' structure are
checked, so these tests take seconds.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pkgutil
import re
import warnings
from pathlib import Path
from types import ModuleType

import pytest

import levy_sklearn

# Both come with the "docs" extra, which `make test` installs.
NumpyDocString = pytest.importorskip("numpydoc.docscrape").NumpyDocString
validate = pytest.importorskip("numpydoc.validate").validate
ModuleAnalyzer = pytest.importorskip("sphinx.pycode").ModuleAnalyzer

ROOT = Path(__file__).resolve().parents[1]
API_RST = ROOT / "docs" / "api.rst"
PACKAGE = levy_sklearn.__name__


def _public_modules() -> list[ModuleType]:
    names = [PACKAGE] + [
        f"{PACKAGE}.{info.name}"
        for info in pkgutil.iter_modules(levy_sklearn.__path__)
        if not info.name.startswith("_")
    ]
    return [importlib.import_module(name) for name in names]


def _public_names() -> list[tuple[str, str]]:
    """(module, name) for every name in a public module's ``__all__``, dunders aside."""
    return [
        (module.__name__, name)
        for module in _public_modules()
        for name in module.__all__
        if not name.startswith("__")
    ]


def _is_ours(obj: object) -> bool:
    return (getattr(obj, "__module__", None) or "").split(".")[0] == PACKAGE


def _documented_in_api() -> set[tuple[str, str]]:
    """(module, name) of every entry of an autosummary table in ``docs/api.rst``."""
    documented, module, in_table = set(), None, False
    for line in API_RST.read_text(encoding="utf-8").splitlines():
        if m := re.match(r"\.\. currentmodule:: (\S+)", line):
            module, in_table = m.group(1), False
        elif line.startswith(".. autosummary::"):
            in_table = True
        elif in_table and (m := re.match(r"^ {3}([A-Za-z_]\w*)$", line)):
            documented.add((module, m.group(1)))
        elif line and not line.startswith(" "):
            in_table = False
    return documented


def _same_object(a: tuple[str, str], b: tuple[str, str]) -> bool:
    """Whether two (module, name) pairs are one documented thing: the same class or function
    (a re-export), or the same data name."""
    obj_a = getattr(importlib.import_module(a[0]), a[1])
    obj_b = getattr(importlib.import_module(b[0]), b[1])
    if inspect.isclass(obj_a) or inspect.isroutine(obj_a):
        return obj_a is obj_b
    return a == b


def test_every_public_name_is_in_the_api_reference():
    documented = _documented_in_api()
    unknown = [
        f"{module}.{name}"
        for module, name in documented
        if not hasattr(importlib.import_module(module), name)
    ]
    assert not unknown, f"docs/api.rst lists names that do not exist: {unknown}"
    missing = [
        f"{module}.{name}"
        for module, name in _public_names()
        if not any(_same_object((module, name), entry) for entry in documented)
    ]
    assert not missing, (
        f"public names missing from docs/api.rst: {missing}; add each to the autosummary "
        "table of its module's section"
    )


def _docstring_targets() -> dict[str, tuple[object, object | None]]:
    """Import path -> (object, owning class or None) for every public class and function
    defined in the package, and every public method of those classes defined in it."""
    targets: dict[str, tuple[object, object | None]] = {}
    for module, name in _public_names():
        obj = getattr(importlib.import_module(module), name)
        if not (inspect.isclass(obj) or inspect.isfunction(obj)) or not _is_ours(obj):
            continue
        path = f"{obj.__module__}.{obj.__qualname__}"
        targets[path] = (obj, None)
        if not inspect.isclass(obj):
            continue
        for attr in dir(obj):
            if attr.startswith("_"):
                continue
            static = inspect.getattr_static(obj, attr)
            if isinstance(static, staticmethod | classmethod):
                static = static.__func__
            if isinstance(static, property) or inspect.isfunction(static):
                func = static.fget if isinstance(static, property) else static
                if _is_ours(func):
                    targets[f"{path}.{attr}"] = (static, obj)
    return targets


TARGETS = _docstring_targets()


def _overrides_foreign_method(cls: object, name: str) -> bool:
    """Whether ``name`` overrides a method of a base class from another library (torch,
    skorch, sktime, scikit-learn, MAPIE), whose documentation it then inherits."""
    return any(
        not _is_ours(base) and callable(getattr(base, name, None)) for base in cls.__mro__[1:]
    )


def test_the_walk_finds_the_api():
    # Guards the test below against an empty or partial walk.
    assert "levy_sklearn.regressor.LevyAttentionRegressor.sample_y" in TARGETS
    assert "levy_sklearn.forecaster.LevyForecaster" in TARGETS
    assert "levy_sklearn.attention.psi" in TARGETS
    assert len(TARGETS) > 60


@pytest.mark.parametrize("path", sorted(TARGETS))
def test_numpydoc_docstring_with_example(path):
    obj, owner = TARGETS[path]
    if isinstance(obj, property):
        assert obj.__doc__ and obj.__doc__.strip(), f"property {path} has no docstring"
        return
    doc = obj.__doc__
    if not doc and owner is not None and _overrides_foreign_method(owner, path.split(".")[-1]):
        return  # the overridden library method's docstring is shown, as in scikit-learn
    assert doc and doc.strip(), f"{path} has no docstring"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpydoc warns about unknown or malformed sections
        parsed = NumpyDocString(inspect.cleandoc(doc))
    assert "".join(parsed["Summary"]).strip(), f"{path}: the docstring has no summary line"
    examples = "\n".join(parsed["Examples"])
    assert re.search(r"^\s*>>> ", examples, re.MULTILINE), (
        f"{path}: the docstring needs an 'Examples' section with a runnable '>>>' line"
    )
    # Every parameter documented under "Parameters", none that does not exist. A NamedTuple
    # documents its fields as "Attributes"; a class without an __init__ of its own takes its
    # parameters from a library base class, documented there.
    if inspect.isclass(obj) and (issubclass(obj, tuple) or "__init__" not in vars(obj)):
        return
    errors = [
        f"{code}: {msg}" for code, msg in validate(path)["errors"] if code in ("PR01", "PR02")
    ]
    assert not errors, f"{path}: {errors}"


@pytest.mark.parametrize(
    "module, name",
    [
        (module, name)
        for module, name in _public_names()
        if not inspect.isclass(obj := getattr(importlib.import_module(module), name))
        and not inspect.isroutine(obj)
    ],
)
def test_public_constants_have_doc_comments(module, name):
    # autodoc shows a module constant's "#:" comment as its documentation.
    analyzer = ModuleAnalyzer.for_module(module)
    comment = analyzer.find_attr_docs().get(("", name))
    assert comment and "".join(comment).strip(), (
        f"{module}.{name} needs a '#:' comment on the line(s) above its assignment"
    )


# --------------------------------------------------------------------------------------------
# Benchmark results page: docs/_scripts/convert_results.py
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def convert_results():
    path = ROOT / "docs" / "_scripts" / "convert_results.py"
    spec = importlib.util.spec_from_file_location("_levy_docs_convert_results", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PNG = bytes.fromhex("89504e470d0a1a0a")  # a PNG signature: enough for a copy


def test_results_page_includes_every_results_file(convert_results, tmp_path):
    results, out = tmp_path / "results", tmp_path / "_generated_results"
    (results / "img").mkdir(parents=True)
    (results / "b_claims.md").write_text(
        "# Claims\n\n![Risk-coverage curve](img/curve.png)\n\n![gone](missing.png)\n", "utf-8"
    )
    (results / "a_memory.md").write_text("Peak memory 12 MB, no heading.\n", "utf-8")
    (results / "img" / "curve.png").write_bytes(PNG)
    (results / "notes.txt").write_text("not a results file", "utf-8")

    written = convert_results.main(results, out)

    assert [p.name for p in written] == ["index.rst.inc", "a_memory.rst.inc", "b_claims.rst.inc"]
    index = (out / "index.rst.inc").read_text("utf-8")
    assert index.index("/_generated_results/a_memory.rst.inc") < index.index("b_claims")
    claims = (out / "b_claims.rst.inc").read_text("utf-8")
    assert ".. figure:: /_generated_results/figures/img/curve.png" in claims
    assert (out / "figures" / "img" / "curve.png").read_bytes() == PNG
    assert "``missing.png`` is missing" in claims  # a note on the page, not a broken build
    memory = (out / "a_memory.rst.inc").read_text("utf-8")
    assert memory.splitlines()[2:4] == ["A memory", "--------"]  # a title from the file name

    # A file removed from the results disappears from the page, with its figures.
    (results / "b_claims.md").unlink()
    convert_results.main(results, out)
    assert not (out / "b_claims.rst.inc").exists()
    assert not (out / "figures").exists()
    assert "b_claims" not in (out / "index.rst.inc").read_text("utf-8")


def test_results_page_without_results(convert_results, tmp_path):
    written = convert_results.main(tmp_path / "does-not-exist", tmp_path / "out")
    assert [p.name for p in written] == ["index.rst.inc"]
    assert "No benchmark results" in written[0].read_text("utf-8")


def test_markdown_headings_never_skip_a_level(convert_results):
    rst = convert_results.markdown_to_rst("## A\n\n#### B\n\n### C\n\n## D\n")
    titles = re.findall(r"^(\w)\n([-~^]+)$", rst, re.MULTILINE)
    assert [(t, u[0]) for t, u in titles] == [("A", "-"), ("B", "~"), ("C", "~"), ("D", "-")]


def test_markdown_tables_code_and_escapes(convert_results):
    md = (
        "Scores for `LevyForecaster` *(defaults)*:\n\n"
        "| model | CRPS |\n|:---|---:|\n| a_b | 1.5 |\n| short |\n\n"
        "```weird-language\nx = 1\n```\n<!-- produced by a script -->\n"
    )
    rst = convert_results.markdown_to_rst(md, title="Airline")
    assert rst.startswith("Airline\n-------\n")
    assert "``LevyForecaster`` *(defaults)*" in rst
    assert '"a\\_b","1.5"' in rst and '"short",""' in rst
    # A cell or paragraph that starts like a list item stays text: "(1) ..." is a claim number.
    table = convert_results.markdown_to_rst("| claim |\n|---|\n| (1) Lévy ≤ softmax |\n")
    assert '"\\(1) Lévy ≤ softmax"' in table
    assert "\n\\(6) evidence\n" in convert_results.markdown_to_rst("(6) evidence\n", title="t")
    assert ".. code-block:: text\n\n   x = 1" in rst  # an unknown lexer is not a build warning
    assert "produced by a script" not in rst
