"""Blind listening tests built from a saved run (``vocencebench listen``).

:func:`build_listening_test` writes a folder ``DIR`` from a run directory or one pair of a
leaderboard: a seeded stratified sample of items, each pair of clips in a seeded random
left/right order. ``DIR/page/`` is what the raters get: a self-contained page, its clips and
the test's data, nothing in it naming a system or saying which clip is whose. Only
``DIR/key.json`` says that; it is outside ``page/``, and the page never loads it. Raters answer
in the browser (keyboard first, answers kept per rater across reloads) and export a CSV of
left/right answers that ``vocencebench calibrate`` maps back with the key;
:func:`serve_listening_test` serves ``DIR/page`` on 127.0.0.1 and appends each answer, mapped
to the run's a/b, to its rater's file in ``DIR/labels/`` as it is given.

Modules: ``_build.py`` (sample and folder), ``_page.py`` (the page: HTML, CSS and script as
strings), ``_server.py`` (the 127.0.0.1 server and the append-only labels files).
"""

from __future__ import annotations

from .._util.human_labels import (
    EXPORT_COLUMNS,
    KEY_FILE,
    PAGE_DIR,
    ListeningKey,
    read_listening_key,
)
from ._build import (
    DEFAULT_QUESTIONS,
    QUESTIONS,
    ListeningTest,
    Trial,
    build_listening_test,
    load_source,
    stratified_sample,
)
from ._server import HOST, LABEL_COLUMNS, LabelsLog, serve_listening_test

__all__ = ["DEFAULT_QUESTIONS", "EXPORT_COLUMNS", "HOST", "KEY_FILE", "LABEL_COLUMNS",
           "PAGE_DIR", "QUESTIONS", "LabelsLog", "ListeningKey", "ListeningTest", "Trial",
           "build_listening_test", "load_source", "read_listening_key", "serve_listening_test",
           "stratified_sample"]
