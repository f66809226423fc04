"""The house rules of the package's code (issue 29), checked on every run so that they hold.

- ``forecaster.py`` is the sktime shell of the forecaster: tags, parameters, the private
  methods; at most 600 lines (the work lives in the modules below it).
- No function's code (its docstring aside) is longer than 80 lines, except the documented
  exceptions below.
- No module imports another's private name: a helper shared between modules is public
  within the package, or lives where it is used.
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "levy_sklearn"
MODULES = sorted(PACKAGE.rglob("*.py"))  # subpackages too
MAX_FUNCTION_LINES = 80
# name -> why it may be longer
EXCEPTIONS = {
    "network.LevyNet.__init__": "declares every submodule of the network in one place, as "
    "torch modules do (the builder a reader checks against the architecture in DESIGN.md)",
}


def _code_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines of a function without its docstring."""
    lines = node.end_lineno - node.lineno + 1
    first = node.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        if isinstance(first.value.value, str):
            lines -= first.end_lineno - first.lineno + 1
    return lines


def _functions(path: Path):
    """(qualified name, node) of every function and method of a module."""

    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                yield f"{prefix}{child.name}", child
                yield from walk(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, f"{prefix}{child.name}.")

    yield from walk(ast.parse(path.read_text(encoding="utf-8")), f"{path.stem}.")


def test_the_forecaster_module_is_a_shell():
    lines = (PACKAGE / "forecaster.py").read_text(encoding="utf-8").count("\n")
    assert lines <= 600, f"forecaster.py has {lines} lines (at most 600)"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_function_is_longer_than_80_lines_of_code(path):
    long = {
        name: n
        for name, node in _functions(path)
        if (n := _code_lines(node)) > MAX_FUNCTION_LINES and name not in EXCEPTIONS
    }
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines of code: {long}"


def test_every_exception_still_exists_and_needs_its_place():
    found = {name: _code_lines(node) for path in MODULES for name, node in _functions(path)}
    for name in EXCEPTIONS:
        assert name in found, f"{name} is listed as an exception but does not exist"
        assert found[name] > MAX_FUNCTION_LINES, f"{name} is short now: drop its exception"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_private_name_is_imported_from_another_module(path):
    # The check of the issue: git grep -nE "from \.\w+ import .*\b_[a-z]" levy_sklearn
    source = path.read_text(encoding="utf-8")
    imports = [
        f"{node.module}: {alias.name}"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom) and node.level >= 1
        for alias in node.names
        if alias.name.startswith("_") and not alias.name.startswith("__")
    ]
    assert not imports, f"{path.name} imports private names: {imports}"
