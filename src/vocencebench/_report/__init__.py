"""Sections of the run reports, one module each (private; rendered by
:mod:`vocencebench.report`): ``listening.py`` (the clips), ``labels.py`` (human labels),
``gate.py`` (the intelligibility gate), ``judge.py`` (the judge's behaviour),
``robustness.py`` (the verdict's robustness). Untrusted text in each goes through
:mod:`vocencebench._util.text`, one function per format."""
