"""Untrusted text, made safe for where it is shown: a terminal, Markdown, HTML (private).

Every string that came from outside — a system's standard error, a server's or a judge's
answer, corpus text, a label, an item id, a transcript, a failure reason built from any of
these — goes through exactly one of these functions at the moment it is rendered:

======================  ===========================================================
:func:`terminal_safe`   printed to a terminal or into plain text (summaries, tables,
                        the CLI's lines): control characters are shown as escapes
:func:`markdown_safe`   one inline piece of Markdown (a table cell, a line of text)
:func:`markdown_block`  the body of a fenced code block (JSON metadata): newlines kept;
                        :func:`markdown_fenced` adds a fence no text inside can close
:func:`markdown_code`   an inline code span (a command line) no text inside can close
:func:`html_safe`       HTML element content; text with right-to-left characters or
                        bidirectional controls is isolated in ``<bdi>``
:func:`html_attr_safe`  an HTML attribute value (``title="..."``) or SVG text
:func:`json_for_script` JSON inside ``<script type="application/json">`` (a page whose
                        script writes each text with ``textContent`` only)
======================  ===========================================================

What "control characters" means here (:data:`UNSAFE`): C0 (U+0000–U+001F: ESC, BEL, CR,
LF, TAB, …), DEL, C1 (U+0080–U+009F, which some terminals read as CSI and OSC), the line and
paragraph separators, lone surrogates, and the bidirectional formatting characters (U+202A–
U+202E embeddings and overrides, U+2066–U+2069 isolates, U+200E/U+200F/U+061C marks) with
which "Trojan Source" text is laid out in another order than it is stored, and the invisible
characters that make two different words look the same (soft hyphen U+00AD, zero-width space
U+200B, word joiner and invisible operators U+2060–U+2064, BOM U+FEFF; the zero-width
joiners U+200C/U+200D are left alone: emoji and several scripts need them). Each is replaced
by a visible escape, ``\\n``, ``\\r``, ``\\t``, ``\\x1b``, ``\\u202e``, so an OSC title
sequence (``\\x1b]0;PWNED\\x07``) or a screen clear (``\\x1b[2J``) is shown, never obeyed. The
``\\u`` + four hex digits form (``\\u202e``) is also a valid JSON string escape, so
escaping inside a JSON text keeps it the same JSON. Everything else — accents, CJK,
emoji — passes unchanged.

Adopting them in a new renderer (a report section, a command's printout): build the text
from escaped pieces — ``f"| {markdown_safe(label)} | {x:.3f} |"`` — and never escape a whole
already-assembled page (that would escape your own markup and newlines too).
"""

from __future__ import annotations

import html
import json
import re
import unicodedata

__all__ = ["UNSAFE", "escape_controls", "html_attr_safe", "html_safe", "json_for_script",
           "markdown_block",
           "markdown_code", "markdown_fenced", "markdown_safe", "terminal_safe"]

#: Every character the helpers replace with a visible escape (a regular-expression class).
UNSAFE = ("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff"
          "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
          "\u00ad\u200b\u2060-\u2064\ufeff]")
_UNSAFE = re.compile(UNSAFE)
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# Bidirectional classes that make a run of text lay out right to left, or that are explicit
# embeddings, overrides and isolates: such text is isolated in HTML.
_RTL_CLASSES = frozenset({"R", "AL", "RLE", "RLO", "LRE", "LRO", "PDF", "RLI", "LRI", "FSI",
                          "PDI"})
# Markdown: "&" and "<" open raw HTML or entities, "|" ends a table cell, "[" and "]" make
# a link or an image (a lone ">" as in "LCB > margin" is text).
_MARKDOWN = str.maketrans({"&": "&amp;", "<": "&lt;", "|": "\\|", "[": "\\[", "]": "\\]"})


def _escape(m: re.Match[str]) -> str:
    ch = m.group()
    short = _SHORT.get(ch)
    if short is not None:
        return short
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}"


def escape_controls(text: object, *, keep: str = "") -> str:
    """``text`` (any object, as ``str``) with every :data:`UNSAFE` character shown as an
    escape, except those in ``keep`` (e.g. ``"\\n"`` for a multi-line block)."""
    s = str(text)
    if not keep:
        return _UNSAFE.sub(_escape, s)
    return _UNSAFE.sub(lambda m: m.group() if m.group() in keep else _escape(m), s)


def terminal_safe(text: object) -> str:
    """``text`` for a terminal or a plain-text report: one line, every control character
    and bidirectional control shown as an escape (a newline as ``\\n``, so no forged line)."""
    return escape_controls(text)


def markdown_safe(text: object) -> str:
    """``text`` as one inert inline piece of Markdown: controls escaped as for the terminal,
    no raw HTML or entity (``&``, ``<``), no table break (``|``), no link or image
    (``[``, ``]``), one line."""
    return escape_controls(text).translate(_MARKDOWN)


def markdown_block(text: object) -> str:
    """``text`` as the body of a fenced code block: controls escaped, newlines kept (the
    caller chooses a fence longer than any run of backticks inside)."""
    return escape_controls(text, keep="\n")


def _fence_for(s: str, least: int) -> str:
    runs = re.findall("`+", s)
    return "`" * max(least, 1 + max((len(r) for r in runs), default=0))


def markdown_fenced(text: object, info: str = "") -> str:
    """``text`` as a fenced code block (``info``: its language, e.g. ``json``): the body
    through :func:`markdown_block`, inside a fence longer than any run of backticks in it."""
    body = markdown_block(text)
    fence = _fence_for(body, 3)
    return f"{fence}{info}\n{body}\n{fence}"


def markdown_code(text: object) -> str:
    """``text`` as an inline code span: controls escaped, one line, delimited by more
    backticks than any run inside (padded with spaces when it starts or ends with one)."""
    body = escape_controls(text)
    fence = _fence_for(body, 1)
    pad = " " if body.startswith("`") or body.endswith("`") else ""
    return f"{fence}{pad}{body}{pad}{fence}"


def _needs_isolation(s: str) -> bool:
    return not s.isascii() and any(unicodedata.bidirectional(c) in _RTL_CLASSES for c in s)


def html_safe(text: object, *, multiline: bool = True, isolate: bool = True) -> str:
    """``text`` as HTML element content: ``html.escape``, controls shown as escapes (newlines
    and tabs kept with ``multiline``), and — with ``isolate`` — wrapped in ``<bdi>`` when it
    holds right-to-left letters or bidirectional controls, so it cannot reorder the text
    around it. Not for attribute values or SVG (``<bdi>`` is HTML): :func:`html_attr_safe`."""
    s = str(text)
    shown = html.escape(escape_controls(s, keep="\n\t" if multiline else ""))
    return f"<bdi>{shown}</bdi>" if isolate and _needs_isolation(s) else shown


def html_attr_safe(text: object) -> str:
    """``text`` as an HTML attribute value or SVG text: ``html.escape`` (quotes too) and
    every control character shown as an escape."""
    return html.escape(escape_controls(text), quote=True)


def json_for_script(value: object) -> str:
    """``value`` as JSON that cannot end or break out of the script element holding it:
    ``&``, ``<``, ``>`` and the JavaScript line separators as ``\\u`` escapes (the same JSON)."""
    out = json.dumps(value, ensure_ascii=False, sort_keys=True, allow_nan=False)
    return (out.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
