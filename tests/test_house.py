"""The house rules of the package's code (issue 29), checked on every run so that they hold.

- Imports run one way: the core (the network, training, calibration, windows, the time axis,
  ...) never imports a front-end; no module imports the forecaster's but the public
  utilities above it; no two modules import each other, through any chain. Every import
  counts, those under ``if TYPE_CHECKING:`` and inside functions included.
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


# The front-ends: the estimators, their mixins and the public utilities that take them.
FRONT_ENDS = frozenset(
    {
        "forecaster",
        "regressor",
        "conformal",
        "_forecast_outputs",
        "scaleout",
        "serialization",
        "model_selection",
        "plotting",
    }
)
# The model file's rooms, below serialization (the persistence of the front-ends).
PERSISTENCE = "_persistence"
# The public utilities that take a fitted forecaster (as scikit-learn's functions take
# estimators): the only modules that may import the forecaster's.
TAKES_A_FORECASTER = frozenset({"scaleout", "serialization", "model_selection", "plotting"})


def _module_name(path: Path) -> str:
    """A module's dotted name within the package (``""``: the package itself)."""
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


NAMES = {_module_name(path): path for path in MODULES}
FRONT = FRONT_ENDS | {name for name in NAMES if name.split(".")[0] == PERSISTENCE}


def _imports(name: str) -> set[str]:
    """The package's modules that module ``name`` imports, anywhere in its code (a name
    imported from a package is that package's ``__init__``, unless it is a submodule)."""
    path = NAMES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.split(".") if package else []
            base = base[: len(base) - node.level + 1]
            target = ".".join([*base, *([node.module] if node.module else [])])
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("levy_sklearn"):
            target = node.module.removeprefix("levy_sklearn").lstrip(".")
        elif isinstance(node, ast.Import):
            found |= {
                alias.name.removeprefix("levy_sklearn").lstrip(".")
                for alias in node.names
                if alias.name.split(".")[0] == "levy_sklearn"
            }
            continue
        else:
            continue
        for alias in node.names:
            submodule = f"{target}.{alias.name}".lstrip(".")
            found.add(submodule if submodule in NAMES else target)
    return found - {name}


GRAPH = {name: _imports(name) for name in NAMES}


def test_the_import_graph_reads_the_package():
    # What the tests below rest on: the graph holds every kind of import the package uses.
    assert "_series_training" in GRAPH["_series_forecasts"]  # at the top of a module
    assert "forecaster" in GRAPH["scaleout"]  # under if TYPE_CHECKING:
    assert "_persistence" in GRAPH["_forecast_outputs"]  # inside a method
    assert "training" in GRAPH["calibration.held_out"]  # from a subpackage, two dots
    assert "calibration.held_out" in GRAPH["_series_training"]  # of a subpackage's module
    assert FRONT_ENDS <= set(NAMES)


@pytest.mark.parametrize("name", sorted(set(NAMES) - FRONT - {""}))
def test_the_core_never_imports_a_front_end(name):
    imported = sorted(GRAPH[name] & FRONT)
    assert not imported, f"{name} imports the front-end(s) {imported}"


def test_only_the_public_utilities_import_the_forecaster():
    importers = {name for name, imported in GRAPH.items() if "forecaster" in imported}
    assert importers <= TAKES_A_FORECASTER, sorted(importers - TAKES_A_FORECASTER)


def test_no_modules_import_each_other_through_any_chain():
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        if name in path:
            cycle = " -> ".join([*path[path.index(name) :], name])
            pytest.fail(f"import cycle: {cycle}")
        if name in done:
            return
        for imported in sorted(GRAPH[name]):
            visit(imported, [*path, name])
        done.add(name)

    for name in sorted(GRAPH):
        visit(name, [])


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
