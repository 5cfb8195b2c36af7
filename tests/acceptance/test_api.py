"""The public API: every exported name resolves, and importing the package stays light."""

from __future__ import annotations

import re
import subprocess
import sys

import vocencebench as vb
from repo_paths import DOCS

API_DOC = DOCS / "api.md"


def _documented() -> list[str]:
    text = API_DOC.read_text(encoding="utf-8")
    block = text.split("<!-- public-api:start -->")[1].split("<!-- public-api:end -->")[0]
    return re.findall(r"^- `([^`]+)`", block, flags=re.M)


def test_all_is_exactly_the_documented_list() -> None:
    assert vb.__all__ == _documented()


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def test_dir_all_and_the_docs_name_the_same_public_names() -> None:
    """``dir(vocencebench)`` (minus dunders) is ``__all__`` is docs/api.md: no helper name
    (``Any``, ``importlib``, ``annotations``) and no submodule leaks into the listing, even
    after every lazy name was resolved."""
    for name in vb.__all__:
        getattr(vb, name)
    shown = [n for n in dir(vb) if not _is_dunder(n)]
    public = [n for n in vb.__all__ if not _is_dunder(n)]
    documented = [n for n in _documented() if not _is_dunder(n)]
    assert sorted(shown) == sorted(public) == sorted(documented)
    for leak in ("Any", "importlib", "annotations", "errors", "schema", "traits"):
        assert leak not in dir(vb)


def test_no_public_name_is_served_from_a_private_module() -> None:
    from vocencebench import _LAZY

    private = {n: m for n, m in _LAZY.items()
               if any(part.startswith("_") for part in m.split("."))}
    assert private == {}
    assert _LAZY["Clip"] == "vocencebench.audio"
    assert _LAZY["BatchedProbe"] == "vocencebench.probes"
    assert _LAZY["Head2Head"] == _LAZY["load_run"] == "vocencebench.result"
    assert _LAZY["leaderboard"] == _LAZY["Leaderboard"] == "vocencebench.board"
    assert vb.load_run.__module__ == "vocencebench.result"


def test_maintainer_tools_are_not_top_level() -> None:
    for name in ("generate_template_corpus", "freeze", "balanced_assignment", "write_corpus",
                 "generate_llm_corpus", "corpus_stats", "parse_instruction"):
        assert name not in vb.__all__
        assert not hasattr(vb, name)
    from vocencebench.corpus import generate_template_corpus  # noqa: F401
    from vocencebench.corpus_llm import generate_llm_corpus  # noqa: F401


def test_every_public_name_resolves() -> None:
    missing = [n for n in vb.__all__ if getattr(vb, n, None) is None]
    assert missing == []
    assert len(set(vb.__all__)) == len(vb.__all__)


def test_names_from_the_readme_contract() -> None:
    for name in ("benchmark", "load_benchmark", "default_probes", "with_classifiers",
                 "whisper_transcriber", "Judge", "compare_models"):
        assert name in vb.__all__
    # The module keeps its name: `from vocencebench import decide` is the decide module.
    from vocencebench import decide

    assert callable(decide.decide) and callable(decide.bootstrap_indices)
    assert callable(vb.Judge.gemini) and callable(vb.Judge.local)
    assert callable(vb.Judge.compare) and callable(vb.Judge.compare_all)
    from vocencebench.adapters import ParlerTTSAdapter, Qwen3TTSAdapter  # noqa: F401


def test_import_does_not_load_heavy_backends() -> None:
    code = ("import sys, vocencebench as vb; "
            "heavy = [m for m in ('torch', 'transformers', 'faster_whisper', 'parselmouth', "
            "'speechbrain', 'onnxruntime', 'soundfile', 'distributed') if m in sys.modules]; "
            "print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == ""


def test_unknown_attribute_is_an_attribute_error() -> None:
    try:
        vb.no_such_thing  # noqa: B018
    except AttributeError as exc:
        assert "no_such_thing" in str(exc)
    else:
        raise AssertionError("expected AttributeError")
