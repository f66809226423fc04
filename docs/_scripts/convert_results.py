"""Turn ``benchmarks/results/*.md`` into reStructuredText snippets for ``benchmarks.rst``.

Run by ``docs/conf.py`` at the start of every build (myst is not a docs dependency, so the
benchmark scripts' Markdown is converted here instead of parsed). Also runnable by hand::

    python docs/_scripts/convert_results.py [results_dir] [output_dir]

For every ``<name>.md`` it writes ``<name>.rst.inc`` into the output folder (default
``docs/_generated_results/``), and ``index.rst.inc`` that includes them all in file-name
order, or a note when there are none. A new results file therefore appears on the page
without any edit to the docs. The ``.inc`` suffix keeps Sphinx from reading the snippets as
pages.

Only the Markdown the benchmark scripts write is understood, robustly:

* ``#`` to ``######`` headings become reST sections (below the page's own title). Each file
  is a section of its own: its headings are renumbered so that levels never skip, and a file
  that does not start with a heading gets one from its file name;
* pipe tables (a header row, a ``|---|`` separator, body rows) become ``csv-table``
  directives; short rows are padded, long rows are cut to the header's width;
* images (``![alt](plot.png)``, a path relative to the Markdown file) are copied into
  ``<output_dir>/figures/`` and shown as figures when they stand on a line of their own, as
  links elsewhere; a missing image becomes a visible note instead of a broken build, and a
  remote one a link (the site loads nothing from the network);
* fenced code blocks become literal blocks; HTML comments are dropped;
* list items (``-``, ``*``, ``+``, ``1.``) become bullet items, one line each;
* paragraphs are kept; inline ``code``, ``**bold**``, ``*italic*`` and ``[text](url)`` links
  are translated, every other character that means something to reST is escaped.
"""

from __future__ import annotations

import csv
import io
import re
import shutil
import sys
import unicodedata
from collections.abc import Callable
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1]
DEFAULT_RESULTS = DOCS.parent / "benchmarks" / "results"
DEFAULT_OUT = DOCS / "_generated_results"
FIGURES = "figures"
# reST underline of each section level below the including page's "=" title.
_UNDERLINES = ("-", "~", "^", '"', "'", "`")
_IMAGE = r"!\[(?P<{p}alt>[^\]]*)\]\((?P<{p}src>[^)\s]+)(?:\s+\"[^\"]*\")?\)"
_INLINE = re.compile(
    r"(?P<code>`+)(?P<code_text>.+?)(?P=code)"
    r"|" + _IMAGE.format(p="img_") + r"|\*\*(?P<bold>[^*]+?)\*\*"
    r"|(?<![\w*])\*(?P<em>[^*\s][^*]*?)\*(?![\w*])"
    r"|\[(?P<link_text>[^\]]+)\]\((?P<link_url>[^)\s]+)\)"
)
_IMAGE_LINE = re.compile(r"^\s*(?:" + _IMAGE.format(p="") + r"\s*)+$")
_IMAGE_ANY = re.compile(_IMAGE.format(p=""))
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\S")
_RST_SPECIAL = re.compile(r"([\\`*_|<>\[\]])")
_MD_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>])")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)

# Maps an image path as written in the Markdown to the reST path of the copied file, or to
# None when the file does not exist.
ImageResolver = Callable[[str], str | None]


def _is_remote(src: str) -> bool:
    return re.match(r"^[a-z][a-z0-9+.-]*://", src, re.IGNORECASE) is not None


def _not_a_list(rst: str) -> str:
    """Escape a leading ``(1)``, ``1.``, ``a)`` or ``-``, which reST would read as the start of
    a list inside a table cell, a paragraph or a list item."""
    if re.match(r"^(?:\(?(?:\d+|[a-zA-Z#])[.)]|[-*+•])(?:\s|$)", rst):
        return "\\" + rst
    return rst


def _escape(text: str) -> str:
    """Plain Markdown text -> reST text that renders the same characters."""
    text = _MD_ESCAPE.sub(r"\1", text)  # Markdown's own backslash escapes: \| -> |
    return _RST_SPECIAL.sub(r"\\\1", text)


def _inline_image(alt: str, src: str, resolve: ImageResolver) -> str:
    """An image inside text (a table cell, a list item): a link to it, or a note."""
    label = _escape(alt or Path(src).name)
    if _is_remote(src):
        return f"`{label} <{src}>`__"
    ref = resolve(src)
    if ref is None:
        return f"{label} (figure ``{src}`` missing)"
    return f":download:`{label} <{ref}>`"


def inline(text: str, resolve: ImageResolver = lambda src: None) -> str:
    """Markdown inline markup -> reST inline markup; everything else escaped."""
    out, pos = [], 0
    for m in _INLINE.finditer(text):
        out.append(_escape(text[pos : m.start()]))
        if m.group("code") is not None:
            code = m.group("code_text").strip()
            # ``x`` cannot hold a backquote pair; fall back to an escaped plain rendering.
            markup = f"``{code}``" if "``" not in code else _escape(code)
        elif m.group("img_src") is not None:
            markup = _inline_image(m.group("img_alt"), m.group("img_src"), resolve)
        elif m.group("bold") is not None:
            markup = f"**{_escape(m.group('bold'))}**"
        elif m.group("em") is not None:
            markup = f"*{_escape(m.group('em'))}*"
        else:
            label = _escape(m.group("link_text"))
            markup = f"`{label} <{m.group('link_url')}>`__"
        # reST inline markup must be separated from adjacent word characters; an escaped
        # space is an invisible separator.
        if m.start() > 0 and text[m.start() - 1].isalnum():
            markup = "\\ " + markup
        if m.end() < len(text) and text[m.end()].isalnum():
            markup = markup + "\\ "
        out.append(markup)
        pos = m.end()
    out.append(_escape(text[pos:]))
    return "".join(out)


def _cells(row: str) -> list[str]:
    row = row.strip()
    if row.startswith("|"):
        row = row[1:]
    if row.endswith("|") and not row.endswith("\\|"):
        row = row[:-1]
    parts = re.split(r"(?<!\\)\|", row)
    return [p.strip().replace("\\|", "|") for p in parts]


def _is_separator(row: str) -> bool:
    cells = _cells(row)
    return bool(cells) and all(re.fullmatch(r":?-{1,}:?", c) for c in cells)


def _csv_table(header: list[str], body: list[list[str]], resolve: ImageResolver) -> list[str]:
    width = len(header)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_ALL)
    for row in [header, *body]:
        row = (row + [""] * width)[:width]
        writer.writerow([_not_a_list(inline(c, resolve)) for c in row])
    # A table needs a body row: a header without rows is shown as a plain row.
    lines = [".. csv-table::", f"   :header-rows: {1 if body else 0}", ""]
    lines += [f"   {line}" for line in buf.getvalue().splitlines()]
    return [*lines, ""]


def _figures(line: str, resolve: ImageResolver) -> list[str]:
    """A line holding only images -> one figure (or link, or note) per image."""
    out = []
    for m in _IMAGE_ANY.finditer(line):
        alt, src = m.group("alt").strip(), m.group("src")
        ref = None if _is_remote(src) else resolve(src)
        if _is_remote(src):
            out += [f"`{_escape(alt or src)} <{src}>`__", ""]
        elif ref is None:
            out += [
                ".. note::",
                "",
                f"   The figure ``{src}`` is missing from ``benchmarks/results/``: rerun the",
                "   benchmark script that writes it.",
                "",
            ]
        else:
            out += [f".. figure:: {ref}", f"   :alt: {alt or Path(src).name}", ""]
            if alt:
                out += [f"   {inline(alt)}", ""]
    return out


def _code_block(lines: list[str], language: str) -> list[str]:
    """A fenced block -> a literal block (highlighted when Pygments knows the language)."""
    try:
        from pygments.lexers import get_lexer_by_name
        from pygments.util import ClassNotFound

        get_lexer_by_name(language)
    except (ImportError, ClassNotFound):
        language = "text"  # an unknown lexer name would be a build warning
    body = [f"   {line}" if line.strip() else "" for line in lines] or ["   "]
    return [f".. code-block:: {language}", "", *body, ""]


def _display_width(text: str) -> int:
    """Columns a title takes (wide East Asian characters count twice), for its underline."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def markdown_to_rst(
    md: str, title: str = "Results", resolve_image: ImageResolver = lambda src: None
) -> str:
    """Convert the small Markdown subset described in the module docstring.

    ``title`` heads the section when the Markdown does not start with a heading;
    ``resolve_image`` maps an image path to the path Sphinx should read it from (``None``
    when missing).
    """
    lines = _HTML_COMMENT.sub("", md).splitlines()
    out: list[str] = []
    para: list[str] = []
    level = 0  # level of the last heading: a new one may go at most one deeper

    def flush() -> None:
        if para:
            out.extend([_not_a_list(inline(" ".join(para), resolve_image)), ""])
            para.clear()

    def heading(text: str, depth: int) -> None:
        nonlocal level
        level = min(depth, level + 1, len(_UNDERLINES))
        text = inline(text, resolve_image) or "Results"
        out.extend([text, _UNDERLINES[level - 1] * max(_display_width(text), 4), ""])

    # The file's shallowest heading becomes its section; a file that starts with text gets
    # a section titled after it, and its own headings go below that.
    depths = [len(m.group(1)) for m in map(re.compile(r"^(#{1,6})\s").match, lines) if m]
    first = next((line for line in lines if line.strip()), "")
    shift = min(depths, default=1) - 1
    if not re.match(r"^#{1,6}\s", first):
        heading(title, 1)
        shift -= 1
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        head = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        fence = _FENCE.match(line)
        if head:
            flush()
            heading(head.group(2), len(head.group(1)) - shift)
            i += 1
        elif fence:
            flush()
            marker = fence.group(1)
            language = line.strip()[len(marker) :].strip().split(" ")[0] or "text"
            body = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(marker):
                body.append(lines[i].rstrip())
                i += 1
            i += 1  # the closing fence (or the end of the file)
            out.extend(_code_block(body, language))
        elif _IMAGE_LINE.match(line):
            flush()
            out.extend(_figures(line, resolve_image))
            i += 1
        elif line.lstrip().startswith("|") and i + 1 < len(lines) and _is_separator(lines[i + 1]):
            flush()
            header = _cells(line)
            body = []
            i += 2
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                body.append(_cells(lines[i]))
                i += 1
            out.extend(_csv_table(header, body, resolve_image))
        elif _LIST_ITEM.match(line):
            flush()
            while i < len(lines) and _LIST_ITEM.match(lines[i]):
                item = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", lines[i].rstrip())
                out.append(f"- {_not_a_list(inline(item, resolve_image))}")
                i += 1
            out.append("")
        elif not line.strip():
            flush()
            i += 1
        else:
            para.append(line.strip())
            i += 1
    flush()
    return "\n".join(out).rstrip() + "\n"


def _image_resolver(src_file: Path, out_dir: Path) -> ImageResolver:
    """Copy the images one results file references into ``out_dir/figures/``."""
    results_dir = src_file.parent.resolve()

    def resolve(src: str) -> str | None:
        path = (results_dir / src).resolve()
        if not path.is_file():
            return None
        rel = path.relative_to(results_dir) if path.is_relative_to(results_dir) else path.name
        dst = out_dir / FIGURES / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, dst)
        # "/" = relative to the Sphinx source folder (docs/), wherever the includer lives.
        return f"/{out_dir.name}/{FIGURES}/{Path(rel).as_posix()}"

    return resolve


def main(results_dir: Path = DEFAULT_RESULTS, out_dir: Path = DEFAULT_OUT) -> list[Path]:
    results_dir, out_dir = Path(results_dir), Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in out_dir.glob("*.rst.inc"):
        stale.unlink()
    shutil.rmtree(out_dir / FIGURES, ignore_errors=True)
    sources = sorted(results_dir.glob("*.md")) if results_dir.is_dir() else []
    written = []
    for src in sources:
        dst = out_dir / f"{src.stem}.rst.inc"
        header = f".. Generated from benchmarks/results/{src.name} by convert_results.py.\n\n"
        rst = markdown_to_rst(
            src.read_text(encoding="utf-8"),
            title=src.stem.replace("_", " ").capitalize(),
            resolve_image=_image_resolver(src, out_dir),
        )
        dst.write_text(header + rst, "utf-8")
        written.append(dst)
    if written:
        body = "\n".join(f".. include:: /{out_dir.name}/{p.name}\n" for p in written)
    else:
        body = (
            ".. note::\n\n"
            "   No benchmark results are in this build: ``benchmarks/results/`` holds no\n"
            "   ``*.md`` file. Run ``make benchmarks`` (or a script in ``benchmarks/``) and\n"
            "   rebuild the documentation to show them here.\n"
        )
    index = out_dir / "index.rst.inc"
    index.write_text(".. Generated by convert_results.py.\n\n" + body, "utf-8")
    return [index, *written]


if __name__ == "__main__":
    args = [Path(a) for a in sys.argv[1:3]]
    for p in main(*args):
        print(p)
