"""Build a blind listening test from a saved run: the seeded stratified sample, the seeded
left/right order, the clips (re-encoded so their files cannot tell the systems apart) and the
page.

What the folder ``DIR`` holds: ``key.json``, the output marker, ``labels/`` (once served)
and ``page/``, the folder the raters get. ``page/`` holds ``index.html`` (the page, its data
inline), ``test.json`` (the same data, for the server and for tools) and
``clips/NNN-1.flac`` / ``NNN-2.flac`` (trial NNN's left and right clip). So sending
``DIR/page`` (or a zip of it) can never send the key. No system name, label, system id or
cache key is written anywhere. The page's data carries, per trial, the item id, its
instruction and script and the two file names: nothing that says which clip is which
system, so the page records answers as left/right. Only ``key.json`` says which clip of each
trial is the run's a. It is outside ``page/``: the page never loads it, the server (whose
root is ``page/``) cannot serve it, and it maps the answers back where they are used (the
server, ``calibrate``). Every clip of the test is mono 16-bit FLAC at one sample rate (the
highest of the sampled clips'), with no tags, so neither a file's header nor its size per
second names a system.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .._numbers import is_whole_number
from .._util.human_labels import KEY_FILE, PAGE_DIR, ListeningKey
from .._util.stable_rng import stable_coins, stable_permutation
from .._util.text import terminal_safe
from ..clips import encode_flac, find_cache, open_for_reading, read_clip
from ..constants import LISTEN_ITEMS, LISTEN_SEED
from ..errors import ConfigError, VocenceError
from ..outputs import atomic_write, claim_directory
from ._page import render_page

if TYPE_CHECKING:
    from ..pair import PairResult
    from ..result import Head2Head

__all__ = ["DEFAULT_QUESTIONS", "QUESTIONS", "ListeningTest", "Trial", "build_listening_test",
           "load_source", "stratified_sample"]

#: Every question the page can ask: (dimension written to the CSV, the question).
QUESTIONS: dict[str, str] = {
    "naturalness": "Which clip sounds more natural (human-like, free of artefacts)?",
    "tone": "Which clip better realises the tone the instruction asks for?",
    "instruction": "Which clip follows the whole instruction better?",
}
#: The questions asked unless ``questions=`` says otherwise (the judge's two dimensions).
DEFAULT_QUESTIONS: tuple[str, ...] = ("naturalness", "tone")
#: The kind of the output marker of a listening folder.
LISTEN_KIND = "listen"


@dataclass(frozen=True)
class Trial:
    """One item of the test: trial number ``n`` (1-based, page order), the corpus ``item``
    id, its position ``index`` in the run's pairs, and ``swap`` (True: the left clip is the
    run's b; written to ``key.json`` only, never to the page)."""

    n: int
    item: str
    index: int
    swap: bool


@dataclass(frozen=True)
class ListeningTest:
    """A built test: its folder, id, trials, questions and what the sample left out. The
    raters get :attr:`page` only; ``directory`` also holds the key and the labels."""

    directory: Path
    test_id: str
    trials: tuple[Trial, ...]
    questions: tuple[str, ...]
    eligible: int
    strata: dict[str, int]
    notes: tuple[str, ...] = ()

    @property
    def page(self) -> Path:
        """The folder the raters get: the page, its data and its clips; never the key."""
        return self.directory / PAGE_DIR

    def lines(self) -> list[str]:
        """What the command prints."""
        out = [f"listening test {self.test_id}: {len(self.trials)} items of {self.eligible} "
               f"with both clips, questions: {', '.join(self.questions)}",
               "strata (category/direction of δ): "
               + ", ".join(f"{k} {v}" for k, v in self.strata.items() if v)]
        out += list(self.notes)
        out.append(f"open {self.page / 'index.html'} (works from disk; export the CSV "
                   "when done) or serve it: vocencebench listen ... --serve")
        out.append(f"send raters {self.page} only (zip that folder): it holds no key")
        out.append(f"keep {self.directory / KEY_FILE} (which clip is which system): do not "
                   "send it to raters; calibrate needs it to read the page's export")
        return out


def _direction(p: PairResult) -> str:
    if p.a.S is None or p.b.S is None or p.b.S == p.a.S:
        return "even"
    return "b ahead" if p.b.S > p.a.S else "a ahead"


def _check_seed(seed: object) -> None:
    # PCG64 takes no negative seed, and a float or bool would seed something else silently.
    if not is_whole_number(seed) or seed < 0:
        raise ConfigError(f"--seed must be an integer ≥ 0, got {seed!r}")


def stratified_sample(
    strata: Sequence[str], n: int, *, seed: int = LISTEN_SEED
) -> list[list[int]]:
    """Seeded proportional allocation: ``strata[i]`` is item i's stratum; return, per
    stratum in sorted order, a seeded permutation of its items whose first ``quota`` are
    the sample (quota by largest remainder of ``n`` · size / total, ties by stratum order;
    a stratum is never given more than it holds). The caller takes items from each list in
    order, skipping any it cannot use, so a missing clip is replaced from the same stratum.
    Returns ``[quota, *permuted indices]`` per stratum."""
    if not is_whole_number(n) or n < 1:
        raise ConfigError(f"--items must be an integer ≥ 1, got {n!r}")
    _check_seed(seed)
    bitgen = np.random.PCG64(seed)
    groups: dict[str, list[int]] = {}
    for i, s in enumerate(strata):
        groups.setdefault(s, []).append(i)
    keys = sorted(groups)
    total = len(strata)
    n = min(n, total)
    exact = [n * len(groups[k]) / total for k in keys]
    quota = [math.floor(x) for x in exact]
    by_remainder = sorted(range(len(keys)), key=lambda j: (-(exact[j] - quota[j]), j))
    for j in by_remainder[: n - sum(quota)]:
        quota[j] += 1
    out = []
    for j, k in enumerate(keys):
        perm = [groups[k][x] for x in stable_permutation(bitgen, len(groups[k]))]
        out.append([quota[j], *perm])
    return out


def load_source(run: str | os.PathLike[str], *, pair: Sequence[str] | None = None
                ) -> tuple[Head2Head, Path]:
    """The :class:`Head2Head` of a run directory, or of one pair of a leaderboard directory
    (``pair`` = (incumbent, challenger) in either order), and the directory whose run.json
    it came from."""
    from ..result import load_run

    p = Path(run)
    if (p / "run.json").is_file():
        if pair:
            raise ConfigError(f"{p} is a run, not a leaderboard: --pair applies to a "
                              "leaderboard directory")
        return load_run(p), p
    board = p / "leaderboard.json"
    if not board.is_file():
        raise ConfigError(f"{p} is neither a run directory (run.json) nor a leaderboard "
                          "directory (leaderboard.json)")
    try:
        doc = json.loads(board.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{board} cannot be read: {exc}") from None
    cells = [c for c in doc.get("pairs", []) if isinstance(c, dict)]
    names = [f"{c.get('incumbent')},{c.get('challenger')}" for c in cells]
    if not pair:
        raise ConfigError(f"{p} is a leaderboard: pick a pair with --pair A,B (one of "
                          f"{'; '.join(names) or 'none'})")
    want = {str(pair[0]), str(pair[1])}
    for c in cells:
        if {str(c.get("incumbent")), str(c.get("challenger"))} == want:
            rec = c.get("record")
            if not isinstance(rec, str) or not (p / rec / "run.json").is_file():
                raise ConfigError(f"{p}: pair {','.join(pair)} has no saved record "
                                  "(pairs/…/run.json); re-save the leaderboard with this "
                                  "vocencebench")
            return load_run(p / rec), p / rec
    raise ConfigError(f"{p}: no pair {','.join(pair)}; pairs: {'; '.join(names)}")


def _decode(data: bytes, label: str) -> tuple[Any, int]:
    from ..audio import load_audio

    a = load_audio(data, name=label, max_seconds=600.0, min_seconds=0.0)
    return a.samples, a.sample_rate


def _resample(x: Any, rate: int, target: int) -> Any:
    if rate == target:
        return x
    from .._util.deps import require

    soxr = require("soxr", "resampling the listening test's clips", "probes")
    return soxr.resample(x, rate, target, quality="VHQ")


def _test_id(h: Head2Head, ids: Sequence[str], trials: Sequence[Trial], *, seed: int,
             items: int, questions: Sequence[str], rate: int) -> str:
    """The test's id (16 hex digits): a digest of everything that makes two tests differ,
    the systems, the clips' sha256s and which side each is shown on included, so that two
    tests never share the page's stored answers. It names none of them: the digest is
    one-way and the sha256s are not in the folder."""
    shown = []
    for t in trials:
        p = h.pairs[t.index]
        a, b = p.analysis_a.sha256, p.analysis_b.sha256
        shown.append([t.n, t.item, *((b, a) if t.swap else (a, b))])
    doc = [seed, items, list(questions), list(h.labels), list(ids), rate, shown]
    return hashlib.sha256(json.dumps(doc).encode()).hexdigest()[:16]


def build_listening_test(
    run: str | os.PathLike[str] | Head2Head,
    out: str | os.PathLike[str],
    *,
    items: int = LISTEN_ITEMS,
    seed: int = LISTEN_SEED,
    questions: Sequence[str] = DEFAULT_QUESTIONS,
    pair: Sequence[str] | None = None,
    cache: str | os.PathLike[str] | None = None,
    run_dir: str | os.PathLike[str] | None = None,
    force: bool = False,
) -> ListeningTest:
    """Write a blind listening test of ``items`` items of a saved run into ``out``: the
    key in ``out``, what the raters get in ``out/page``.

    ``run``: a run directory, a leaderboard directory (with ``pair``), or a
    :class:`Head2Head` (then ``run_dir`` is where its cache is looked for). ``seed`` fixes the
    sample and the left/right order; ``questions``: names of :data:`QUESTIONS`; ``cache``:
    the run cache, when not where run.json says. Raises ConfigError (one line) for a bad
    option, a missing cache or a run with no item whose two clips are available."""
    from ..result import Head2Head

    _check_seed(seed)
    bad = [q for q in questions if q not in QUESTIONS]
    if bad or not questions or len(set(questions)) != len(questions):
        raise ConfigError(f"questions must be distinct names among {', '.join(QUESTIONS)}; "
                          f"got {', '.join(questions) or 'none'}")
    if isinstance(run, Head2Head):
        h, where = run, Path(run_dir or ".")
    else:
        h, where = load_source(run, pair=pair)
    if cache is not None:
        store_path = Path(cache)
        if not store_path.is_file():
            raise ConfigError(f"no cache at {cache}")
    else:
        found, why = find_cache(h.metadata, where)
        if found is None:
            raise ConfigError(f"{why}; a listening test needs the run's clips")
        store_path = found
    systems = h.metadata.get("systems") or {}
    ids = [str(systems.get(lab, "")) for lab in h.labels]
    if not all(ids):
        nameless = [lab for lab, i in zip(h.labels, ids, strict=True) if not i]
        raise ConfigError(f"run.json names no system id for {' and '.join(nameless)}; the "
                          "clips cannot be found in the cache")
    pairs = list(h.pairs)
    eligible = [i for i, p in enumerate(pairs)
                if p.analysis_a.sha256 and p.analysis_b.sha256
                and p.analysis_a.failure is None and p.analysis_b.failure is None]
    if not eligible:
        raise ConfigError("no item of the run has a clip from both systems to compare")
    strata = [f"{pairs[i].item.category}/{_direction(pairs[i])}" for i in eligible]
    plan = stratified_sample(strata, items, seed=seed)
    keys = sorted(set(strata))
    chosen: list[tuple[int, tuple[Any, int], tuple[Any, int]]] = []
    counts: dict[str, int] = {}
    notes: list[str] = []
    with open_for_reading(store_path) as store:
        for key, (quota, *members) in zip(keys, plan, strict=True):
            got = 0
            for j in members:
                if got >= quota:
                    break
                p = pairs[eligible[j]]
                clips = []
                for sid, an in ((ids[0], p.analysis_a), (ids[1], p.analysis_b)):
                    raw = read_clip(store, sid, p.item, an.sha256)
                    if isinstance(raw, str):
                        break
                    try:
                        clips.append(_decode(raw, p.item.id))
                    except VocenceError:
                        break
                if len(clips) == 2:
                    chosen.append((eligible[j], clips[0], clips[1]))
                    got += 1
            counts[key] = got
            if got < quota:
                notes.append(f"stratum {key}: {got} of {quota} items had both clips in the "
                             "cache")
    if not chosen:
        raise ConfigError(f"none of the sampled items has both clips in the cache "
                          f"{store_path}")
    # The page order and the sides: a stream of their own, derived from the same seed.
    bitgen = np.random.PCG64([seed, 1])
    shown = [chosen[x] for x in stable_permutation(bitgen, len(chosen))]
    swaps = stable_coins(bitgen, len(shown))
    rate = max(max(ca[1], cb[1]) for _, ca, cb in shown)
    directory = claim_directory(out, kind=LISTEN_KIND, force=force)
    page = directory / PAGE_DIR
    clip_dir = page / "clips"
    clip_dir.mkdir(parents=True, exist_ok=True)
    for f in clip_dir.glob("*.flac"):  # an earlier build's clips: never mix two tests
        f.unlink()
    trials: list[Trial] = []
    records: list[dict[str, Any]] = []
    for n, ((i, ca, cb), swap) in enumerate(zip(shown, swaps, strict=True), start=1):
        left, right = (cb, ca) if swap else (ca, cb)
        names: list[str] = []
        for k, (x, sr) in enumerate((left, right), start=1):
            name = f"clips/{n:03d}-{k}.flac"
            atomic_write(page / name, encode_flac(_resample(x, sr, rate), rate,
                                                  subtype="PCM_16"))
            names.append(name)
        p = pairs[i]
        trials.append(Trial(n, p.item.id, i, swap))
        # No side, no system: what the rater's page (and test.json) may know of a trial.
        records.append({"n": n, "id": terminal_safe(p.item.id),
                        "instruction": terminal_safe(p.item.instruction),
                        "text": terminal_safe(p.item.text), "left": names[0], "right": names[1]})
    ident = _test_id(h, ids, trials, seed=seed, items=items, questions=questions, rate=rate)
    data: dict[str, Any] = {
        "test": ident, "questions": [{"dim": q, "text": QUESTIONS[q]} for q in questions],
        "trials": records, "sample_rate": rate}
    sides = ListeningKey(ident, {t.n: (terminal_safe(t.item), "b" if t.swap else "a")
                                 for t in trials})
    atomic_write(directory / KEY_FILE, sides.to_json())
    atomic_write(page / "test.json", json.dumps(data, indent=1, ensure_ascii=False,
                                                sort_keys=True) + "\n")
    atomic_write(page / "index.html", render_page(data))
    return ListeningTest(directory, ident, tuple(trials), tuple(questions), len(eligible),
                         counts, tuple(notes))
