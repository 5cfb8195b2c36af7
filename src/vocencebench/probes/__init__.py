"""Deterministic probes: objective traits measured on the waveform."""

from __future__ import annotations

from .base import Diagnostic, Probe, ProbeSet

__all__ = ["Diagnostic", "Probe", "ProbeSet"]
