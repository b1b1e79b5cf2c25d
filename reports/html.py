"""The self-contained HTML report: ``render_html(result) -> str``, ``write_html(result, path)``.

One file: CSS inline, figures as inline SVG, no script, no external request (a
Content-Security-Policy meta tag forbids any), readable without JavaScript. Every piece of
user text goes through Jinja2 autoescaping; the only unescaped insertions are figure SVGs,
which :func:`judge_transfer_audit.presentation.figures.verify_svg` has checked for active content.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import jinja2
import markupsafe

from judge_transfer_audit.reports.context import build_context

TEMPLATES = Path(__file__).parent / "templates"


def breakable(name: Any) -> markupsafe.Markup:
    """A column name with a line-break opportunity after each underscore (``<wbr>``), so that a long
    header such as ``kappa_majority_ci_low`` wraps between its words on a narrow (printed) page."""
    return markupsafe.Markup("_<wbr>").join(markupsafe.escape(str(name)).split("_"))


class _TemplateCache(jinja2.FileSystemBytecodeCache):
    """Jinja's compiled-template cache (keyed by the template source's checksum, so an edited template is
    compiled afresh) that never fails a render: a cache directory that cannot be made, read or written
    only means the template is compiled again (~0.06 s of a re-render)."""

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except (OSError, ValueError, EOFError):
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().dump_bytecode(bucket)
        except OSError:
            pass


def _template_cache() -> jinja2.BytecodeCache | None:
    try:
        return _TemplateCache()  # a per-user directory under the system's temporary directory
    except OSError:
        return None


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True,  # every file, whatever its extension
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        bytecode_cache=_template_cache(),
    )
    env.filters["breakable"] = breakable
    return env


def render_html(result: Any) -> str:
    """Render an :class:`judge_transfer_audit.results.result.AuditResult` to one self-contained HTML document.

    Deterministic: the same result renders to the same bytes (figures use a fixed SVG hash
    salt and no timestamps; no date is shown).
    """
    return _environment().get_template("report.html.j2").render(**build_context(result))


def write_html(result: Any, path: str | Path, *, inputs=()) -> Path:
    """Render ``result`` and write it to ``path`` (UTF-8, atomically); returns the path written.

    ``inputs`` are files the write must never replace (e.g. the result.json read).
    """
    from judge_transfer_audit.core.output_files import write_file

    return write_file(path, render_html(result), inputs=inputs)
