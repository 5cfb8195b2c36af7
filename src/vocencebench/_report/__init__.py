"""Sections of the run reports, one module each (private; rendered by :mod:`vocencebench.report`)."""
