"""vocencebench: a reproducible, gaming-resistant benchmark for prompt-controllable TTS."""

from __future__ import annotations

__version__ = "0.1.0"
