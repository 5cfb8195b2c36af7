"""The pipeline's clip type, :class:`vocencebench.audio.Clip`: encoded bytes, their sha256,
the audio decoded once (on first use) and the 16-bit WAV a judge is sent. The pipeline
imports ``Clip`` from here only."""

from __future__ import annotations

from .audio import Clip

__all__ = ["Clip"]
