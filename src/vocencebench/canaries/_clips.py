"""The shipped canary clips (``datasets/canaries/``) and their manifest."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources

from ..errors import ConfigError

__all__ = ["CanaryClip", "canary_clips"]


@dataclass(frozen=True)
class CanaryClip:
    """One shipped reference clip and its known labels (from ``manifest.json``)."""

    key: str
    file: str
    sha256: str
    text: str
    kind: str
    gender: str
    age_group: str
    accent: str
    emotion: str
    speaker: str
    licence: str
    source: Mapping[str, str] = field(default_factory=dict)

    def read(self) -> bytes:
        """The clip's bytes, checked against the manifest's sha256."""
        data = resources.files("vocencebench").joinpath(
            f"datasets/canaries/{self.file}").read_bytes()
        got = hashlib.sha256(data).hexdigest()
        if got != self.sha256:
            raise ConfigError(f"canary clip {self.file} has sha256 {got[:12]}…, the manifest "
                              f"says {self.sha256[:12]}…; reinstall vocencebench")
        return data


@functools.cache
def canary_clips() -> tuple[CanaryClip, ...]:
    """The shipped canary clips, in manifest order."""
    text = resources.files("vocencebench").joinpath(
        "datasets/canaries/manifest.json").read_text(encoding="utf-8")
    data = json.loads(text)
    fields = ("key", "file", "sha256", "text", "kind", "gender", "age_group", "accent",
              "emotion", "speaker", "licence")
    return tuple(CanaryClip(**{k: c[k] for k in fields}, source=dict(c.get("source", {})))
                 for c in data["clips"])
