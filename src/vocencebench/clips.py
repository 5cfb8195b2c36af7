"""The clips a report lets you hear: which items (:func:`select_clips`, pure) and the files
themselves (:func:`export_clips`, read from the run's cache and written to ``OUT/clips/``).

Selection, in this order (an item chosen twice is listed once, with every reason):

* the ``k`` items with the largest δ = S_b − S_a in each direction (the items that moved the
  mean difference most: the ones that decided the duel);
* every gate veto (a clip with gate = 0) and every system failure that produced audio, at
  most ``cap`` items each (the rest are counted, so a broken system cannot blow the report's
  size budget);
* per scored dimension, the ``worst`` items with the lowest d_a + d_b (where not both are 1).

The files are FLAC (lossless, 16-bit for a 16-bit source, 24-bit otherwise) of the decoded
mono samples every probe measured, at the clip's own sample rate: what you hear is what was
scored, byte-identical on every render, and every current browser plays it; the choice and its
measurements are in docs/performance.md ("Clips in the report"). A file is named by the
source clip's sha256, so a clip used twice is one file and a re-render rewrites nothing.
When the cache is gone, clips already exported for the same source are reused; the rest are
reported missing, in one line.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._numbers import is_whole_number
from .constants import REPORT_DECISIVE_CLIPS, REPORT_GROUP_CLIPS_MAX, REPORT_WORST_CLIPS
from .errors import ConfigError, VocenceError

if TYPE_CHECKING:
    from .pair import PairResult
    from .traits import TraitRegistry

__all__ = [
    "CLIPS_DIR",
    "GROUPS",
    "ClipFile",
    "ClipSelection",
    "ExportedClips",
    "Pick",
    "encode_flac",
    "export_clips",
    "find_cache",
    "listening_section",
    "open_for_reading",
    "prune_clips",
    "read_clip",
    "select_clips",
]

#: The folder of a report's clips, relative to the report.
CLIPS_DIR = "clips"
#: The groups of a selection, in the order the report lists them.
GROUPS = ("decisive", "gate", "failure", "worst")
_OURS = re.compile(r"^[0-9a-f]{20}\.flac$")
#: Decoded clips longer than this (seconds) are not exported (a runaway system).
_MAX_SECONDS = 600.0


@dataclass(frozen=True)
class Pick:
    """One item a report plays: its position ``index`` in the run's pairs, its ``item`` id,
    the ``group`` it is listed under (the first of :data:`GROUPS` that chose it) and every
    ``reason`` it was chosen for."""

    index: int
    item: str
    group: str
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class ClipSelection:
    """The picks (group order), the options that made them, and per group how many items the
    ``cap`` left out."""

    picks: tuple[Pick, ...]
    k: int
    worst: int
    cap: int
    omitted: dict[str, int] = field(default_factory=dict)


def _check_counts(**counts: int) -> None:
    for name, v in counts.items():
        if not is_whole_number(v) or v < 0:
            raise ConfigError(f"{name} must be an integer ≥ 0, got {v!r}")


def select_clips(
    pairs: Sequence[PairResult],
    labels: tuple[str, str],
    registry: TraitRegistry,
    *,
    k: int = REPORT_DECISIVE_CLIPS,
    worst: int = REPORT_WORST_CLIPS,
    cap: int = REPORT_GROUP_CLIPS_MAX,
) -> ClipSelection:
    """The items whose clips a report plays (see the module docstring); pure and
    deterministic (ties broken by corpus order). ``k``: items per direction of δ; ``worst``:
    items per scored dimension; ``cap``: at most this many gate vetoes and as many failures."""
    _check_counts(k=k, worst=worst, cap=cap)
    la, lb = labels
    reasons: dict[int, list[str]] = {}
    group: dict[int, str] = {}
    omitted: dict[str, int] = {}

    def add(i: int, g: str, why: str) -> None:
        reasons.setdefault(i, []).append(why)
        group.setdefault(i, g)

    # One pass over the pairs (a large run reads them back from disk), then the picks.
    deltas: list[tuple[float, int]] = []
    vetoes: list[tuple[int, str]] = []
    failures: list[tuple[int, str]] = []
    scored: dict[str, list[tuple[float, int, float, float]]] = {
        d: [] for d in registry.dimensions()}
    ids: dict[int, str] = {}
    for i, p in enumerate(pairs):
        ids[i] = p.item.id
        if p.a.S is not None and p.b.S is not None:
            deltas.append((p.b.S - p.a.S, i))
        for an, label in ((p.analysis_a, la), (p.analysis_b, lb)):
            if an.gate == 0:
                wer = f"WER {an.wer:.2f}" if an.wer is not None else "WER —"
                vetoes.append((i, f"gate veto: {label} ({wer})"))
            if an.failure is not None and an.sha256 is not None:
                failures.append((i, f"{label} failed: {an.failure[:160]}"))
        if p.incomplete is None:
            for dim, rows in scored.items():
                da, db = p.a.d.get(dim), p.b.d.get(dim)
                if da is not None and db is not None and min(da, db) < 1.0:
                    rows.append((da + db, i, da, db))
    ahead_b = sorted((x for x in deltas if x[0] > 0), key=lambda x: (-x[0], x[1]))[:k]
    ahead_a = sorted((x for x in deltas if x[0] < 0), key=lambda x: (x[0], x[1]))[:k]
    for n, (d, i) in enumerate(ahead_b, start=1):
        add(i, "decisive", f"δ {d:+.3f}: {lb} ahead (#{n} of {len(ahead_b)})")
    for n, (d, i) in enumerate(ahead_a, start=1):
        add(i, "decisive", f"δ {d:+.3f}: {la} ahead (#{n} of {len(ahead_a)})")
    for g, found in (("gate", vetoes), ("failure", failures)):
        items = list(dict.fromkeys(i for i, _ in found))
        kept = set(items[:cap])
        omitted[g] = len(items) - len(kept)
        for i, why in found:
            if i in kept:
                add(i, g, why)
    for dim, rows in scored.items():
        for _, i, da, db in sorted(rows)[:worst]:
            add(i, "worst", f"worst {dim}: d {la} {da:.2f}, {lb} {db:.2f}")
    # Groups were filled in GROUPS order and an item keeps its first group, so the order the
    # items were first added in is the listing order (group, then rank within it).
    picks = tuple(Pick(i, ids[i], group[i], tuple(reasons[i])) for i in reasons)
    return ClipSelection(picks, k, worst, cap, {g: n for g, n in omitted.items() if n})


# --------------------------------------------------------------------------- files


@dataclass(frozen=True)
class ClipFile:
    """One exported clip: ``path`` relative to the output directory (``clips/….flac``),
    ``duration`` in seconds, ``sample_rate`` in Hz, ``size`` in bytes."""

    path: str
    duration: float
    sample_rate: int
    size: int


@dataclass(frozen=True)
class ExportedClips:
    """What :func:`export_clips` wrote: ``files`` per (item id, side ``a``/``b``), why a
    picked clip is not there (``missing``), the cache it read (``source``, None when none
    could be opened) and ``note``: one line when the cache is gone or unreadable."""

    files: dict[tuple[str, str], ClipFile]
    missing: dict[tuple[str, str], str]
    source: str | None
    note: str | None = None

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in {f.path: f for f in self.files.values()}.values())


def find_cache(metadata: Mapping[str, Any], run_dir: str | os.PathLike[str]
               ) -> tuple[Path | None, str | None]:
    """(the run's cache file, None) or (None, one line saying why there is none).

    run.json records the path as the run saw it (often relative to where it was started): an
    absolute path is tried first, then a file of the same name in the run directory, the
    recorded path as it stands, and a file of that name in the run directory's two parent
    folders (a leaderboard's pairs keep their records two levels below the shared cache)."""
    rec = metadata.get("cache")
    path = rec.get("path") if isinstance(rec, Mapping) else None
    if path == os.devnull:
        return None, ("clips: this run kept no cache (--no-cache), so there are no clips to "
                      "play")
    if not isinstance(path, str) or not path:
        return None, "clips: run.json records no cache, so there are no clips to play"
    recorded = Path(path)
    here = Path(run_dir)
    # A relative path was relative to wherever the run was started: the run's own folder
    # is the better first guess (a clip that is not the measured one is refused anyway).
    candidates = ([recorded] if recorded.is_absolute() else []) + [
        here / recorded.name, recorded, here.parent / recorded.name,
        here.parent.parent / recorded.name]
    for c in candidates:
        if c.is_file():
            return c, None
    return None, (f"clips: the run's cache {path} is gone, so its clips cannot be played; "
                  "put it back and run `vocencebench report RUN` (or pass --cache PATH)")


def open_for_reading(path: str | os.PathLike[str]) -> Any:
    """The run cache at ``path``, opened to read clips. Writable when the file is (nothing is
    written, but the last connection to close then tidies SQLite's ``-wal`` and ``-shm``
    files away, as the run itself does); read-only otherwise."""
    from .cache import Cache

    return Cache(path, readonly=not os.access(path, os.W_OK))


def read_clip(store: Any, system_id: str, item: Any, sha256: str | None) -> bytes | str:
    """``system_id``'s clip for ``item`` from the cache ``store``, checked against the
    ``sha256`` the run measured — or a short reason why it cannot be had."""
    from .cache import clip_key, failed_clip_key

    found = False
    # A clip the run could not use is kept under its own key (the run never reuses it).
    for key in (clip_key(system_id, item), failed_clip_key(system_id, item)):
        hit = store.get_bytes("clips", key)
        if hit is None:
            continue
        found = True
        data: bytes = hit[0]
        if sha256 is None or hashlib.sha256(data).hexdigest() == sha256:
            return data
    if found:
        return "the cached clip is not the one this run measured (the cache was re-filled)"
    return "not in the cache (a system that does not cache its clips, or the cache was cleared)"


def encode_flac(samples: Any, sample_rate: int, *, subtype: str = "PCM_16") -> bytes:
    """FLAC bytes of float samples in [-1, 1] (mono or ``(frames, channels)``) at
    ``sample_rate`` Hz; the same input gives the same bytes."""
    from ._util.deps import require

    sf = require("soundfile", "writing the report's clips", "probes")
    buf = io.BytesIO()
    sf.write(buf, samples, int(sample_rate), format="FLAC", subtype=subtype)
    return buf.getvalue()


def _flac_of(data: bytes, label: str) -> tuple[bytes, float, int]:
    """(FLAC bytes, duration s, rate Hz) of the encoded clip ``data``."""
    from .audio import load_audio

    audio = load_audio(data, name=label, max_seconds=_MAX_SECONDS, min_seconds=0.0)
    sub = "PCM_16" if audio.format.endswith(("PCM_16", "PCM_S8", "PCM_U8")) else "PCM_24"
    return (encode_flac(audio.samples, audio.sample_rate, subtype=sub),
            audio.num_samples / audio.sample_rate, audio.sample_rate)


def _flac_info(path: Path) -> tuple[float, int] | None:
    try:
        from ._util.deps import require

        sf = require("soundfile", "reading the report's clips", "probes")
        info = sf.info(str(path))
        return info.frames / info.samplerate, int(info.samplerate)
    except Exception:  # a damaged file is simply not reused
        return None


def export_clips(
    pairs: Sequence[PairResult],
    selection: ClipSelection,
    directory: str | os.PathLike[str],
    *,
    systems: Mapping[str, str],
    labels: tuple[str, str],
    cache: str | os.PathLike[str] | None,
    note: str | None = None,
) -> tuple[ExportedClips, dict[str, bytes]]:
    """Read the picked clips from ``cache`` (read-only) and make their FLAC files.

    Returns the :class:`ExportedClips` and the files to write (``clips/NAME.flac`` → bytes;
    the caller writes them with the run's file set). ``systems`` maps each label to its
    system id (run.json's ``metadata.systems``); ``note`` is :func:`find_cache`'s line when
    ``cache`` is None. A clip whose file was exported before for the same source is reused
    when the cache cannot give it (writes nothing itself: :func:`prune_clips` removes the
    files no pick uses any more, once the new set is written)."""
    out = Path(directory)
    store = None
    if cache is not None:
        try:
            store = open_for_reading(cache)
        except VocenceError as exc:
            note = f"clips: the run's cache {cache} cannot be read ({str(exc)[:200]})"
    files: dict[tuple[str, str], ClipFile] = {}
    missing: dict[tuple[str, str], str] = {}
    writes: dict[str, bytes] = {}
    try:
        for pick in selection.picks:
            p = pairs[pick.index]
            for side, label, an in (("a", labels[0], p.analysis_a),
                                    ("b", labels[1], p.analysis_b)):
                key = (p.item.id, side)
                if an.sha256 is None:
                    missing[key] = "no audio (the system produced none)"
                    continue
                name = f"{CLIPS_DIR}/{an.sha256[:20]}.flac"
                if name in writes:
                    data = writes[name]
                    prev = next(f for f in files.values() if f.path == name)
                    files[key] = prev
                    continue
                got: bytes | str
                if store is not None and label in systems:
                    got = read_clip(store, systems[label], p.item, an.sha256)
                elif store is not None:
                    got = f"run.json names no system id for {label}"
                else:
                    got = "the cache is gone"
                if isinstance(got, str):
                    old = out / name
                    info = _flac_info(old) if old.is_file() else None
                    if info is None:
                        missing[key] = got
                        continue
                    data = old.read_bytes()  # exported by an earlier render of this run
                    duration, rate = info
                else:
                    try:
                        data, duration, rate = _flac_of(got, f"{label}/{p.item.id}")
                    except VocenceError as exc:
                        missing[key] = f"cannot be decoded: {str(exc)[:160]}"
                        continue
                writes[name] = data
                files[key] = ClipFile(name, duration, rate, len(data))
    finally:
        if store is not None:
            store.close()
    if store is None and not missing:
        note = None  # every clip was reused from an earlier render: nothing to report
    return ExportedClips(files, missing, None if store is None else str(cache), note), writes



def prune_clips(directory: str | os.PathLike[str], keep: Sequence[str]) -> int:
    """Remove the clip files of ours (``clips/<20 hex>.flac``) in ``directory`` that are not
    in ``keep`` (paths relative to ``directory``); return how many went."""
    folder = Path(directory) / CLIPS_DIR
    if not folder.is_dir():
        return 0
    wanted = set(keep)
    gone = 0
    for f in sorted(folder.iterdir()):
        if _OURS.match(f.name) and f"{CLIPS_DIR}/{f.name}" not in wanted:
            f.unlink()
            gone += 1
    return gone


def listening_section(
    pairs: Sequence[PairResult],
    labels: tuple[str, str],
    registry: TraitRegistry,
    metadata: Mapping[str, Any],
    directory: str | os.PathLike[str],
    *,
    cache: str | os.PathLike[str] | None = None,
    k: int = REPORT_DECISIVE_CLIPS,
    worst: int = REPORT_WORST_CLIPS,
    cap: int = REPORT_GROUP_CLIPS_MAX,
) -> tuple[str, list[str], dict[str, bytes]]:
    """A report's listening section for the run saved in ``directory``: (HTML, Markdown
    lines, the clip files to write). ``cache`` overrides the cache run.json records
    (:func:`find_cache`). Never raises for a missing cache or a missing soundfile: the
    section then says so in one line."""
    from ._report.listening import listening_html, listening_markdown
    from .errors import MissingDependencyError

    selection = select_clips(pairs, labels, registry, k=k, worst=worst, cap=cap)
    note = None
    if cache is not None:
        path: Path | None = Path(cache)
        if not Path(cache).is_file():
            path, note = None, f"clips: no cache at {cache}, so its clips cannot be played"
    else:
        path, note = find_cache(metadata, directory)
    systems = metadata.get("systems")
    ids = {str(k2): str(v) for k2, v in systems.items()} if isinstance(systems, Mapping) else {}
    try:
        exported, writes = export_clips(pairs, selection, directory, systems=ids,
                                        labels=labels, cache=path, note=note)
    except MissingDependencyError as exc:
        line = f"clips: not exported ({exc})"
        return (listening_html(pairs, labels, registry.dimensions(), None, None,
                               unavailable=line),
                listening_markdown(None, None, unavailable=line), {})
    if not exported.files and exported.note is not None:
        return (listening_html(pairs, labels, registry.dimensions(), None, None,
                               unavailable=exported.note),
                listening_markdown(None, None, unavailable=exported.note), {})
    return (listening_html(pairs, labels, registry.dimensions(), selection, exported),
            listening_markdown(selection, exported), writes)
