"""Classifier probes: age + gender, emotion and accent from pretrained speech models.

Three pinned checkpoints (see :data:`CLASSIFIER_MODELS`, the one table of model ids, commits,
label maps, licences and sample rates; ``docs/probes.md`` repeats it):

==============  ===============================================  ==========================
probe           model                                            traits
==============  ===============================================  ==========================
age_gender      audeering/wav2vec2-large-robust-24-ft-age-gender  age (years), gender
emotion         ehcalabres/wav2vec2-lg-xlsr-en-speech-emotion-…   emotion (8 classes)
accent          Jzuluaga/accent-id-commonaccent_ecapa             accent (16 → 5 of ours)
==============  ===============================================  ==========================

Weights are fetched on the user's machine by ``huggingface_hub`` at the pinned commit (or read
from a local folder: ``models={"emotion": "/path/to/dir"}``); offline without them, loading
fails at once with a :class:`~vocencebench.errors.ConfigError` that says what to download.
torch/transformers are imported only when a probe is built. ``device="auto"`` uses CUDA when
available. ``measure_batch`` runs padded batches (attention masks / relative lengths keep the
padding out of every statistic); ``measure`` is a batch of one.

Outputs are rounded (probabilities to 1e-6, ages to 0.01 year) so that the same clip gives the
same reported numbers whether it ran alone or in a padded batch (the raw floats differ in the
last bits, ~1e-6, between the two).
"""

from __future__ import annotations

import abc
import math
import os
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypedDict

import numpy as np

from .._numbers import is_whole_number
from .._util.deps import require
from ..decide import desirability
from ..errors import ConfigError, ProbeError
from ..schema import Item, ProbeResult
from ..traits import TRAITS, TraitRegistry
from ._audeering import GENDER_CLASSES
from ._checkpoints import (
    CLASSIFIER_MODELS,
    ClassifierModel,
    resolve_device,
    resolve_source,
    torch_module,
)
from .base import merge_results

if TYPE_CHECKING:
    from ..audio import Audio
    from .base import ProbeSet

__all__ = [
    "ACCENT_SCORE_SCALE",
    "CLASSIFIER_MODELS",
    "DEFAULT_BATCH_SIZE",
    "AccentProbe",
    "AgeGenderProbe",
    "ClassifierModel",
    "EmotionProbe",
    "classifier_probes",
    "measure_batch",
    "resolve_device",
]

#: Clips per forward pass in :meth:`measure_batch` (padded to the longest clip of the batch).
DEFAULT_BATCH_SIZE = 8
#: Scale s turning the accent model's cosine scores into probabilities, softmax(s·cos). 30 is
#: the scale of the additive-angular-margin loss the model was trained with.
ACCENT_SCORE_SCALE = 30.0
#: Reported probabilities are rounded to this many decimals; ages to 2 decimals (years).
_PROB_DECIMALS = 6
_AGE_DECIMALS = 2

# Other spellings some emotion checkpoints use for our values.
_EMOTION_ALIASES = {
    "anger": "angry", "fear": "fearful", "happiness": "happy", "joy": "happy",
    "sadness": "sad", "surprise": "surprised", "disgusted": "disgust",
}


def _r(x: float, nd: int = _PROB_DECIMALS) -> float:
    v = round(float(x), nd)
    return 0.0 if v == 0 else v  # no -0.0


def _by_label(labels: Sequence[str], values: Any) -> dict[str, float]:
    """``values`` (one per label, in order) by label, rounded (:func:`_r`)."""
    return {lab: _r(v) for lab, v in zip(labels, values, strict=True)}


def _categorical(trait: str, label: str, requested: str | None,
                 registry: TraitRegistry) -> float | None:
    """d for a categorical label; a label outside the vocabulary is a mismatch (0.0)."""
    if requested is None:
        return None
    if label not in registry.get(trait).values:
        return 0.0
    return desirability(trait, label, requested, registry=registry)


# --------------------------------------------------------------------------------------------
# The probe base
# --------------------------------------------------------------------------------------------


class _ClassifierProbe(abc.ABC):
    """Shared loading, batching and pickling for the three classifier probes."""

    name: str
    base_version: ClassVar[str]
    traits: tuple[str, ...]
    spec: ClassifierModel
    #: True when zero-padding a clip inside a batch leaves its outputs unchanged (masks keep
    #: padding out of every statistic); False → only equal-length clips share a batch.
    pad_invariant: ClassVar[bool] = True

    def __init__(
        self,
        *,
        source: str | os.PathLike[str] | None = None,
        revision: str | None = None,
        device: str = "auto",
        batch_size: int = DEFAULT_BATCH_SIZE,
        registry: TraitRegistry = TRAITS,
    ) -> None:
        if not is_whole_number(batch_size) or batch_size < 1:
            raise ConfigError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.batch_size = batch_size
        self.registry = registry
        self.device = resolve_device(device)
        self._source = resolve_source(self.spec, source, revision)
        #: ``base+tag``: the tag is the hub commit or the local folder's content digest.
        self.version = f"{self.base_version}+{self._source.tag}"
        self._model: Any = None
        self._load()

    # -- pickling: workers reload the weights instead of receiving them -----------------------
    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        for key in list(state):
            if key.startswith("_m_") or key == "_model":
                state[key] = None
        return state

    def _ensure(self) -> None:
        if self._model is None:
            self._load()

    @abc.abstractmethod
    def _load(self) -> None: ...

    @property
    def origin(self) -> str:
        """Where the weights came from: ``hub-id@commit`` or the local folder."""
        return self._source.origin

    # -- measuring ------------------------------------------------------------------------------
    def measure(self, audio: Audio, item: Item) -> dict[str, ProbeResult]:
        """Every trait of this probe measured on one clip, against ``item``'s request."""
        return self.measure_batch([audio], [item])[0]

    def measure_batch(self, audios: Sequence[Audio], items: Sequence[Item]
                      ) -> list[dict[str, ProbeResult]]:
        """One result dict per clip, in input order; clips run in padded batches of
        ``batch_size`` (sorted by length to keep padding small)."""
        if len(audios) != len(items):
            raise ConfigError(f"measure_batch: {len(audios)} clips but {len(items)} items")
        self._ensure()
        waves = [np.asarray(a.at_16k(), dtype=np.float32) for a in audios]
        order = sorted(range(len(waves)), key=lambda i: (waves[i].shape[0], i))
        raw: list[Any] = [None] * len(waves)
        step = self._batch_limit()
        batches: list[list[int]] = []
        for i in order:
            cur = batches[-1] if batches else None
            if (cur is None or len(cur) >= step
                    or (not self.pad_invariant and waves[i].shape[0] != waves[cur[0]].shape[0])):
                batches.append([i])
            else:
                cur.append(i)
        torch = torch_module()
        with torch.inference_mode():
            for idx in batches:
                try:
                    outs = self._infer([waves[i] for i in idx])
                except Exception as exc:
                    names = ", ".join(items[i].id for i in idx)
                    raise ProbeError(
                        f"{self.name}@{self.version} failed on {names}: "
                        f"{type(exc).__name__}: {exc}"
                    ) from exc
                for i, out in zip(idx, outs, strict=True):
                    raw[i] = out
        return [self._results(raw[i], items[i]) for i in range(len(items))]

    def _batch_limit(self) -> int:
        return self.batch_size

    @abc.abstractmethod
    def _infer(self, waves: list[np.ndarray[Any, Any]]) -> list[Any]: ...

    @abc.abstractmethod
    def _results(self, out: Any, item: Item) -> dict[str, ProbeResult]: ...

    @property
    def probe_id(self) -> str:
        """``name@version``."""
        return f"{self.name}@{self.version}"

    def _class_result(self, trait: str, top: str, label: str, item: Item,
                      detail: dict[str, Any]) -> dict[str, ProbeResult]:
        """The result of a categorical trait whose model class ``top`` maps to ``label``;
        none when the item requests no value of it."""
        d = _categorical(trait, label, item.traits.get(trait), self.registry)
        if d is None:
            return {}
        return {trait: ProbeResult(trait=trait, value=top, unit="", label=label, d=d,
                                   probe=self.probe_id, detail=detail)}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.probe_id}, {self.origin}, device={self.device})"


class _Wav2Vec2Probe(_ClassifierProbe):
    """wav2vec 2.0 checkpoints: feature extractor + padded batches with an attention mask."""

    def _load_extractor(self) -> None:
        transformers = require("transformers", f"the {self.spec.key} probe", "classifiers",
                               package="transformers")
        try:
            self._m_extractor = transformers.AutoFeatureExtractor.from_pretrained(  # type: ignore[no-untyped-call]
                self._source.path)
        except Exception as exc:
            raise ConfigError(f"cannot load the feature extractor from {self._source.path}: "
                              f"{type(exc).__name__}: {exc}") from exc
        rate = int(getattr(self._m_extractor, "sampling_rate", self.spec.sample_rate))
        if rate != self.spec.sample_rate:
            raise ConfigError(f"{self._source.path}: expects {rate} Hz input, the probe feeds "
                              f"{self.spec.sample_rate} Hz")

    def _from_pretrained(self, cls: Any) -> Any:
        """``cls.from_pretrained`` on the model folder; weights the checkpoint lacks are an
        error (they would be random), extra ones a warning."""
        try:
            model, info = cls.from_pretrained(self._source.path, output_loading_info=True)
        except Exception as exc:
            raise ConfigError(f"cannot load the {self.spec.key} model from {self._source.path}: "
                              f"{type(exc).__name__}: {exc}") from exc
        missing = sorted(info.get("missing_keys") or ())
        bad = sorted(str(m) for m in info.get("mismatched_keys") or ())
        if missing or bad:
            raise ConfigError(
                f"{self._source.path} is not a checkpoint of the expected {self.spec.key} "
                f"architecture: missing weights {missing[:6]}{' …' if len(missing) > 6 else ''}"
                f"{'; mismatched ' + str(bad[:6]) if bad else ''}"
            )
        extra = sorted(info.get("unexpected_keys") or ())
        if extra:
            warnings.warn(f"{self._source.path}: {len(extra)} weights not used by the "
                          f"{self.spec.key} model, e.g. {extra[:3]}", UserWarning, stacklevel=3)
        return model

    def _batch_limit(self) -> int:
        # Group-norm feature encoders must not see padding (their statistics span the whole
        # input); only layer-norm ones (like both checkpoints here) are batched.
        norm = getattr(self._model.config, "feat_extract_norm", "group")
        return self.batch_size if norm == "layer" else 1

    def _inputs(self, waves: list[np.ndarray[Any, Any]]) -> tuple[Any, Any]:
        enc = self._m_extractor(
            waves, sampling_rate=self.spec.sample_rate, padding=True,
            return_attention_mask=True, return_tensors="pt",
        )
        values = enc["input_values"].to(self.device)
        mask = enc["attention_mask"].to(self.device) if len(waves) > 1 else None
        return values, mask


# --------------------------------------------------------------------------------------------
# Age + gender
# --------------------------------------------------------------------------------------------


class AgeGenderProbe(_Wav2Vec2Probe):
    """Age (years, numeric) and gender (male/female) from audEERING's wav2vec 2.0 model.

    Age = 100 × the regression output, in years (rounded to 0.01); label = the estimate
    rounded to whole years; d = ``desirability("age", years, requested)``.
    Gender: the head gives P(female), P(male), P(child). Our vocabulary is male/female (a
    child is requested as gender + a young age), so the label is the more probable of female
    and male, and ``detail`` keeps all three probabilities and the top class (``child`` when
    that won).
    """

    name: str = "age_gender_w2v2"
    base_version: ClassVar[str] = "1"
    traits: tuple[str, ...] = ("age", "gender")
    spec = CLASSIFIER_MODELS["age_gender"]

    def _load(self) -> None:
        from ._audeering import age_gender_model_class

        self._load_extractor()
        model = self._from_pretrained(age_gender_model_class())
        self._model = model.to(self.device).eval()

    def _infer(self, waves: list[np.ndarray[Any, Any]]) -> list[Any]:
        values, mask = self._inputs(waves)
        _, age, gender = self._model(values, attention_mask=mask)
        ages = age[:, 0].double().cpu().numpy()
        probs = gender.double().cpu().numpy()
        return [(float(a), p) for a, p in zip(ages, probs, strict=True)]

    def _results(self, out: Any, item: Item) -> dict[str, ProbeResult]:
        age01, probs = out
        if not math.isfinite(age01) or not np.all(np.isfinite(probs)):
            raise ProbeError(f"{self.probe_id}: non-finite output on {item.id}")
        pid = self.probe_id
        years = _r(100.0 * age01, _AGE_DECIMALS)
        p = _by_label(GENDER_CLASSES, probs)
        top = GENDER_CLASSES[int(np.argmax(probs))]
        gender = "female" if probs[0] >= probs[1] else "male"
        out_d: dict[str, ProbeResult] = {}
        req_age = item.traits.get("age")
        if req_age is not None:
            out_d["age"] = ProbeResult(
                trait="age", value=years, unit="years", label=f"{years:.0f}",
                d=desirability("age", years, req_age, registry=self.registry), probe=pid,
                detail={"raw": _r(age01), "model": self.origin},
            )
        out_d.update(self._class_result("gender", gender, gender, item, {
            "probabilities": p, "top_class": top, "child_mapped": top == "child",
            "model": self.origin}))
        return out_d


# --------------------------------------------------------------------------------------------
# Emotion
# --------------------------------------------------------------------------------------------


def _map_emotion(label: str, table: Mapping[str, str], vocabulary: Sequence[str]) -> str | None:
    key = label.strip().lower()
    key = _EMOTION_ALIASES.get(key, key)
    if key in table:
        return table[key]
    return key if key in vocabulary else None


class EmotionProbe(_Wav2Vec2Probe):
    """Emotion (categorical, 8 values) from a wav2vec 2.0 sequence classifier.

    The model's ``id2label`` is mapped onto our vocabulary by name at load time (an
    unmappable label is kept as itself and scores d = 0; a model whose labels are all generic
    like ``LABEL_0`` is refused). value = the model's label, label = our value, detail = the
    probability of each label (softmax of the logits).
    """

    name: str = "emotion_w2v2"
    base_version: ClassVar[str] = "1"
    traits: tuple[str, ...] = ("emotion",)
    spec = CLASSIFIER_MODELS["emotion"]

    def _load(self) -> None:
        transformers = require("transformers", "the emotion probe", "classifiers",
                               package="transformers")
        self._load_extractor()
        model = self._from_pretrained(transformers.AutoModelForAudioClassification)
        id2label = {int(k): str(v) for k, v in model.config.id2label.items()}
        vocab = self.registry.get("emotion").values
        mapped = {i: _map_emotion(lab, self.spec.label_map, vocab) for i, lab in id2label.items()}
        if not any(mapped.values()):
            raise ConfigError(
                f"{self._source.path}: none of the model's labels "
                f"({', '.join(id2label.values())}) names an emotion of ours "
                f"({', '.join(vocab)}); this is not an emotion classifier we can map"
            )
        self.model_labels: tuple[str, ...] = tuple(id2label[i] for i in sorted(id2label))
        self.label_to_value: dict[str, str | None] = {
            id2label[i]: mapped[i] for i in sorted(id2label)
        }
        self._model = model.to(self.device).eval()

    def _infer(self, waves: list[np.ndarray[Any, Any]]) -> list[Any]:
        torch = torch_module()
        values, mask = self._inputs(waves)
        logits = self._model(values, attention_mask=mask).logits
        probs = torch.softmax(logits.double(), dim=-1).cpu().numpy()
        return list(probs)

    def _results(self, out: Any, item: Item) -> dict[str, ProbeResult]:
        probs = np.asarray(out, dtype=np.float64)
        if not np.all(np.isfinite(probs)):
            raise ProbeError(f"{self.probe_id}: non-finite output on {item.id}")
        top = self.model_labels[int(np.argmax(probs))]
        label = self.label_to_value[top] or top
        return self._class_result("emotion", top, label, item,
                                  {"probabilities": _by_label(self.model_labels, probs),
                                   "model": self.origin})


# --------------------------------------------------------------------------------------------
# Accent
# --------------------------------------------------------------------------------------------


class AccentProbe(_ClassifierProbe):
    """Accent (categorical, 5 values) from the CommonAccent ECAPA-TDNN (16 English accents).

    Runs the speechbrain checkpoint in plain torch (:mod:`._ecapa`: no speechbrain or
    torchaudio needed). Scores are cosine similarities; probabilities are
    softmax(:data:`ACCENT_SCORE_SCALE` · cos). us→American, england→British,
    australia→Australian, indian→Indian, canada→Canadian; any other top label (scotland,
    ireland, …) is reported as itself and is a mismatch (d = 0).

    Only clips of equal length share a batch: ECAPA's convolutions see the padding of a
    shorter clip (speechbrain's batched ``classify_batch`` has the same effect), which moved
    cosine scores by up to 0.1 on a 2 s clip padded to 3 s. Clip-by-clip keeps every result
    independent of what else ran in the batch.
    """

    name: str = "accent_ecapa"
    base_version: ClassVar[str] = "1"
    traits: tuple[str, ...] = ("accent",)
    spec = CLASSIFIER_MODELS["accent"]
    pad_invariant: ClassVar[bool] = False

    def _load(self) -> None:
        from ._ecapa import load_ecapa_classifier

        ckpt = load_ecapa_classifier(self._source.path, device=self.device)
        if ckpt.sample_rate != self.spec.sample_rate:
            raise ConfigError(f"{self._source.path}: model expects {ckpt.sample_rate} Hz, "
                              f"the probe feeds {self.spec.sample_rate} Hz")
        self.model_labels: tuple[str, ...] = ckpt.labels
        self._model = ckpt.model

    def _infer(self, waves: list[np.ndarray[Any, Any]]) -> list[Any]:
        torch = torch_module()
        longest = max(w.shape[0] for w in waves)
        batch = np.zeros((len(waves), longest), dtype=np.float32)
        for row, w in enumerate(waves):
            batch[row, :w.shape[0]] = w
        lengths = torch.tensor([w.shape[0] / longest for w in waves], dtype=torch.float32,
                               device=self.device)
        cos = self._model(torch.from_numpy(batch).to(self.device), lengths).double()
        probs = torch.softmax(ACCENT_SCORE_SCALE * cos, dim=-1)
        return list(zip(cos.cpu().numpy(), probs.cpu().numpy(), strict=True))

    def _results(self, out: Any, item: Item) -> dict[str, ProbeResult]:
        cos, probs = out
        if not (np.all(np.isfinite(cos)) and np.all(np.isfinite(probs))):
            raise ProbeError(f"{self.probe_id}: non-finite output on {item.id}")
        top = self.model_labels[int(np.argmax(cos))]
        label = self.spec.label_map.get(top, top)
        return self._class_result("accent", top, label, item,
                                  {"probabilities": _by_label(self.model_labels, probs),
                                   "cosine": _by_label(self.model_labels, cos),
                                   "model": self.origin})


# --------------------------------------------------------------------------------------------
# Building and running
# --------------------------------------------------------------------------------------------

_PROBE_CLASSES: dict[str, type[_ClassifierProbe]] = {
    "age_gender": AgeGenderProbe, "emotion": EmotionProbe, "accent": AccentProbe,
}


class ClassifierOptions(TypedDict, total=False):
    """The keyword arguments that choose and build the classifier probes, those of
    :func:`classifier_probes` (whose signature holds their defaults) other than ``registry``:
    callers that build the probes on its behalf (``with_classifiers``) pass them on."""

    models: Mapping[str, str | os.PathLike[str]] | None
    revisions: Mapping[str, str] | None
    include: Sequence[str]
    batch_size: int


def classifier_probes(
    device: str = "auto",
    *,
    models: Mapping[str, str | os.PathLike[str]] | None = None,
    revisions: Mapping[str, str] | None = None,
    include: Sequence[str] = ("age_gender", "emotion", "accent"),
    batch_size: int = DEFAULT_BATCH_SIZE,
    registry: TraitRegistry = TRAITS,
) -> list[_ClassifierProbe]:
    """Build (and load) the classifier probes named in ``include``.

    ``models`` maps a probe key (``age_gender``, ``emotion``, ``accent``) to a local folder
    or another hub id; ``revisions`` pins a hub commit per key (needed for any hub id other
    than the table's). Every model is loaded here, so a missing download fails now, before
    any synthesis, with a ConfigError that says what to fetch.
    """
    valid = tuple(_PROBE_CLASSES)
    for name, mapping in (("models", models or {}), ("revisions", revisions or {}),
                          ("include", dict.fromkeys(include))):
        bad = [k for k in mapping if k not in valid]
        if bad:
            raise ConfigError(f"{name}: unknown classifier {', '.join(map(repr, bad))}; "
                              f"valid: {', '.join(valid)}")
    if len(set(include)) != len(tuple(include)):
        raise ConfigError(f"include lists a classifier twice: {list(include)}")
    dev = resolve_device(device)
    return [
        _PROBE_CLASSES[key](
            source=(models or {}).get(key), revision=(revisions or {}).get(key), device=dev,
            batch_size=batch_size, registry=registry,
        )
        for key in include
    ]


def measure_batch(probe_set: ProbeSet, audios: Sequence[Audio], items: Sequence[Item]
                  ) -> list[dict[str, ProbeResult]]:
    """:meth:`ProbeSet.measure` over many clips, using each probe's ``measure_batch`` when it
    has one (the classifier probes: one padded forward pass per batch). Same semantics: later
    probes win for a trait, results in registry order, and a clip that fails the set's speech
    check gets UNMEASURABLE (d = 0) for every trait without reaching any model.

    The classifier probes' own ``measure`` / ``measure_batch`` do not run the speech check:
    a pipeline that calls them directly fills a no-speech clip's traits with
    :meth:`ProbeSet.unmeasurable_results` instead of running them."""
    if len(audios) != len(items):
        raise ConfigError(f"measure_batch: {len(audios)} clips but {len(items)} items")
    results: list[list[dict[str, ProbeResult]]] = [[] for _ in items]
    live = list(range(len(items)))
    if probe_set.check_speech and probe_set.probes:
        live = []
        for k, (a, it) in enumerate(zip(audios, items, strict=True)):
            check = probe_set.speech_check(a)
            if check.present:
                live.append(k)
            else:
                results[k].append(probe_set.unmeasurable_results(it, check.reason
                                                                 or "no speech"))
    la = [audios[k] for k in live]
    li = [items[k] for k in live]
    for p in probe_set.probes:
        if not live:
            break
        batch_fn = getattr(p, "measure_batch", None)
        if callable(batch_fn):
            outs = batch_fn(la, li)
        else:
            outs = []
            for a, it in zip(la, li, strict=True):
                try:
                    outs.append(p.measure(a, it))
                except ProbeError:
                    raise
                except Exception as exc:
                    raise ProbeError(f"probe {p.name}@{p.version} failed on {it.id}: "
                                     f"{type(exc).__name__}: {exc}") from exc
        for k, got in zip(live, outs, strict=True):
            results[k].append(got)
    names = probe_set.registry.names()
    return [merge_results(acc, probe_set.ids, names) for acc in results]
