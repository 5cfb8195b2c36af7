"""The pipeline's clip type is :class:`vocencebench.audio.Clip`; this module keeps the name the
pipeline imports (``from ._clip import Clip``)."""

from __future__ import annotations

from .audio import Clip

__all__ = ["Clip"]
