"""Infrastructure shared by every stage: HTTP with deadlines and retries, process hygiene,
worker start-up, Praat's seeded randomness, failure reasons, optional dependencies.

Private: nothing here is public API. These modules import only the foundations
(``errors``, ``redact``, ``constants``), never a stage above them.
"""
