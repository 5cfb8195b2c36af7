"""Blind listening tests built from a saved run (``vocencebench listen``).

:func:`build_listening_test` writes a self-contained folder (the page, its clips, the test's
data) from a run directory or one pair of a leaderboard: a seeded stratified sample of items,
each pair of clips in a seeded random left/right order, nothing in the folder naming a
system. Raters answer in the browser (keyboard first, answers kept across reloads) and export
exactly the CSV that ``vocencebench calibrate`` reads; :func:`serve_listening_test` serves
the folder on 127.0.0.1 and appends each answer to its rater's labels file as it is given.

Modules: ``_build.py`` (sample and folder), ``_page.py`` (the page: HTML, CSS and script as
strings), ``_server.py`` (the 127.0.0.1 server and the append-only labels files).
"""

from __future__ import annotations

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

__all__ = ["DEFAULT_QUESTIONS", "HOST", "LABEL_COLUMNS", "QUESTIONS", "LabelsLog",
           "ListeningTest", "Trial", "build_listening_test", "load_source",
           "serve_listening_test", "stratified_sample"]
