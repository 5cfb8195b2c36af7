"""The jobs behind :mod:`vocencebench.corpus`, one module each (private; import from
:mod:`vocencebench.corpus`).

``sampler`` (the balanced trait assignment), ``files`` (format, hash, pin, read, write, load),
``checks`` (item and corpus rules, the run gate), ``stats`` (coverage and balance), ``splits``
(held-out splits) and ``templates`` (the template corpus). No module here imports
:mod:`vocencebench.corpus`.
"""
