"""Command modules of the ``vocencebench`` CLI; each exposes ``register(subparsers)``."""
