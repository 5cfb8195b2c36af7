"""The listening page: one HTML file with its CSS and script inline (shipped as
``assets/listen.css`` and ``assets/listen.js``), and the test's data in
a ``<script type="application/json">`` element (escaped by
:func:`~vocencebench._util.text.json_for_script`). The script writes every text with
``textContent`` (never ``innerHTML``), so an item's script or instruction stays inert, and
isolates it with ``dir="auto"`` + ``unicode-bidi: isolate``.

Keyboard (shown on the page): ``a`` / ``b`` play or pause clip A / B; ``←`` A is better,
``→`` B is better, ``↓`` or ``t`` tie, for the current question, which then moves on; ``↑``
goes back a question; ``0``–``3`` give the current question optional rubric scores (first
A, then B; before or after its answer); ``Enter``
or ``n`` next item, ``p`` previous; ``e`` exports the CSV. Answers live in ``localStorage``
under the test's id and the rater's name (a new name starts empty), so a reload or a closed
tab loses nothing; with ``--serve`` each answer is also sent to the server as it is given
(and kept queued in the browser until it is acknowledged). The page knows the clips only as
left and right: its data carries nothing that says which system made which, and its
answers (export and server alike) name the side.
"""

from __future__ import annotations

from importlib.resources import files

from .._util.text import html_attr_safe, html_safe, json_for_script

__all__ = ["render_page"]


def _asset(name: str) -> str:
    """A page asset shipped with the package (``assets/listen.css``, ``assets/listen.js``)."""
    return (files(__package__) / "assets" / name).read_text(encoding="utf-8")


def render_page(data: dict[str, object], *, title: str = "Blind listening test") -> str:
    """The page for the test ``data`` (``test``, ``questions``, ``trials``; see
    :func:`vocencebench.listen.build_listening_test`)."""
    keys = ("<kbd>a</kbd>/<kbd>b</kbd> play A/B · <kbd>←</kbd> A better · <kbd>→</kbd> B "
            "better · <kbd>↓</kbd> or <kbd>t</kbd> tie · <kbd>↑</kbd> previous question · "
            "<kbd>0</kbd>–<kbd>3</kbd> optional 0–3 scores of this question (A, then B) · "
            "<kbd>Enter</kbd>/"
            "<kbd>n</kbd> next item · <kbd>p</kbd> previous · <kbd>e</kbd> export")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="referrer" content="no-referrer">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; media-src 'self'; \
connect-src 'self'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src 'none'">
<title>{html_attr_safe(title)}</title><style>{_asset("listen.css")}</style></head><body>
<h1>{html_safe(title)}</h1>
<p class="muted">Two clips per item, A and B, in a random order that changes from item to
item. Listen to both, then answer each question. Nothing here says which system made which
clip.</p>
<div class="bar"><label>rater name <input id="rater" autocomplete="off"></label>
<span id="pos"></span><span id="done"></span><div class="progress"><div id="fill"></div></div>
</div>
<div class="keys">{keys}</div>
<div class="req"><p><b>Instruction:</b> <span id="instruction" class="txt" dir="auto"></span></p>
<p><b>Script:</b> <span id="script" class="txt" dir="auto"></span></p></div>
<div class="clips">
<div class="clip" id="clip-A"><h2>A</h2><audio id="audio-A" controls preload="auto"></audio>
<button id="play-A">play A (a)</button></div>
<div class="clip" id="clip-B"><h2>B</h2><audio id="audio-B" controls preload="auto"></audio>
<button id="play-B">play B (b)</button></div>
</div>
<div id="questions"></div>
<div class="bar"><button id="prev">← previous (p)</button><button id="next">next (Enter) →</button>
<button id="export">export CSV (e)</button><span id="mode" class="muted">answers are kept in
this browser; export them when you are done</span></div>
<p id="status" class="muted"></p>
<script type="application/json" id="vb-test">{json_for_script(data)}</script>
<script>{_asset("listen.js")}</script>
</body></html>
"""
