"""Turn ``benchmarks/results/*.md`` into reStructuredText snippets for ``benchmarks.rst``.

Run by ``docs/conf.py`` at the start of every build (myst is not a docs dependency, so the
benchmark scripts' Markdown is converted here instead of parsed). Also runnable by hand::

    python docs/_scripts/convert_results.py [results_dir] [output_dir]

For every ``<name>.md`` it writes ``<name>.rst.inc`` into the output folder (default
``docs/_generated_results/``), and ``index.rst.inc`` that includes them all, or a note when
there are none. The ``.inc`` suffix keeps Sphinx from reading the snippets as pages.

Only the Markdown the benchmark scripts write is understood, robustly:

* ``#`` / ``##`` / ``###`` headings become reST sections (below the page's own title);
* pipe tables (a header row, a ``|---|`` separator, body rows) become ``csv-table``
  directives; short rows are padded, long rows are cut to the header's width;
* list items (``-``, ``*``, ``+``, ``1.``) become bullet items, one line each;
* paragraphs are kept; inline ``code``, ``**bold**``, ``*italic*`` and ``[text](url)`` links
  are translated, every other character that means something to reST is escaped.
"""

from __future__ import annotations

import csv
import io
import re
import sys
import unicodedata
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1]
DEFAULT_RESULTS = DOCS.parent / "benchmarks" / "results"
DEFAULT_OUT = DOCS / "_generated_results"
# Markdown heading depth -> reST underline; the including page uses "=" for its title.
_UNDERLINES = {1: "-", 2: "~", 3: "^"}
_INLINE = re.compile(
    r"(?P<code>`+)(?P<code_text>.+?)(?P=code)"
    r"|\*\*(?P<bold>[^*]+?)\*\*"
    r"|(?<![\w*])\*(?P<em>[^*\s][^*]*?)\*(?![\w*])"
    r"|\[(?P<link_text>[^\]]+)\]\((?P<link_url>[^)\s]+)\)"
)
_RST_SPECIAL = re.compile(r"([\\`*_|<>\[\]])")
_MD_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>])")


def _escape(text: str) -> str:
    """Plain Markdown text -> reST text that renders the same characters."""
    text = _MD_ESCAPE.sub(r"\1", text)  # Markdown's own backslash escapes: \| -> |
    return _RST_SPECIAL.sub(r"\\\1", text)


def inline(text: str) -> str:
    """Markdown inline markup -> reST inline markup; everything else escaped."""
    out, pos = [], 0
    for m in _INLINE.finditer(text):
        out.append(_escape(text[pos : m.start()]))
        if m.group("code") is not None:
            code = m.group("code_text").strip()
            # ``x`` cannot hold a backquote pair; fall back to an escaped plain rendering.
            markup = f"``{code}``" if "``" not in code else _escape(code)
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


def _csv_table(header: list[str], body: list[list[str]]) -> list[str]:
    width = len(header)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_ALL)
    for row in [header, *body]:
        row = (row + [""] * width)[:width]
        writer.writerow([inline(c) for c in row])
    # A table needs a body row: a header without rows is shown as a plain row.
    lines = [".. csv-table::", f"   :header-rows: {1 if body else 0}", ""]
    lines += [f"   {line}" for line in buf.getvalue().splitlines()]
    return [*lines, ""]


def _display_width(text: str) -> int:
    """Columns a title takes (wide East Asian characters count twice), for its underline."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def markdown_to_rst(md: str) -> str:
    """Convert the small Markdown subset described in the module docstring."""
    lines = md.splitlines()
    out: list[str] = []
    para: list[str] = []

    def flush() -> None:
        if para:
            out.extend([inline(" ".join(para)), ""])
            para.clear()

    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        heading = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if heading:
            flush()
            title = inline(heading.group(2)) or "Results"
            level = min(len(heading.group(1)), max(_UNDERLINES))
            out.extend([title, _UNDERLINES[level] * max(_display_width(title), 4), ""])
            i += 1
        elif line.lstrip().startswith("|") and i + 1 < len(lines) and _is_separator(lines[i + 1]):
            flush()
            header = _cells(line)
            body = []
            i += 2
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                body.append(_cells(lines[i]))
                i += 1
            out.extend(_csv_table(header, body))
        elif re.match(r"^\s*(?:[-*+]|\d+[.)])\s+\S", line):
            flush()
            while i < len(lines) and re.match(r"^\s*(?:[-*+]|\d+[.)])\s+\S", lines[i]):
                item = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", lines[i].rstrip())
                out.append(f"- {inline(item)}")
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


def main(results_dir: Path = DEFAULT_RESULTS, out_dir: Path = DEFAULT_OUT) -> list[Path]:
    results_dir, out_dir = Path(results_dir), Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in out_dir.glob("*.rst.inc"):
        stale.unlink()
    sources = sorted(results_dir.glob("*.md")) if results_dir.is_dir() else []
    written = []
    for src in sources:
        dst = out_dir / f"{src.stem}.rst.inc"
        header = f".. Generated from benchmarks/results/{src.name} by convert_results.py.\n\n"
        dst.write_text(header + markdown_to_rst(src.read_text(encoding="utf-8")), "utf-8")
        written.append(dst)
    if written:
        # "/" = relative to the Sphinx source folder (docs/), wherever the includer lives.
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
