"""Sphinx extension of the sksparsemax docs: benchmark results, guarded includes.

``benchmarks/`` (written by other parts of the project) leaves Markdown
reports in ``benchmarks/results/*.md`` (tables, images, short paragraphs).
The performance page must build whether or not they exist, and Sphinx has no
Markdown parser here (no myst-parser dependency). So at ``builder-inited``
this extension converts whatever reports exist into reStructuredText, written
to ``docs/generated/benchmark_results.txt`` (a ``.txt`` file: not a source
document of its own), which ``performance.rst`` pulls in with ``.. include::``.
A missing or empty results folder gives a short note instead. Reports that
another page already shows (any page that names
``benchmarks/results/<name>.<ext>``, e.g. the paper reproductions) are left
out of the performance page.

It also adds the directive ``if-exists``: its content is parsed only if the
file named in its argument exists (relative to the document, as for
``include``), otherwise a note says the file has not been generated yet. Pages
that show generated files (``.. include::``, ``.. image::``) wrap them in it,
so that a fresh checkout builds with ``-W``::

    .. if-exists:: ../benchmarks/results/multilabel.rst

       .. include:: ../benchmarks/results/multilabel.rst

The converter understands the Markdown the benchmarks write: ATX headings
(rendered as rubrics, so they never clash with the page's section levels),
pipe tables (``list-table``), fenced code blocks, bullet lists, images and
links, inline code and bold text. Everything else is escaped, so a stray
``*`` or ``_`` cannot become a reST warning under ``-W``.
"""

import os
import re
from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective
from sphinx.util.parsing import nested_parse_to_nodes

__all__ = ["IfExists", "markdown_to_rst", "render_results", "setup"]

_TABLE_SEP = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_IMAGE = re.compile(r"^!\[([^\]]*)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)\s*$")
_BULLET = re.compile(r"^\s*[-*+]\s+(.*)$")
_INLINE = re.compile(
    r"(?P<code>`+)(?P<code_text>.+?)(?P=code)"
    r"|\*\*(?P<bold>[^*]+?)\*\*"
    r"|!?\[(?P<link_text>[^\]]+)\]\((?P<link_url>[^)\s]+)\)"
)
_SPECIAL = re.compile(r"([\\`*_|<>\[\]])")


def _escape(text):
    return _SPECIAL.sub(r"\\\1", text)


def _inline(text):
    """Markdown inline markup of one line to reST, everything else escaped."""
    out = []
    pos = 0
    for match in _INLINE.finditer(text):
        before = text[pos : match.start()]
        after = text[match.end() : match.end() + 1]
        out.append(_escape(before))
        if match.group("code"):
            code = match.group("code_text").strip()
            piece = f":literal:`{_escape(code)}`" if code else ""
        elif match.group("bold") is not None:
            piece = f":strong:`{_escape(match.group('bold'))}`"
        else:
            label = _escape(match.group("link_text"))
            url = match.group("link_url")
            piece = f"`{label} <{url}>`__" if re.match(r"^[a-z]+://", url) else label
        if piece and (piece.endswith("`") or piece.endswith("`__")):
            # Inline markup must be delimited by whitespace or punctuation:
            # an escaped space (rendered as nothing) separates it from words.
            joined = "".join(out)
            if joined and not joined[-1].isspace():
                piece = "\\ " + piece
            if after and not after.isspace():
                piece = piece + "\\ "
        out.append(piece)
        pos = match.end()
    out.append(_escape(text[pos:]))
    return "".join(out)


def _split_row(line):
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    cells = re.split(r"(?<!\\)\|", line)
    return [cell.strip().replace("\\|", "|") for cell in cells]


def _table(rows):
    header, body = rows[0], rows[1:]
    width = max(len(r) for r in rows)
    lines = [".. list-table::", "   :header-rows: 1", ""]
    for row in [header, *body]:
        row = row + [""] * (width - len(row))
        for j, cell in enumerate(row):
            prefix = "   * - " if j == 0 else "     - "
            lines.append(prefix + (_inline(cell) or "\\ "))
    return lines + [""]


def markdown_to_rst(text, image_dir=None):
    """Convert one Markdown report to reStructuredText.

    Parameters
    ----------
    text : str
        The Markdown source.
    image_dir : str, optional
        Folder that relative image paths are relative to (written as is into
        the ``image`` directives; pass a path relative to the document that
        includes the result). None keeps the paths unchanged.

    Returns
    -------
    rst : str
        reStructuredText that builds without warnings.
    """
    lines = text.replace("\r\n", "\n").split("\n")
    out = []
    i = 0
    paragraph = []

    def flush():
        if paragraph:
            out.extend([" ".join(_inline(p) for p in paragraph), ""])
            paragraph.clear()

    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped:
            flush()
            i += 1
            continue
        if stripped.startswith("```") or stripped.startswith("~~~"):
            flush()
            fence = stripped[:3]
            language = stripped[3:].strip() or "text"
            block = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(fence):
                block.append(lines[i])
                i += 1
            i += 1
            language = re.sub(r"[^\w+-]", "", language) or "text"
            out.extend([f".. code-block:: {language}", ""])
            out.extend("   " + b if b.strip() else "" for b in block)
            out.append("")
            continue
        heading = _HEADING.match(stripped)
        if heading:
            flush()
            out.extend([f".. rubric:: {_inline(heading.group(2))}", ""])
            i += 1
            continue
        if (
            stripped.startswith("|") or "|" in stripped
        ) and i + 1 < len(lines) and _TABLE_SEP.match(lines[i + 1].strip()):
            flush()
            rows = [_split_row(stripped)]
            i += 2
            while i < len(lines) and lines[i].strip() and "|" in lines[i]:
                rows.append(_split_row(lines[i]))
                i += 1
            out.extend(_table(rows))
            continue
        image = _IMAGE.match(stripped)
        if image:
            flush()
            path = image.group(2)
            if image_dir is not None and not re.match(r"^[a-z]+://", path):
                path = f"{image_dir.rstrip('/')}/{path}"
            out.extend([f".. image:: {path}", f"   :alt: {image.group(1) or 'figure'}", ""])
            i += 1
            continue
        bullet = _BULLET.match(line)
        if bullet and not stripped.startswith("**"):
            flush()
            while i < len(lines) and _BULLET.match(lines[i]):
                out.append("- " + _inline(_BULLET.match(lines[i]).group(1)))
                i += 1
            out.append("")
            continue
        if stripped.startswith(">"):
            stripped = stripped.lstrip("> ")
        paragraph.append(stripped)
        i += 1
    flush()
    return "\n".join(out).rstrip() + "\n"


def render_results(results_dir, relative_to, exclude=()):
    """reST for every ``*.md`` report (and stray figure) in ``results_dir``.

    Parameters
    ----------
    results_dir : str or path
        The benchmark results folder; it may be missing or empty.
    relative_to : str or path
        Folder of the document that includes the output (image paths are
        written relative to it).
    exclude : collection of str
        Report names (file stems) to leave out.

    Returns
    -------
    rst : str
        One subsection per report, with the file name as title; a note when
        there is nothing to show.
    """
    results_dir = Path(results_dir)
    reports = sorted(results_dir.glob("*.md")) if results_dir.is_dir() else []
    reports = [r for r in reports if r.stem not in set(exclude)]
    if not reports:
        return (
            ".. note::\n\n"
            "   No benchmark results were found in ``benchmarks/results/`` when\n"
            "   this page was built. Run the benchmarks (see ``benchmarks/``)\n"
            "   and rebuild the documentation to include them here.\n"
        )
    image_dir = os.path.relpath(results_dir, relative_to).replace(os.sep, "/")
    parts = []
    referenced = set()
    for report in reports:
        text = report.read_text(encoding="utf-8", errors="replace")
        referenced.update(re.findall(r"!\[[^\]]*\]\(([^)\s]+)", text))
        title = f"``{report.name}``"
        parts.append(f"{title}\n{'~' * len(title)}\n\n{markdown_to_rst(text, image_dir)}")
    figures = [
        p
        for p in sorted(results_dir.iterdir())
        if p.suffix.lower() in {".png", ".svg", ".jpg"}
        and p.name not in referenced
        and p.stem not in set(exclude)
    ]
    if figures:
        title = "Other figures"
        parts.append(f"{title}\n{'~' * len(title)}\n")
        for fig in figures:
            parts.append(f".. figure:: {image_dir}/{fig.name}\n\n   ``{fig.name}``\n")
    return "\n".join(parts)


def _shown_elsewhere(srcdir):
    """Report names that some page of the docs names explicitly."""
    names = set()
    for page in Path(srcdir).rglob("*.rst"):
        if "generated" in page.parts or "auto_examples" in page.parts:
            continue
        text = page.read_text(encoding="utf-8", errors="replace")
        names.update(re.findall(r"benchmarks/results/([\w.-]+?)\.\w+", text))
    return names


class IfExists(SphinxDirective):
    """Parse the content only if the file in the argument exists."""

    required_arguments = 1
    final_argument_whitespace = True
    has_content = True

    def run(self):
        _, path = self.env.relfn2path(self.arguments[0], self.env.docname)
        if Path(path).exists():
            # Section titles allowed: an included report may have its own.
            return nested_parse_to_nodes(
                self.state, self.content, offset=self.content_offset,
                allow_section_headings=True,
            )
        note = nodes.note()
        note += nodes.paragraph(
            text=f"{self.arguments[0]} has not been generated yet; it will appear "
            "here once the script that writes it has run."
        )
        return [note]


def _write_results(app):
    out_dir = Path(app.srcdir) / "generated"
    out_dir.mkdir(parents=True, exist_ok=True)
    rst = render_results(
        app.config.sksparsemax_benchmark_results,
        app.srcdir,
        exclude=_shown_elsewhere(app.srcdir),
    )
    target = out_dir / "benchmark_results.txt"
    if not target.exists() or target.read_text(encoding="utf-8") != rst:
        target.write_text(rst, encoding="utf-8")


def _drop_summary_table(app, what, name, obj, options, lines):
    """Drop the summary table of a subpackage's docstring on the API page.

    The API page follows each ``automodule`` with an autosummary table of the
    same objects: the docstring's own table (kept for ``help()``) would list
    every estimator and function a second time.
    """
    if what != "module" or not name.startswith("sksparsemax."):
        return
    borders = [i for i, line in enumerate(lines) if re.fullmatch(r"=+(\s+=+)+", line.strip())]
    if len(borders) >= 2:
        del lines[borders[0] : borders[1] + 1]


def setup(app):
    app.connect("autodoc-process-docstring", _drop_summary_table)
    app.add_config_value("sksparsemax_benchmark_results", "", "env")
    app.connect("builder-inited", _write_results)
    app.add_directive("if-exists", IfExists)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
