"""The classifier checkpoints: the one table of pinned models (:data:`CLASSIFIER_MODELS`),
where their files come from (a local folder, the Hugging Face cache, a download at the
pinned commit) and the torch device they run on. The probes are :mod:`.classifiers`.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .._util.deps import require
from .._util.filehash import sha256_file
from ..errors import ConfigError
from ._audeering import GENDER_CLASSES

__all__ = [
    "CLASSIFIER_MODELS",
    "ClassifierModel",
    "Source",
    "resolve_device",
    "resolve_source",
    "torch_module",
]

_HEX40 = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True)
class ClassifierModel:
    """One pinned checkpoint: where it comes from and how its labels map onto our traits.

    ``revision`` is the hub commit (40 hex). ``label_map`` maps the model's own labels to our
    trait values (a model label missing from it is reported as itself and scores d = 0).
    ``files`` must all be present; of ``one_of`` (alternative weight formats or label-file
    names) the first present is used.
    ``sample_rate`` is the input rate in Hz. ``labels`` are the model's classes as published;
    the emotion and accent loaders read the actual order from the checkpoint (``id2label``,
    the label-encoder file), the age/gender head has no label file and uses this order.
    """

    key: str
    model_id: str
    revision: str
    task: str
    traits: tuple[str, ...]
    label_map: Mapping[str, str]
    license: str
    sample_rate: int
    files: tuple[str, ...]
    one_of: tuple[str, ...] = ()
    note: str = ""
    labels: tuple[str, ...] = field(default=())


#: The model table (also in docs/probes.md). Revisions are the hub commits the table was
#: written against; the weight files did not change after them.
CLASSIFIER_MODELS: Mapping[str, ClassifierModel] = MappingProxyType({
    "age_gender": ClassifierModel(
        key="age_gender",
        model_id="audeering/wav2vec2-large-robust-24-ft-age-gender",
        revision="10d6099429d75b17d6918b9dc71b3ea6821f8f62",
        task="age regression (0–1 ≈ 0–100 years) + 3-way gender (female, male, child)",
        traits=("age", "gender"),
        label_map=MappingProxyType({"female": "female", "male": "male"}),
        license="CC-BY-NC-SA-4.0 (non-commercial)",
        sample_rate=16_000,
        files=("config.json", "preprocessor_config.json"),
        one_of=("model.safetensors", "pytorch_model.bin"),
        note="child → the more probable of female/male (child share kept in detail)",
        labels=GENDER_CLASSES,
    ),
    "emotion": ClassifierModel(
        key="emotion",
        model_id="ehcalabres/wav2vec2-lg-xlsr-en-speech-emotion-recognition",
        revision="73dd94db3acfb5178cfaef7b6ab0bb8e3851f195",
        task="8-class speech emotion (RAVDESS)",
        traits=("emotion",),
        label_map=MappingProxyType({
            "angry": "angry", "calm": "calm", "disgust": "disgust", "fearful": "fearful",
            "happy": "happy", "neutral": "neutral", "sad": "sad", "surprised": "surprised",
        }),
        license="Apache-2.0",
        sample_rate=16_000,
        files=("config.json", "preprocessor_config.json"),
        one_of=("model.safetensors", "pytorch_model.bin"),
        labels=("angry", "calm", "disgust", "fearful", "happy", "neutral", "sad", "surprised"),
    ),
    "accent": ClassifierModel(
        key="accent",
        model_id="Jzuluaga/accent-id-commonaccent_ecapa",
        revision="b9cf7cb1a694be9021486806129c3b59d5c590cb",
        task="16-class English accent (CommonAccent), ECAPA-TDNN",
        traits=("accent",),
        label_map=MappingProxyType({
            "us": "American", "england": "British", "australia": "Australian",
            "indian": "Indian", "canada": "Canadian",
        }),
        license="MIT",
        sample_rate=16_000,
        files=("hyperparams.yaml", "embedding_model.ckpt", "classifier.ckpt"),
        one_of=("accent_encoder.txt", "label_encoder.txt"),
        note="the other 11 accents (scotland, ireland, …) are kept as labels and score 0",
        labels=("england", "us", "canada", "australia", "indian", "scotland", "ireland",
                "african", "malaysia", "newzealand", "southatlandtic", "bermuda",
                "philippines", "hongkong", "wales", "singapore"),
    ),
})


def torch_module() -> Any:
    """The ``torch`` module, or MissingDependencyError naming the ``classifiers`` extra."""
    return require("torch", "the classifier probes", "classifiers", package="torch")


def resolve_device(device: str = "auto") -> str:
    """``"auto"`` → ``"cuda"`` when torch sees a GPU, else ``"cpu"``; other names are checked."""
    torch = torch_module()
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if not isinstance(device, str) or not device:
        raise ConfigError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got {device!r}")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"device {device!r} asked for, but torch sees no CUDA GPU; "
                          "pass device='cpu' or 'auto'")
    try:
        torch.device(device)
    except RuntimeError as exc:
        raise ConfigError(f"unknown torch device {device!r}: {exc}") from exc
    return device


def _fingerprint(directory: str, names: Sequence[str]) -> str:
    """12 hex of sha256 over the named files' contents: identifies a local model folder."""
    h = hashlib.sha256()
    for name in sorted(names):
        h.update(name.encode())
        h.update(sha256_file(os.path.join(directory, name)).encode())
    return h.hexdigest()[:12]


def _download_hint(spec: ClassifierModel, repo: str, revision: str) -> str:
    return (
        f"download it where the Hugging Face hub is reachable "
        f"(huggingface-cli download {repo} --revision {revision}) and keep it in the "
        f"Hugging Face cache, or pass its folder: models={{'{spec.key}': '/path/to/dir'}}"
    )


def _fetch(spec: ClassifierModel, repo: str, revision: str) -> str:
    """The local folder holding ``spec``'s files at ``revision`` (cache or download)."""
    hf_hub_download = require("huggingface_hub", "downloading classifier weights",
                              "classifiers", package="huggingface_hub").hf_hub_download

    def get(name: str) -> str:
        # The cache first: a pinned commit never changes, so no request is needed when the
        # file is already there (and none is possible offline).
        try:
            return str(hf_hub_download(repo, name, revision=revision, local_files_only=True))
        except Exception:
            return str(hf_hub_download(repo, name, revision=revision))

    got: list[str] = []
    try:
        for name in spec.files:
            got.append(get(name))
        if spec.one_of:
            last: Exception | None = None
            for name in spec.one_of:
                try:
                    got.append(get(name))
                    last = None
                    break
                except Exception as exc:  # missing alternative: try the next one
                    last = exc
            if last is not None:
                raise last
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        if len(first) > 160:
            first = first[:160] + "…"
        raise ConfigError(
            f"cannot get the {spec.key} model {repo}@{revision[:12]} "
            f"({type(exc).__name__}: {first}); {_download_hint(spec, repo, revision)}"
        ) from exc
    return os.path.dirname(got[0])


@dataclass(frozen=True)
class Source:
    """A resolved model location: local ``path``, ``origin`` (hub id or folder) and ``tag``
    (commit or content fingerprint, used in the probe version)."""

    path: str
    origin: str
    tag: str


def resolve_source(spec: ClassifierModel, source: str | os.PathLike[str] | None,
                   revision: str | None) -> Source:
    """Where ``spec``'s files are: the folder ``source`` (tagged by its commit-named
    directory or a digest of its files), or the hub model ``source`` (default: the pinned
    one) at ``revision``, fetched from the cache or downloaded. A ConfigError says what is
    wrong or what to download."""
    if source is not None and not isinstance(source, str | os.PathLike):
        raise ConfigError(f"models[{spec.key!r}] must be a hub id or a folder path, "
                          f"got {type(source).__name__}")
    src = spec.model_id if source is None else os.fspath(source)
    if os.path.isdir(src):
        present = [n for n in (*spec.files, *spec.one_of) if os.path.exists(os.path.join(src, n))]
        missing = [n for n in spec.files if n not in present]
        if missing or (spec.one_of and not any(w in present for w in spec.one_of)):
            need = ", ".join(spec.files) + (f" and one of {', '.join(spec.one_of)}"
                                            if spec.one_of else "")
            raise ConfigError(f"{src} is not a model folder for {spec.key}: it needs {need}")
        used = [n for n in spec.files if n in present]
        used += [n for n in spec.one_of if n in present][:1]
        snap = os.path.basename(os.path.normpath(src))
        tag = snap[:12] if _HEX40.match(snap) else "sha-" + _fingerprint(src, used)
        return Source(path=src, origin=src, tag=tag)
    if src.startswith((".", "/", "~")) or src.count("/") != 1 or (os.sep != "/" and os.sep in src):
        raise ConfigError(f"models[{spec.key!r}]: no such folder {src!r}")
    if revision is None:
        if src != spec.model_id:
            raise ConfigError(
                f"models[{spec.key!r}] = {src!r} is neither an existing folder nor the pinned "
                f"model {spec.model_id}; pass a folder, or pin a hub model with "
                f"revisions={{'{spec.key}': '<40-hex commit>'}}"
            )
        revision = spec.revision
    if not _HEX40.match(revision):
        raise ConfigError(f"revision for {spec.key} must be a 40-hex commit, got {revision!r}")
    return Source(path=_fetch(spec, src, revision), origin=f"{src}@{revision}",
                   tag=revision[:12])
