"""The streaming run behind :func:`vocencebench.benchmark` (private).

``stages`` holds the typed units of work and the handles that ship components to workers,
``engine`` moves every item through them with bounded work in flight, and ``dask`` runs the
same units on a Dask cluster. Only :mod:`vocencebench.compare` and the leaderboard drive it.
"""
