"""Untrusted text (a corpus item's script and instruction, a transcript, a judge's reasoning)
made inert for the HTML pages: one function per format, used by every section that shows
such text and by the listening page.

* :func:`clean_text`: control characters (C0 but tab and newline, DEL, C1) become U+FFFD, so
  nothing invisible rings a terminal bell or hides in a cell;
* :func:`html_text`: :func:`clean_text`, then ``html.escape`` (``<``, ``>``, ``&`` and both
  quotes, so it is inert in an element and in a quoted attribute alike), wrapped in
  ``<bdi>``: a right-to-left override inside the text cannot reorder anything outside it;
* :func:`md_text`: :func:`clean_text`, then inert for Markdown (no raw HTML, no entity, no
  table break, one line), the rule of ``report.py``'s own Markdown;
* :func:`json_for_script`: JSON that is safe inside a ``<script type="application/json">``
  element (``<``, ``>``, ``&`` and the JavaScript line separators escaped), for pages whose
  script renders the text with ``textContent`` only.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

__all__ = ["clean_text", "html_text", "json_for_script", "md_text"]

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean_text(text: object) -> str:
    """``text`` as a string with every control character but tab and newline replaced by
    U+FFFD (bidi controls are left to the isolation of :func:`html_text`)."""
    return _CONTROL.sub("\ufffd", str(text))


def html_text(text: object) -> str:
    """``text`` escaped for HTML and isolated in ``<bdi>``."""
    return f"<bdi>{html.escape(clean_text(text))}</bdi>"


def json_for_script(value: Any) -> str:
    """``value`` as JSON that cannot end or break out of the script element holding it."""
    out = json.dumps(value, ensure_ascii=False, sort_keys=True, allow_nan=False)
    return (out.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def md_text(text: object) -> str:
    """``text`` inert in Markdown: ``&`` and ``<`` as entities (no raw HTML), ``|`` escaped
    (no table break), newlines as spaces."""
    out = clean_text(text).replace("&", "&amp;").replace("<", "&lt;")
    return out.replace("|", "\\|").replace("\n", " ")
