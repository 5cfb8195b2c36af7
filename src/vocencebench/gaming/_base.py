"""What every attack of the catalogue is: a TTS system wrapping an honest *base* system.

:class:`Attack` names the attack and its parameters in its ``system_id`` (so caches never
mix two settings); :class:`TransformAttack` edits the base's clip (numpy DSP on the decoded
samples, float on −1…1) and :class:`RerenderAttack` asks the base for another
``(text, instruction)``. The attacks themselves are :mod:`vocencebench.gaming.attacks`.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..adapters import synthesize_item, system_id
from ..errors import SynthesisError
from ..schema import Item

__all__ = ["Attack", "FloatArray", "RerenderAttack", "TransformAttack"]

#: Samples of a decoded clip: float64 on −1…1.
FloatArray = npt.NDArray[np.float64]


def _decode(wav: bytes) -> tuple[FloatArray, int]:
    from ..audio import load_audio

    audio = load_audio(wav, name="attack base clip")
    return np.asarray(audio.samples, dtype=np.float64), audio.sample_rate


def _encode(x: FloatArray, rate: int) -> bytes:
    from ..audio import to_wav_bytes

    return to_wav_bytes(x, rate)


def _adhoc_item(text: str, instruction: str) -> Item:
    """An item for a bare ``(text, instruction)`` call: traits parsed from the instruction."""
    from ..instruction import parse_instruction

    return Item(id="adhoc", instruction=instruction, text=text,
                traits=dict(parse_instruction(instruction)), difficulty=0)


def _params_id(params: Mapping[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in params.items())


# ----------------------------------------------------------------------------- base classes


class Attack(abc.ABC):
    """A documented transformation of ``base``. Subclasses set ``name`` and implement
    :meth:`synthesize_item`; ``params`` (name → value) go into :attr:`system_id`."""

    name: str = "attack"

    def __init__(self, base: Callable[[str, str], bytes], **params: Any) -> None:
        self.base = base
        self.params: dict[str, Any] = dict(params)
        self.system_id = f"redteam/{self.name}({_params_id(self.params)})<{system_id(base)}>"

    @abc.abstractmethod
    def synthesize_item(self, item: Item) -> bytes:
        """The attacker's clip for ``item`` (WAV bytes)."""

    def __call__(self, text: str, instruction: str) -> bytes:
        return self.synthesize_item(_adhoc_item(text, instruction))

    def spoken_text(self, item: Item) -> str | None:
        """The words this attack's clip for ``item`` says (None: no speech at all)."""
        return item.text

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.system_id}>"


class TransformAttack(Attack):
    """An attack that edits the base's clip. :meth:`applies` says which requests it targets;
    the others get the base clip unchanged (the same bytes)."""

    def applies(self, item: Item) -> bool:
        return True

    @abc.abstractmethod
    def transform(self, x: FloatArray, rate: int, item: Item) -> FloatArray:
        """The edited samples (float, −1…1) of the base clip ``x`` at ``rate`` Hz."""

    def synthesize_item(self, item: Item) -> bytes:
        wav = synthesize_item(self.base, item)
        if not self.applies(item):
            return wav
        x, rate = _decode(wav)
        return _encode(self.transform(x, rate, item), rate)


class RerenderAttack(Attack):
    """An attack that asks the base for another ``(text, instruction)``: :meth:`rewrite`."""

    @abc.abstractmethod
    def rewrite(self, text: str, instruction: str) -> tuple[str, str]:
        """The ``(text, instruction)`` the base is asked for instead."""

    def synthesize_item(self, item: Item) -> bytes:
        text, instruction = self.rewrite(item.text, item.instruction)
        return synthesize_item(self.base, Item(
            id=item.id, instruction=instruction, text=text,
            traits=dict(item.traits), difficulty=item.difficulty, category=item.category))

    def __call__(self, text: str, instruction: str) -> bytes:
        return bytes(self.base(*self.rewrite(text, instruction)))

    def synthesize_many(self, requests: Sequence[tuple[str, str]], *,
                        workers: int | None = None) -> list[bytes | Exception]:
        """Batched: the rewritten requests go to the base's own ``synthesize_many``."""
        rewritten: list[tuple[str, str]] = []
        out: list[bytes | Exception | None] = [None] * len(requests)
        slots: list[int] = []
        for i, (text, instruction) in enumerate(requests):
            try:
                rewritten.append(self.rewrite(text, instruction))
                slots.append(i)
            except Exception as exc:  # the item fails, not the batch
                out[i] = SynthesisError(f"{self.name} could not rewrite the request: {exc}")
        many = getattr(self.base, "synthesize_many", None)
        if many is not None:
            results: list[bytes | Exception] = list(many(rewritten))
        else:
            results = []
            for req in rewritten:
                try:
                    results.append(bytes(self.base(*req)))
                except Exception as exc:  # a user's system may raise anything
                    results.append(SynthesisError(f"{system_id(self.base)}: {exc}"))
        for i, res in zip(slots, results, strict=True):
            out[i] = res
        return [r if r is not None else SynthesisError("internal: not rendered") for r in out]

    def spoken_text(self, item: Item) -> str | None:
        return self.rewrite(item.text, item.instruction)[0]
