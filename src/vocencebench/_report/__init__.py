"""Sections of the run reports, one module each (private; rendered by
:mod:`vocencebench.report`): ``listening.py`` (the clips), ``labels.py`` (human labels),
``escape.py`` (untrusted text made inert, one function per format)."""
