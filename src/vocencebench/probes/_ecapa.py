"""A speechbrain ECAPA-TDNN classifier checkpoint, run in plain torch (no speechbrain, no
torchaudio).

Why: ``import speechbrain`` imports torchaudio, and PyPI's torchaudio is a CUDA build that fails
to import beside the CPU torch wheel (``libc10_cuda.so`` missing). The accent checkpoint is just
three files, so this module reads them directly:

* ``hyperparams.yaml`` (HyperPyYAML) — read with a safe YAML loader that understands the
  ``!new:`` / ``!name:`` / ``!ref`` tags as data (nothing is imported or executed); the
  Fbank, InputNormalization, ECAPA_TDNN and Classifier arguments are taken from it;
* ``embedding_model.ckpt`` / ``classifier.ckpt`` — plain ``state_dict`` s, loaded with
  ``torch.load(weights_only=True)`` into modules whose parameter names and forward pass match
  speechbrain's ``lobes.models.ECAPA_TDNN`` (reflect "same" padding in every Conv1d, ReLU in
  the Res2Net branches, SE and attention blocks, the yaml's activation elsewhere);
* the label-encoder file (``accent_encoder.txt``) — speechbrain's ``'label' => index`` format,
  parsed with :func:`ast.literal_eval`.

Features follow speechbrain's ``Fbank`` defaults: 25 ms Hamming window, 10 ms hop, 400-point
FFT (centre-padded with zeros), power spectrum, triangular mel filters from f_min to f_max,
10·log10 with a 1e-10 floor and an 80 dB dynamic-range clamp per utterance; then
per-utterance mean removal (``InputNormalization(norm_type="sentence", std_norm=False)``).
The classifier scores are cosine similarities between the normalised embedding and each
normalised class weight (−1…1).

torch is imported lazily by :func:`load_ecapa_classifier`, never at import of this module.
"""

from __future__ import annotations

import ast
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._numbers import is_whole_number
from .._util.deps import require
from ..errors import ConfigError

__all__ = [
    "HPARAMS_FILE",
    "EcapaCheckpoint",
    "load_ecapa_classifier",
    "read_hparams",
    "read_label_encoder",
    "write_label_encoder",
]

#: The speechbrain hyper-parameter file of a pretrained model directory.
HPARAMS_FILE = "hyperparams.yaml"
_EXTRAS_SEPARATOR = "================"
_VALUE_SEPARATOR = " => "


# --------------------------------------------------------------------------------------------
# HyperPyYAML, read as data
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Tagged:
    """A YAML node carrying a HyperPyYAML tag (``new:speechbrain...``, ``name:...``, ``ref``)."""

    tag: str
    value: Any


def _yaml_loader() -> type:
    yaml: Any = require("yaml", "the accent probe", "classifiers", package="pyyaml")

    class _Loader(yaml.SafeLoader):  # type: ignore[misc]
        pass

    def _any(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> _Tagged:
        value: Any
        if isinstance(node, yaml.MappingNode):
            value = loader.construct_mapping(node, deep=True)
        elif isinstance(node, yaml.SequenceNode):
            value = loader.construct_sequence(node, deep=True)
        else:
            value = loader.construct_scalar(node)  # type: ignore[arg-type]
        return _Tagged(suffix, value)

    _Loader.add_multi_constructor("!", _any)
    return _Loader


def _resolve(value: Any, top: Mapping[str, Any], depth: int = 0) -> Any:
    """Resolve ``!ref <key>`` (and ``<key>`` inside ref strings) against the top level."""
    if depth > 20:
        raise ConfigError("hyperparams.yaml: !ref chain too deep (a reference cycle?)")
    if isinstance(value, _Tagged):
        if value.tag == "ref":
            text = str(value.value).strip()
            if text.startswith("<") and text.endswith(">") and text.count("<") == 1:
                key = text[1:-1]
                if key not in top:
                    raise ConfigError(f"hyperparams.yaml: !ref {text} names no top-level key")
                return _resolve(top[key], top, depth + 1)
            out = text
            for key in list(top):
                token = f"<{key}>"
                if token in out:
                    out = out.replace(token, str(_resolve(top[key], top, depth + 1)))
            return out
        return _Tagged(value.tag, _resolve(value.value, top, depth + 1))
    if isinstance(value, dict):
        return {k: _resolve(v, top, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, top, depth + 1) for v in value]
    return value


def read_hparams(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a speechbrain ``hyperparams.yaml`` as plain data with ``!ref`` resolved.

    ``!new:cls`` / ``!name:cls`` nodes become :class:`_Tagged` values (tag ``new:cls``);
    nothing is imported or executed.
    """
    import yaml

    try:
        with open(path, encoding="utf-8") as fh:
            raw = yaml.load(fh, Loader=_yaml_loader())
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {exc}") from exc
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    return {k: _resolve(v, raw) for k, v in raw.items()}


def _new_args(hp: Mapping[str, Any], key: str, cls_suffix: str) -> dict[str, Any]:
    node = hp.get(key)
    if not (isinstance(node, _Tagged) and node.tag.startswith("new:")
            and node.tag.endswith(cls_suffix)):
        raise ConfigError(
            f"hyperparams.yaml: '{key}' must be a !new:...{cls_suffix} object; "
            f"this loader supports speechbrain ECAPA-TDNN classifiers only"
        )
    args = node.value if isinstance(node.value, dict) else {}
    return dict(args)


# --------------------------------------------------------------------------------------------
# Label encoder (speechbrain CategoricalEncoder text format)
# --------------------------------------------------------------------------------------------


def read_label_encoder(path: str | os.PathLike[str]) -> tuple[str, ...]:
    """Class labels in index order from a speechbrain ``CategoricalEncoder`` file."""
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError as exc:
        raise ConfigError(f"cannot read label encoder {path}: {exc}") from exc
    ind2lab: dict[int, str] = {}
    for line in lines:
        if line.strip() == _EXTRAS_SEPARATOR:
            break
        if not line.strip():
            continue
        try:
            lit, ind = line.strip().split(_VALUE_SEPARATOR, maxsplit=1)
            label = ast.literal_eval(lit)
            index = int(ind)
        except (ValueError, SyntaxError) as exc:
            raise ConfigError(f"{path}: bad label-encoder line {line!r}") from exc
        ind2lab[index] = str(label)
    if not ind2lab or sorted(ind2lab) != list(range(len(ind2lab))):
        raise ConfigError(f"{path}: label indices must run 0..n-1, got {sorted(ind2lab)}")
    return tuple(ind2lab[i] for i in range(len(ind2lab)))


def write_label_encoder(path: str | os.PathLike[str], labels: Sequence[str]) -> None:
    """Write ``labels`` (index order) in speechbrain's ``CategoricalEncoder`` format."""
    with open(path, "w", encoding="utf-8") as fh:
        for i, lab in enumerate(labels):
            fh.write(f"{lab!r}{_VALUE_SEPARATOR}{i}\n")
        fh.write(f"{_EXTRAS_SEPARATOR}\n'starting_index'{_VALUE_SEPARATOR}0\n")


# --------------------------------------------------------------------------------------------
# The network (torch imported lazily; classes are built inside a factory)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EcapaCheckpoint:
    """A loaded ECAPA classifier: ``model`` (torch module; ``model(wavs, rel_lengths)`` →
    cosine scores ``(batch, n_classes)``), ``labels`` in index order, ``sample_rate`` (Hz),
    and the settings read from the yaml."""

    model: Any
    labels: tuple[str, ...]
    sample_rate: int
    settings: dict[str, Any]


_ACTIVATIONS = {"torch.nn.ReLU": "relu", "torch.nn.LeakyReLU": "leaky_relu"}


def _build_modules(torch: Any) -> dict[str, Any]:
    nn = torch.nn
    F = torch.nn.functional
    Module: Any = torch.nn.Module

    class SameConv1d(Module):  # type: ignore[misc]
        """speechbrain.nnet.CNN.Conv1d: reflect-padded 'same' convolution."""

        def __init__(self, cin: int, cout: int, kernel: int, dilation: int = 1,
                     groups: int = 1) -> None:
            super().__init__()
            self.pad = dilation * (kernel - 1) // 2
            self.conv = nn.Conv1d(cin, cout, kernel, dilation=dilation, groups=groups)

        def forward(self, x: Any) -> Any:
            if self.pad:
                x = F.pad(x, (self.pad, self.pad), mode="reflect")
            return self.conv(x)

    class BN1d(Module):  # type: ignore[misc]
        """speechbrain.nnet.normalization.BatchNorm1d(skip_transpose=True)."""

        def __init__(self, size: int) -> None:
            super().__init__()
            self.norm = nn.BatchNorm1d(size, eps=1e-5, momentum=0.1)

        def forward(self, x: Any) -> Any:
            return self.norm(x)

    def make_act(kind: str) -> Any:
        return nn.LeakyReLU() if kind == "leaky_relu" else nn.ReLU()

    class TDNNBlock(Module):  # type: ignore[misc]
        """conv → activation → batch norm (dropout is a no-op at inference)."""

        def __init__(self, cin: int, cout: int, kernel: int, dilation: int,
                     act: str = "relu", groups: int = 1) -> None:
            super().__init__()
            self.conv = SameConv1d(cin, cout, kernel, dilation, groups)
            self.activation = make_act(act)
            self.norm = BN1d(cout)

        def forward(self, x: Any) -> Any:
            return self.norm(self.activation(self.conv(x)))

    class Res2NetBlock(Module):  # type: ignore[misc]
        def __init__(self, channels: int, scale: int, kernel: int, dilation: int) -> None:
            super().__init__()
            if channels % scale:
                raise ConfigError(f"ECAPA: channels {channels} not divisible by scale {scale}")
            width = channels // scale
            # speechbrain builds these TDNN blocks with the default ReLU activation.
            self.blocks = nn.ModuleList(
                [TDNNBlock(width, width, kernel, dilation) for _ in range(scale - 1)]
            )
            self.scale = scale

        def forward(self, x: Any) -> Any:
            ys = []
            y_i = None
            for i, x_i in enumerate(torch.chunk(x, self.scale, dim=1)):
                if i == 0:
                    y_i = x_i
                elif i == 1:
                    y_i = self.blocks[0](x_i)
                else:
                    y_i = self.blocks[i - 1](x_i + y_i)
                ys.append(y_i)
            return torch.cat(ys, dim=1)

    def length_mask(lengths: Any, size: int, device: Any) -> Any:
        """[N, 1, L] float mask of frames < relative length · L."""
        rel = lengths * size
        return (torch.arange(size, device=device)[None, :] < rel[:, None]).float()[:, None, :]

    class SEBlock(Module):  # type: ignore[misc]
        def __init__(self, cin: int, se: int, cout: int) -> None:
            super().__init__()
            self.conv1 = SameConv1d(cin, se, 1)
            self.conv2 = SameConv1d(se, cout, 1)

        def forward(self, x: Any, lengths: Any) -> Any:
            mask = length_mask(lengths, x.shape[-1], x.device)
            s = (x * mask).sum(dim=2, keepdim=True) / mask.sum(dim=2, keepdim=True)
            s = torch.relu(self.conv1(s))
            s = torch.sigmoid(self.conv2(s))
            return s * x

    class SERes2NetBlock(Module):  # type: ignore[misc]
        def __init__(self, cin: int, cout: int, scale: int, se: int, kernel: int,
                     dilation: int, act: str, groups: int) -> None:
            super().__init__()
            self.tdnn1 = TDNNBlock(cin, cout, 1, 1, act, groups)
            self.res2net_block = Res2NetBlock(cout, scale, kernel, dilation)
            self.tdnn2 = TDNNBlock(cout, cout, 1, 1, act, groups)
            self.se_block = SEBlock(cout, se, cout)
            self.shortcut = SameConv1d(cin, cout, 1) if cin != cout else None

        def forward(self, x: Any, lengths: Any) -> Any:
            residual = self.shortcut(x) if self.shortcut is not None else x
            x = self.tdnn1(x)
            x = self.res2net_block(x)
            x = self.tdnn2(x)
            x = self.se_block(x, lengths)
            return x + residual

    class AttentiveStatisticsPooling(Module):  # type: ignore[misc]
        def __init__(self, channels: int, attention: int, global_context: bool) -> None:
            super().__init__()
            self.eps = 1e-12
            self.global_context = global_context
            self.tdnn = TDNNBlock(channels * 3 if global_context else channels, attention, 1, 1)
            self.conv = SameConv1d(attention, channels, 1)

        def _stats(self, x: Any, m: Any) -> tuple[Any, Any]:
            mean = (m * x).sum(2)
            std = torch.sqrt((m * (x - mean.unsqueeze(2)).pow(2)).sum(2).clamp(self.eps))
            return mean, std

        def forward(self, x: Any, lengths: Any) -> Any:
            size = x.shape[-1]
            mask = length_mask(lengths, size, x.device)
            if self.global_context:
                total = mask.sum(dim=2, keepdim=True)
                mean, std = self._stats(x, mask / total)
                attn = torch.cat(
                    [x, mean.unsqueeze(2).repeat(1, 1, size), std.unsqueeze(2).repeat(1, 1, size)],
                    dim=1,
                )
            else:
                attn = x
            attn = self.conv(torch.tanh(self.tdnn(attn)))
            attn = attn.masked_fill(mask == 0, float("-inf"))
            attn = F.softmax(attn, dim=2)
            mean, std = self._stats(x, attn)
            return torch.cat((mean, std), dim=1).unsqueeze(2)

    class ECAPA_TDNN(Module):  # type: ignore[misc]
        """speechbrain.lobes.models.ECAPA_TDNN.ECAPA_TDNN (inference only)."""

        def __init__(self, input_size: int, *, lin_neurons: int, act: str,
                     channels: Sequence[int], kernel_sizes: Sequence[int],
                     dilations: Sequence[int], attention_channels: int, res2net_scale: int,
                     se_channels: int, global_context: bool, groups: Sequence[int]) -> None:
            super().__init__()
            n = len(channels)
            if not (n == len(kernel_sizes) == len(dilations) == len(groups)) or n < 3:
                raise ConfigError("ECAPA: channels, kernel_sizes, dilations, groups must "
                                  "have one equal length ≥ 3")
            self.blocks = nn.ModuleList(
                [TDNNBlock(input_size, channels[0], kernel_sizes[0], dilations[0], act,
                           groups[0])]
            )
            for i in range(1, n - 1):
                self.blocks.append(SERes2NetBlock(
                    channels[i - 1], channels[i], res2net_scale, se_channels,
                    kernel_sizes[i], dilations[i], act, groups[i]))
            self.mfa = TDNNBlock(channels[-2] * (n - 2), channels[-1], kernel_sizes[-1],
                                 dilations[-1], act, groups[-1])
            self.asp = AttentiveStatisticsPooling(channels[-1], attention_channels,
                                                  global_context)
            self.asp_bn = BN1d(channels[-1] * 2)
            self.fc = SameConv1d(channels[-1] * 2, lin_neurons, 1)

        def forward(self, feats: Any, lengths: Any) -> Any:
            x = feats.transpose(1, 2)
            xl = []
            for i, layer in enumerate(self.blocks):
                x = layer(x) if i == 0 else layer(x, lengths)
                xl.append(x)
            x = self.mfa(torch.cat(xl[1:], dim=1))
            x = self.asp(x, lengths)
            x = self.asp_bn(x)
            x = self.fc(x)
            return x.transpose(1, 2)  # (batch, 1, lin_neurons)

    class Linear(Module):  # type: ignore[misc]
        """speechbrain.nnet.linear.Linear."""

        def __init__(self, cin: int, cout: int) -> None:
            super().__init__()
            self.w = nn.Linear(cin, cout)

        def forward(self, x: Any) -> Any:
            return self.w(x)

    class BNLast(BN1d):
        """speechbrain BatchNorm1d on (batch, time, channels) input."""

        def forward(self, x: Any) -> Any:
            return self.norm(x.transpose(-1, 1)).transpose(1, -1)

    class Classifier(Module):  # type: ignore[misc]
        """speechbrain's cosine classifier: normalised embedding · normalised weights."""

        def __init__(self, input_size: int, lin_blocks: int, lin_neurons: int,
                     out_neurons: int) -> None:
            super().__init__()
            self.blocks = nn.ModuleList()
            for _ in range(lin_blocks):
                self.blocks.extend([BNLast(input_size), Linear(input_size, lin_neurons)])
                input_size = lin_neurons
            self.weight = nn.Parameter(torch.empty(out_neurons, input_size))
            nn.init.xavier_uniform_(self.weight)

        def forward(self, x: Any) -> Any:
            for layer in self.blocks:
                x = layer(x)
            return F.linear(F.normalize(x.squeeze(1)), F.normalize(self.weight))

    class Fbank(Module):  # type: ignore[misc]
        """speechbrain.lobes.features.Fbank with its default settings."""

        def __init__(self, *, sample_rate: int, n_mels: int, n_fft: int, win_ms: float,
                     hop_ms: float, f_min: float, f_max: float) -> None:
            super().__init__()
            self.n_fft = n_fft
            self.win = round(sample_rate / 1000.0 * win_ms)
            self.hop = round(sample_rate / 1000.0 * hop_ms)
            self.register_buffer("window", torch.hamming_window(self.win), persistent=False)

            def to_mel(hz: float) -> float:
                return 2595.0 * math.log10(1.0 + hz / 700.0)

            mel = torch.linspace(to_mel(f_min), to_mel(f_max), n_mels + 2)
            hz = 700.0 * (10.0 ** (mel / 2595.0) - 1.0)
            band = (hz[1:] - hz[:-1])[:-1]
            central = hz[1:-1]
            freqs = torch.linspace(0, sample_rate // 2, n_fft // 2 + 1)
            slope = (freqs[None, :] - central[:, None]) / band[:, None]
            fb = torch.clamp(torch.minimum(slope + 1.0, 1.0 - slope), min=0.0)
            self.register_buffer("fbank", fb.transpose(0, 1).contiguous(), persistent=False)

        def forward(self, wavs: Any) -> Any:
            spec = torch.stft(wavs, self.n_fft, self.hop, self.win, self.window, center=True,
                              pad_mode="constant", normalized=False, onesided=True,
                              return_complex=True)
            power = spec.real.pow(2) + spec.imag.pow(2)  # (batch, freq, time)
            fb = torch.matmul(power.transpose(1, 2), self.fbank)  # (batch, time, mel)
            db = 10.0 * torch.log10(torch.clamp(fb, min=1e-10))
            floor = db.amax(dim=(-2, -1)) - 80.0
            return torch.maximum(db, floor.view(-1, 1, 1))

    class EcapaClassifier(Module):  # type: ignore[misc]
        def __init__(self, fbank: Any, embedding_model: Any, classifier: Any) -> None:
            super().__init__()
            self.compute_features = fbank
            self.embedding_model = embedding_model
            self.classifier = classifier

        def forward(self, wavs: Any, lengths: Any) -> Any:
            feats = self.compute_features(wavs)
            size = feats.shape[1]
            valid = (torch.arange(size, device=feats.device)[None, :]
                     < (lengths * size - 1e-6)[:, None]).float()[:, :, None]
            mean = (feats * valid).sum(1, keepdim=True) / valid.sum(1, keepdim=True)
            feats = feats - mean
            emb = self.embedding_model(feats, lengths)
            return self.classifier(emb)

    return {"ECAPA_TDNN": ECAPA_TDNN, "Classifier": Classifier, "Fbank": Fbank,
            "EcapaClassifier": EcapaClassifier}


def _int_list(value: Any, name: str) -> list[int]:
    if not isinstance(value, list) or not all(is_whole_number(v) for v in value):
        raise ConfigError(f"hyperparams.yaml: {name} must be a list of integers, got {value!r}")
    return list(value)


def _settings(hp: Mapping[str, Any]) -> dict[str, Any]:
    """Every architecture number the loader needs, from the yaml, with speechbrain defaults."""
    fb = _new_args(hp, "compute_features", ".Fbank")
    for flag in ("deltas", "context", "requires_grad"):
        if fb.get(flag):
            raise ConfigError(f"hyperparams.yaml: Fbank {flag}=True is not supported")
    if fb.get("filter_shape", "triangular") != "triangular":
        raise ConfigError("hyperparams.yaml: only triangular Fbank filters are supported")
    sr = int(fb.get("sample_rate", hp.get("sample_rate", 16000)))
    norm = _new_args(hp, "mean_var_norm", ".InputNormalization")
    if norm.get("norm_type", "global") != "sentence" or norm.get("std_norm", True):
        raise ConfigError(
            "hyperparams.yaml: only InputNormalization(norm_type=sentence, std_norm=False) "
            f"is supported, got {norm}"
        )
    emb = _new_args(hp, "embedding_model", ".ECAPA_TDNN")
    act_node = emb.get("activation")
    act = "relu"
    if act_node is not None:
        name = act_node.tag[5:] if isinstance(act_node, _Tagged) else ""
        if not name or name not in _ACTIVATIONS:
            raise ConfigError(f"hyperparams.yaml: unsupported ECAPA activation {act_node!r}")
        act = _ACTIVATIONS[name]
    channels = _int_list(emb.get("channels", [512, 512, 512, 512, 1536]), "channels")
    cls = _new_args(hp, "classifier", ".Classifier")
    return {
        "sample_rate": sr,
        "n_mels": int(fb.get("n_mels", 40)),
        "n_fft": int(fb.get("n_fft", 400)),
        "win_ms": float(fb.get("win_length", 25)),
        "hop_ms": float(fb.get("hop_length", 10)),
        "f_min": float(fb.get("f_min", 0)),
        "f_max": float(fb.get("f_max") or sr // 2),
        "input_size": int(emb["input_size"]),
        "lin_neurons": int(emb.get("lin_neurons", 192)),
        "activation": act,
        "channels": channels,
        "kernel_sizes": _int_list(emb.get("kernel_sizes", [5, 3, 3, 3, 1]), "kernel_sizes"),
        "dilations": _int_list(emb.get("dilations", [1, 2, 3, 4, 1]), "dilations"),
        "attention_channels": int(emb.get("attention_channels", 128)),
        "res2net_scale": int(emb.get("res2net_scale", 8)),
        "se_channels": int(emb.get("se_channels", 128)),
        "global_context": bool(emb.get("global_context", True)),
        "groups": _int_list(emb.get("groups", [1] * len(channels)), "groups"),
        "cls_input_size": int(cls.get("input_size", emb.get("lin_neurons", 192))),
        "cls_lin_blocks": int(cls.get("lin_blocks", 0)),
        "cls_lin_neurons": int(cls.get("lin_neurons", 192)),
        "out_neurons": int(cls.get("out_neurons", 1211)),
    }


def _pretrained_files(hp: Mapping[str, Any]) -> dict[str, str]:
    """Base names of the checkpoint files the yaml's pretrainer points at."""
    names = {"embedding_model": "embedding_model.ckpt", "classifier": "classifier.ckpt",
             "label_encoder": "label_encoder.txt"}
    pre = hp.get("pretrainer")
    if isinstance(pre, _Tagged) and isinstance(pre.value, dict):
        paths = pre.value.get("paths")
        if isinstance(paths, dict):
            for key in names:
                if isinstance(paths.get(key), str):
                    names[key] = os.path.basename(paths[key])
    return names


def _load_state(torch: Any, path: str) -> dict[str, Any]:
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError as exc:
        raise ConfigError(f"missing checkpoint file {path}") from exc
    except Exception as exc:  # unpickling errors come in many types
        raise ConfigError(f"cannot load checkpoint {path}: {type(exc).__name__}: {exc}") from exc
    if not isinstance(state, Mapping):
        raise ConfigError(f"{path} is not a state_dict")
    return dict(state)


def load_ecapa_classifier(directory: str | os.PathLike[str], *, device: str = "cpu"
                          ) -> EcapaCheckpoint:
    """Load a speechbrain ECAPA-TDNN classifier directory (yaml + ckpts + label encoder).

    The weights must match the architecture exactly (strict ``load_state_dict``); any
    mismatch is a :class:`ConfigError` naming the keys.
    """
    torch = require("torch", "the accent probe", "classifiers", package="torch")
    root = os.fspath(directory)
    hp = read_hparams(os.path.join(root, HPARAMS_FILE))
    s = _settings(hp)
    files = _pretrained_files(hp)
    label_path = os.path.join(root, files["label_encoder"])
    if not os.path.exists(label_path):
        for alt in ("accent_encoder.txt", "label_encoder.txt"):
            if os.path.exists(os.path.join(root, alt)):
                label_path = os.path.join(root, alt)
                break
    labels = read_label_encoder(label_path)
    if len(labels) != s["out_neurons"]:
        raise ConfigError(
            f"{root}: label encoder has {len(labels)} labels but the classifier has "
            f"{s['out_neurons']} outputs"
        )
    mods = _build_modules(torch)
    fbank = mods["Fbank"](sample_rate=s["sample_rate"], n_mels=s["n_mels"], n_fft=s["n_fft"],
                          win_ms=s["win_ms"], hop_ms=s["hop_ms"], f_min=s["f_min"],
                          f_max=s["f_max"])
    emb = mods["ECAPA_TDNN"](
        s["input_size"], lin_neurons=s["lin_neurons"], act=s["activation"],
        channels=s["channels"], kernel_sizes=s["kernel_sizes"], dilations=s["dilations"],
        attention_channels=s["attention_channels"], res2net_scale=s["res2net_scale"],
        se_channels=s["se_channels"], global_context=s["global_context"], groups=s["groups"],
    )
    cls = mods["Classifier"](s["cls_input_size"], s["cls_lin_blocks"], s["cls_lin_neurons"],
                             s["out_neurons"])
    for module, key in ((emb, "embedding_model"), (cls, "classifier")):
        path = os.path.join(root, files[key])
        state = _load_state(torch, path)
        try:
            module.load_state_dict(state, strict=True)
        except RuntimeError as exc:
            raise ConfigError(
                f"{path} does not match the architecture in {HPARAMS_FILE}: {exc}"
            ) from exc
    model = mods["EcapaClassifier"](fbank, emb, cls).to(device).eval()
    return EcapaCheckpoint(model=model, labels=labels, sample_rate=s["sample_rate"],
                           settings=s)
