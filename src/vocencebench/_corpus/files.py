"""The corpus file format: canonical lines, the hash, the pin, reading, writing, loading.

A corpus file is UTF-8 JSONL, one item per line; its pin (``FILE.sha256``) is the SHA-256 of
the canonical lines (:func:`corpus_hash`) in the ``sha256sum`` format.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from .._numbers import is_whole_number
from .._util import strict_json
from ..errors import CorpusError
from ..schema import Item, dumps_canonical

__all__ = [
    "MAX_CORPUS_BYTES",
    "MAX_ITEMS",
    "check_pin",
    "corpus_file",
    "corpus_hash",
    "corpus_lines",
    "is_path",
    "load_benchmark",
    "pin_path",
    "read_corpus",
    "write_corpus",
]

#: Most items one corpus may hold.
MAX_ITEMS = 100_000
#: Largest corpus file that is read (bytes), checked before reading.
MAX_CORPUS_BYTES = 256 * 1024 * 1024

_FIELDS = ("id", "instruction", "text", "traits", "difficulty", "category")


def corpus_lines(items: Iterable[Item]) -> list[str]:
    """The canonical JSON line of every item (sorted keys, no spaces, UTF-8), no newline."""
    return [dumps_canonical(it.to_corpus_dict()) for it in items]


def corpus_hash(items: Iterable[Item]) -> str:
    """SHA-256 (hex) of the canonical corpus file: one ``\\n``-terminated line per item."""
    h = hashlib.sha256()
    for line in corpus_lines(items):
        h.update(line.encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


_SURROGATE = re.compile("[\ud800-\udfff]")


def _refuse_surrogates(obj: dict[str, Any], where: str) -> None:
    """Refuse a string holding a surrogate code point (the JSON escape ``\\ud800``): it is
    not a character, so it cannot be hashed, written or sent as UTF-8."""
    iid = str(obj["id"])
    shown = iid if len(iid) <= 40 else iid[:37] + "..."
    shown = shown.encode("ascii", "backslashreplace").decode("ascii")
    fields = [(name, obj[name]) for name in ("id", "instruction", "text", "category")]
    fields += [(f"traits.{k}", k + v) for k, v in obj["traits"].items()]
    for name, value in fields:
        if (bad := _SURROGATE.search(value)) is not None:
            name = name.encode("ascii", "backslashreplace").decode("ascii")[:60]
            raise CorpusError(f"{where}: item {shown} field {name} holds the lone surrogate "
                              f"U+{ord(bad.group()):04X}, which is not a character; remove it")


def _item_from(obj: Any, where: str) -> Item:
    if not isinstance(obj, dict):
        raise CorpusError(f"{where}: expected a JSON object per line, got {type(obj).__name__}")
    missing = [f for f in _FIELDS if f not in obj]
    if missing:
        raise CorpusError(f"{where}: item lacks field(s) {', '.join(missing)}; every line needs "
                          f"{', '.join(_FIELDS)}")
    extra = sorted(set(obj) - set(_FIELDS))
    if extra:
        raise CorpusError(f"{where}: unknown field(s) {', '.join(extra)}; remove them")
    if not isinstance(obj["traits"], dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in obj["traits"].items()
    ):
        raise CorpusError(f"{where}: 'traits' must map trait names to string values")
    for name in ("id", "instruction", "text", "category"):
        if not isinstance(obj[name], str):
            raise CorpusError(f"{where}: {name!r} must be a string")
    if not is_whole_number(obj["difficulty"]):
        raise CorpusError(f"{where}: 'difficulty' must be the integer 0, 1 or 2")
    _refuse_surrogates(obj, where)
    return Item(id=obj["id"], instruction=obj["instruction"], text=obj["text"],
                traits=dict(obj["traits"]), difficulty=obj["difficulty"],
                category=obj["category"])


def _parse_lines(text: str, source: str) -> list[Item]:
    items: list[Item] = []
    for n, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        if len(items) >= MAX_ITEMS:
            raise CorpusError(f"{source}: more than {MAX_ITEMS} items; split the corpus into "
                              "smaller files")
        try:
            obj = strict_json.loads(line, unique_keys=True)
        except json.JSONDecodeError as exc:
            raise CorpusError(f"{source}:{n}: not valid JSON ({exc.msg} at column "
                              f"{exc.colno}); fix or remove the line") from None
        except strict_json.NestedTooDeepError:
            raise CorpusError(f"{source}:{n}: not valid JSON (nested too deeply); fix or "
                              "remove the line") from None
        except strict_json.DuplicateKeyError as exc:
            key = exc.key if len(exc.key) <= 40 else exc.key[:37] + "..."
            raise CorpusError(f"{source}:{n}: key {key!a} is given twice; keep one of "
                              "them") from None
        except ValueError:  # Python refuses to read an integer of over 4300 digits
            raise CorpusError(f"{source}:{n}: not valid JSON (a number with too many digits); "
                              "fix or remove the line") from None
        items.append(_item_from(obj, f"{source}:{n}"))
    return items


def _read_bytes(p: Path, what: str = "corpus file") -> bytes:
    """The file's bytes, refusing (before reading) a file over :data:`MAX_CORPUS_BYTES`."""
    try:
        with p.open("rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > MAX_CORPUS_BYTES:
                raise CorpusError(f"{what} {p} has {size} bytes, over the "
                                  f"{MAX_CORPUS_BYTES // 2**20} MiB limit; split it")
            data = f.read(MAX_CORPUS_BYTES + 1)
    except FileNotFoundError:
        raise CorpusError(f"{what} {p} does not exist") from None
    except OSError as exc:
        raise CorpusError(f"cannot read {what} {p}: {exc.strerror or exc}") from None
    if len(data) > MAX_CORPUS_BYTES:
        raise CorpusError(f"{what} {p} is over the {MAX_CORPUS_BYTES // 2**20} MiB limit; "
                          "split it")
    return data


def _decode(raw: bytes, source: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorpusError(f"{source} is not UTF-8 text (bad byte at offset {exc.start}); save "
                          "it as UTF-8") from None


def pin_path(path: str | os.PathLike[str]) -> Path:
    """Where the pin of a corpus file lies: ``FILE.sha256`` for ``FILE.jsonl``, else
    ``FILE<suffix>.sha256``."""
    p = Path(path)
    return p.with_suffix(".sha256") if p.suffix == ".jsonl" else p.with_name(p.name + ".sha256")



def _read_pin(text: str, source: str) -> str:
    token = text.strip().split()[0] if text.strip() else ""
    if not re.fullmatch(r"[0-9a-fA-F]{64}", token):
        raise CorpusError(f"{source}: not a SHA-256 pin (expected '<64 hex>  <file>')")
    return token.lower()


def _pin_problem(items: Sequence[Item], raw: bytes, pin_text: str, source: str, pin: str,
                 fix: str) -> str | None:
    """None when the pin matches ``corpus_hash(items)`` or the file's raw sha256 (a pin made
    by ``sha256sum``); else the one-line problem."""
    want = _read_pin(pin_text, pin)
    got = corpus_hash(items)
    if want in (got, hashlib.sha256(raw).hexdigest()):
        return None
    return (f"{source} does not match its pin {pin}: corpus_hash is {got}, pinned {want}. "
            f"The file changed after it was pinned; {fix}")


def _repin_hint(p: Path) -> str:
    return (f"restore it, or if the change is intended re-pin it with "
            f"`vocencebench corpus hash {p} > {pin_path(p)}`")


def check_pin(path: str | os.PathLike[str], items: Sequence[Item] | None = None) -> str | None:
    """The pin problem of a corpus file, or None when it has no pin beside it or matches it.

    ``items`` (the file's items, if already read) saves a second parse. Used by
    ``vocencebench corpus check`` to list a mismatch among the violations.
    """
    p = Path(path)
    pin = pin_path(p)
    if not pin.is_file():
        return None
    raw = _read_bytes(p)
    its = items if items is not None else _parse_lines(_decode(raw, str(p)), str(p))
    return _pin_problem(its, raw, pin.read_text(encoding="utf-8", errors="replace"), str(p),
                        str(pin), _repin_hint(p))


def read_corpus(path: str | os.PathLike[str], *, verify: bool = True) -> list[Item]:
    """Items of a corpus JSONL file, in file order; a bad line raises CorpusError(file:line).

    When a pin (``FILE.sha256``, see :func:`pin_path`) lies beside the file, the items must
    match it (with ``verify``, the default): a mismatch raises CorpusError naming both hashes
    and how to restore or re-pin the file. A file without a pin is read unverified. Reading
    checks the file format only; :func:`validate_corpus` checks that the items can be run.
    """
    p = Path(path)
    raw = _read_bytes(p)
    items = _parse_lines(_decode(raw, str(p)), str(p))
    if verify:
        pin = pin_path(p)
        if pin.is_file():
            problem = _pin_problem(items, raw, pin.read_text(encoding="utf-8", errors="replace"),
                                   str(p), str(pin), _repin_hint(p))
            if problem:
                raise CorpusError(problem)
    return items


def write_corpus(items: Sequence[Item], path: str | Path) -> str:
    """Write ``items`` as canonical JSONL plus ``<path>.sha256``; return the hash (hex).

    The ``.sha256`` file has the ``sha256sum`` format (``<hex>  <file name>\\n``), so
    ``sha256sum -c`` run beside the file verifies it.
    """
    p = Path(path)
    body = "".join(line + "\n" for line in corpus_lines(items))
    digest = hashlib.sha256(body.encode("utf-8")).hexdigest()
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(body.encode("utf-8"))
        pin_path(p).write_text(f"{digest}  {p.name}\n", encoding="utf-8")
    except OSError as exc:  # e.g. a folder on the way is a file
        raise CorpusError(f"cannot write corpus file {p}: {exc.strerror or exc}") from None
    return digest


def is_path(name_or_path: str | os.PathLike[str]) -> bool:
    s = str(name_or_path)
    return (not isinstance(name_or_path, str) or bool(Path(s).suffix) or "/" in s
            or "\\" in s)


def _shipped(name: str) -> Any:
    """The resource of the shipped corpus ``name``; CorpusError listing the shipped names."""
    root = resources.files("vocencebench") / "datasets"
    data = root / f"{name}.jsonl"
    if not data.is_file():
        names = sorted(f.name[:-6] for f in root.iterdir() if f.name.endswith(".jsonl"))
        raise CorpusError(f"no shipped corpus named {name!r}; shipped: "
                          f"{', '.join(names) or '-'}; or pass a path to a .jsonl file")
    return data


def corpus_file(name_or_path: str | os.PathLike[str]) -> Path:
    """The file behind a corpus argument: a path as given, a shipped name (``benchmark_v1``)
    as the ``.jsonl`` file inside the installed package (its pin lies beside it).

    A name is what :func:`load_benchmark` reads as one (no suffix, no separator) and no file
    of that name exists here, so a suffix-less file in the working directory stays a file.
    """
    s = str(name_or_path)
    if is_path(name_or_path) or Path(s).exists():
        return Path(s)
    return Path(str(_shipped(s)))


def load_benchmark(name_or_path: str | os.PathLike[str] = "benchmark_v1", *,
                   verify: bool = True) -> list[Item]:
    """Load a shipped corpus by name (``datasets/<name>.jsonl``) or a JSONL file by path.

    With ``verify`` (the default) the corpus hash is recomputed and compared with the pin
    (``<name>.sha256`` beside it); a mismatch raises CorpusError naming both hashes. A file
    given by path without a ``.sha256`` beside it is loaded unverified only if
    ``verify=False``. The items are not validated; :func:`load_corpus` does both.
    """
    s = str(name_or_path)
    if is_path(name_or_path):
        p = Path(s)
        raw = _read_bytes(p)
        source = str(p)
        pin_file = pin_path(p)
        pin_name = str(pin_file)
        # A garbled pin reads as one that does not match (as check_pin reads it), never as a
        # UnicodeDecodeError.
        pin_text = (pin_file.read_text(encoding="utf-8", errors="replace")
                    if pin_file.is_file() else None)
        fix = _repin_hint(p)
    else:
        root = resources.files("vocencebench") / "datasets"
        data = _shipped(s)
        source = f"vocencebench/datasets/{s}.jsonl"
        raw = data.read_bytes()
        pin = root / f"{s}.sha256"
        pin_name = f"{s}.sha256"
        pin_text = pin.read_text(encoding="utf-8") if pin.is_file() else None
        fix = ("restore it (e.g. reinstall vocencebench) rather than editing a frozen "
               "corpus.")
    items = _parse_lines(_decode(raw, source), source)
    if verify:
        if pin_text is None:
            raise CorpusError(f"{source} has no .sha256 pin beside it; freeze it with "
                              "corpus.freeze() or load with verify=False")
        problem = _pin_problem(items, raw, pin_text, source, pin_name, fix)
        if problem:
            raise CorpusError(problem)
    return items
