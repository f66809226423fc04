"""Sphinx configuration of the levy-sklearn documentation.

Build (from the repository root; warnings are errors)::

    .venv/bin/sphinx-build -W --keep-going -b html docs docs/_build/html

or ``make -C docs html``. The build needs no network: intersphinx is off unless
``LEVY_DOCS_INTERSPHINX=1`` is set, and the theme uses no remote assets. MathJax is the one
thing a *reader's* browser loads from its CDN (set ``LEVY_DOCS_MATHJAX_PATH`` to a local copy
for offline reading).

At start-up this file regenerates, so they are always fresh:

* ``docs/_static/psi.png`` (``_scripts/make_figures.py``, computed with ``levy_sklearn.psi``);
* ``docs/_generated_results/*.rst.inc`` (``_scripts/convert_results.py``, from
  ``benchmarks/results/*.md``).

For testing only, ``LEVY_DOCS_EXAMPLES_DIR`` and ``LEVY_DOCS_RESULTS_DIR`` point the gallery
and the benchmark tables at other folders.
"""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

from sphinx.errors import ConfigError
from sphinx.util import logging

import levy_sklearn

logger = logging.getLogger(__name__)

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
# Overridable for testing the docs against other inputs (not needed for normal builds).
EXAMPLES = Path(os.environ.get("LEVY_DOCS_EXAMPLES_DIR", ROOT / "examples")).resolve()
RESULTS = Path(os.environ.get("LEVY_DOCS_RESULTS_DIR", ROOT / "benchmarks" / "results"))
GALLERY_PLACEHOLDER = DOCS / "_gallery_placeholder"
GALLERY_HEADERS = ("GALLERY_HEADER.rst", "README.txt", "README.rst")

# -- Project ------------------------------------------------------------------------------------

project = "levy-sklearn"
author = "levy-sklearn developers"
copyright = "levy-sklearn developers, BSD-3-Clause"  # noqa: A001
release = levy_sklearn.__version__
version = ".".join(release.split(".")[:2])

# -- Generated inputs (figures, benchmark tables) -----------------------------------------------


def _run_script(name: str, *args) -> None:
    """Import ``_scripts/<name>.py`` by path and call its ``main(*args)``."""
    path = DOCS / "_scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_levy_docs_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for path in module.main(*args):
        logger.info("[levy-docs] wrote %s", os.path.relpath(path, ROOT))


_run_script("make_figures")
_run_script("convert_results", RESULTS.resolve())

# -- General ------------------------------------------------------------------------------------

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

templates_path = ["_templates"]
exclude_patterns = [
    "_build",
    "_gallery_placeholder",
    "_generated_results",
    "_scripts",
    "_templates",
    "**.ipynb_checkpoints",
    "Thumbs.db",
    ".DS_Store",
]
source_suffix = {".rst": "restructuredtext"}
root_doc = "index"
language = "en"
default_role = "literal"  # a stray `x` renders as code instead of warning
toc_object_entries_show_parents = "hide"  # "fit()", not "LevyAttentionRegressor.fit()"
pygments_style = "sphinx"

# -- autodoc / autosummary / numpydoc -----------------------------------------------------------

autosummary_generate = True  # stubs go to docs/generated/ (the :toctree: of api.rst)
autosummary_imported_members = False
autodoc_typehints = "none"  # types are in the numpydoc "Parameters" sections
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "inherited-members": False}

numpydoc_show_class_members = False  # autosummary's class template lists members instead
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_validation_checks: set[str] = set()

# Only consulted by nitpicky builds (-n): base classes from packages without intersphinx.
nitpick_ignore = [
    ("py:class", "Module"),
    ("py:class", "torch.nn.modules.module.Module"),
    ("py:class", "skorch.net.NeuralNet"),
]


def _skip_member(app, what, name, obj, skip, options):
    """Leave two kinds of generated members out of the class pages.

    * NamedTuple fields carry the docstring "Alias for field number N"; their meaning is in
      the class's "Attributes" section already.
    * scikit-learn's metadata-routing setters (``set_fit_request`` and the like) are made for
      every estimator; their docstrings point into scikit-learn's own documentation.
    """
    doc = getattr(obj, "__doc__", None) or ""
    if what == "class" and doc.startswith("Alias for field number"):
        return True
    if what == "class" and re.fullmatch(r"set_\w+_request", name):
        return True
    return skip


# -- intersphinx: off by default (the build machines have no network) ---------------------------

intersphinx_mapping: dict[str, tuple[str, str | None]] = {}
if os.environ.get("LEVY_DOCS_INTERSPHINX") == "1":
    intersphinx_mapping = {
        "python": ("https://docs.python.org/3", None),
        "numpy": ("https://numpy.org/doc/stable", None),
        "pandas": ("https://pandas.pydata.org/docs", None),
        "sklearn": ("https://scikit-learn.org/stable", None),
        "sktime": ("https://www.sktime.net/en/stable", None),
        "torch": ("https://docs.pytorch.org/docs/stable", None),
    }
intersphinx_disabled_reftypes = ["*"]  # only explicit "name:target" roles may use a mapping

# -- MathJax ------------------------------------------------------------------------------------

if os.environ.get("LEVY_DOCS_MATHJAX_PATH"):
    mathjax_path = os.environ["LEVY_DOCS_MATHJAX_PATH"]

# -- sphinx-gallery -----------------------------------------------------------------------------


def _gallery_source() -> str:
    """``../examples`` once it has a gallery header; a docs-local placeholder until then.

    Falling back silently would hide real examples, so ``examples/`` with Python files but no
    header is an error that says what to add.
    """
    if any((EXAMPLES / h).is_file() for h in GALLERY_HEADERS):
        if EXAMPLES.is_relative_to(ROOT):
            return os.path.relpath(EXAMPLES, DOCS)
        return str(EXAMPLES)
    if EXAMPLES.is_dir() and any(EXAMPLES.rglob("*.py")):
        raise ConfigError(
            "examples/ contains Python files but no gallery header; sphinx-gallery needs "
            "examples/GALLERY_HEADER.rst (see docs/_gallery_placeholder/GALLERY_HEADER.rst "
            "for the expected form: a title and a short introduction)."
        )
    return os.path.relpath(GALLERY_PLACEHOLDER, DOCS)


sphinx_gallery_conf = {
    "examples_dirs": _gallery_source(),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",  # only plot_*.py are executed; others are shown as code
    "ignore_pattern": r"__init__\.py",
    "download_all_examples": False,
    "plot_gallery": "True",
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "reset_modules": ("matplotlib",),
    # The execution-times pages load jQuery/DataTables from CDNs: keep the site asset-local.
    "write_computation_times": False,
    "show_memory": False,
    "show_signature": False,
    "line_numbers": False,
    "default_thumb_file": None,
    "thumbnail_size": (400, 280),
    "within_subsection_order": "FileNameSortKey",
}

# -- HTML ---------------------------------------------------------------------------------------

html_theme = "pydata_sphinx_theme"
html_title = f"levy-sklearn {release}"
html_short_title = "levy-sklearn"
html_static_path = ["_static"]
html_last_updated_fmt = None
html_show_sourcelink = False
html_copy_source = False
html_theme_options = {
    "navbar_align": "left",
    "navbar_end": ["theme-switcher", "navbar-icon-links"],
    "icon_links": [],  # no remote icons or links
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "show_prev_next": True,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
    "secondary_sidebar_items": ["page-toc"],
    "use_edit_page_button": False,
}
html_sidebars = {
    "index": [],
    "install": [],
    "quickstart": [],
    "faq": [],
    "benchmarks": [],
}
html_context = {"default_mode": "light"}


def setup(app):
    app.connect("autodoc-skip-member", _skip_member)
