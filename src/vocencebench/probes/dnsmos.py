"""The DNSMOS P.835 quality diagnostic: reported per clip, never scored (docs/probes.md)."""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import numpy.typing as npt

from .._util.deps import require
from ..errors import ConfigError, ProbeError

if TYPE_CHECKING:
    from ..audio import Audio

__all__ = ["DNSMOS_WINDOW_S", "DnsmosDiagnostic"]

#: DNSMOS analyses 9.01 s windows (shorter clips are repeated to fill one), one per second.
DNSMOS_WINDOW_S: Final = 9.01
#: Polynomials mapping DNSMOS P.835 raw network outputs to MOS (highest power first), as
#: published with the model in Microsoft's DNS Challenge repository (non-personalised).
_DNSMOS_POLY: Final[Mapping[str, tuple[float, ...]]] = {
    "sig": (-0.08397278, 1.22083953, 0.0052439),
    "bak": (-0.13166888, 1.60915514, -0.39604546),
    "ovrl": (-0.06766283, 1.11546468, 0.04602535),
}


@functools.cache
def _dnsmos_session() -> Any:
    what = ("the DNSMOS quality diagnostic", "probes")
    ort = require("onnxruntime", *what, package="speechmos, onnxruntime")
    speechmos: Any = require("speechmos", *what, package="speechmos, onnxruntime")
    path = os.path.join(os.path.dirname(os.path.abspath(speechmos.__file__)), "dnsmos_models",
                        "sig_bak_ovr.onnx")
    if not os.path.isfile(path):
        raise ConfigError(f"the DNSMOS model is missing from the speechmos install ({path}); "
                          "reinstall it: pip install --force-reinstall speechmos")
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1  # one thread: bit-identical results, pool-friendly
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(path, sess_options=opts, providers=["CPUExecutionProvider"])


@dataclass
class DnsmosDiagnostic:
    """DNSMOS P.835 (the ONNX model speechmos ships): overall, signal and background quality,
    each a MOS on 1–5. Reported per clip, never scored."""

    name: str = "dnsmos"
    version: str = "1"

    def assess(self, audio: Audio) -> dict[str, float]:
        session = _dnsmos_session()
        x = np.clip(np.asarray(audio.at_16k(), dtype=np.float32), -1.0, 1.0)
        need = int(DNSMOS_WINDOW_S * 16_000)
        while x.shape[0] < need:  # short clips are repeated, as the reference code does
            x = np.concatenate([x, x])
        hops = int(math.floor(x.shape[0] / 16_000) - DNSMOS_WINDOW_S) + 1  # as the reference
        raw: list[npt.NDArray[np.float32]] = []
        for h in range(hops):
            seg = x[h * 16_000: h * 16_000 + need]
            if seg.shape[0] < need:
                continue
            out = session.run(None, {"input_1": seg[np.newaxis, :]})[0][0]
            raw.append(np.asarray(out, dtype=np.float32))
        if not raw:
            raise ProbeError(f"{self.name}@{self.version}: no 9 s window could be formed")
        scores: dict[str, float] = {}
        for k, name in enumerate(("sig", "bak", "ovrl")):
            poly = np.poly1d(_DNSMOS_POLY[name])
            vals = [float(poly(float(r[k]))) for r in raw]
            scores[f"dnsmos_{name}"] = math.fsum(vals) / len(vals)
        return {k: scores[k] for k in ("dnsmos_ovrl", "dnsmos_sig", "dnsmos_bak")}
