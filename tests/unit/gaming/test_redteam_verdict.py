"""The DEFENDED / VULNERABLE / NOT TESTED rule on synthetic duel outcomes (no audio), and the
table, redteam.json / .md / .html built from them (the HTML checked in headless Chromium)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from vocencebench.decide import decide
from vocencebench.gaming import (
    DEFENDED,
    EXIT_INCOMPLETE,
    EXIT_OK,
    EXIT_VULNERABLE,
    NOT_TESTED,
    OUTPUT_FILES,
    VULNERABLE,
    AttackRow,
    Duel,
    RedteamResult,
    load_redteam,
    verdict,
)
from vocencebench.schema import Decision

ALL_ON = {"probes": True, "classifiers": True, "gate": True, "judge": True, "holdout": True}
OFFLINE = {"probes": True, "classifiers": False, "gate": False, "judge": False,
           "holdout": False}


def duel(outcome: str, opponent: str = "base", attacker: str = "atk") -> Duel:
    """A duel whose decision, from the real decision rule, has the wanted outcome."""
    opp = "flat" if opponent == "base" else "ref"
    n = 30
    if outcome == "won":
        a, b = [0.4] * n, [0.9] * n
    elif outcome == "lost":
        a, b = [0.9] * n, [0.4] * n
    else:
        a, b = [0.6, 0.7] * (n // 2), [0.7, 0.6] * (n // 2)
    d = decide(a, b, labels=(opp, attacker))
    if outcome == "incomplete":
        d = Decision(**{**d.to_dict(versioned=False), "winner": "incomplete",
                        "labels": (opp, attacker)})
    return Duel(opponent=opponent, partition="evaluation", attacker=attacker,
                opponent_label=opp, decision=d, mean_d={opp: {"pace": 0.5},
                                                        attacker: {"pace": 1.0}},
                delta_d={"pace": 0.5}, n=n)


def test_outcomes_follow_the_decision_rule() -> None:
    assert duel("won").outcome == "won" and duel("won").lcb > duel("won").decision.margin
    assert duel("lost").outcome == "lost"
    assert duel("tied").outcome == "tied"
    assert duel("incomplete").outcome == "incomplete"


@pytest.mark.parametrize(("outcomes", "instruments", "want"), [
    # instruments on: the duels decide
    (("lost", "lost"), ALL_ON, DEFENDED),
    (("tied", "lost"), ALL_ON, DEFENDED),
    (("tied", "tied"), ALL_ON, DEFENDED),
    (("won", "lost"), ALL_ON, VULNERABLE),
    (("lost", "won"), ALL_ON, VULNERABLE),
    (("won", "incomplete"), ALL_ON, VULNERABLE),
    (("tied", "incomplete"), ALL_ON, NOT_TESTED),
    # the needed instrument off: never DEFENDED, whatever happened
    (("lost", "lost"), OFFLINE, NOT_TESTED),
    (("won", "won"), OFFLINE, NOT_TESTED),
])
def test_verdict_table(outcomes: tuple[str, str], instruments: dict[str, bool],
                       want: str) -> None:
    deciding = [duel(outcomes[0], "base"), duel(outcomes[1], "reference")]
    got, reason = verdict(needs=("gate",), instruments=instruments, deciding=deciding)
    assert got == want, reason


def test_not_tested_reason_names_the_instrument_and_a_win() -> None:
    v, reason = verdict(needs=("gate",), instruments=OFFLINE,
                        deciding=[duel("lost", "base"), duel("lost", "reference")])
    assert v == NOT_TESTED
    assert "needs the ASR gate" in reason and "gate OFF in this configuration" in reason
    assert "WINS" not in reason
    v, reason = verdict(needs=("judge", "holdout"), instruments=OFFLINE,
                        deciding=[duel("won", "base")])
    assert v == NOT_TESTED
    assert "judge OFF" in reason and "no held-out salt" in reason
    assert "it WINS here (vs base (flat): won, LCB" in reason
    assert "this configuration is open to it" in reason
    # probes-only attacks are tested offline
    v, _ = verdict(needs=("probes",), instruments=OFFLINE, deciding=[duel("won", "base")])
    assert v == VULNERABLE
    v, reason = verdict(needs=("probes",), instruments=OFFLINE, deciding=[])
    assert v == NOT_TESTED and reason == "no duel was run"


def row(name: str, v: str, outcomes: tuple[str, str], needs: tuple[str, ...] = ("probes",),
        reason: str = "because") -> AttackRow:
    b, r = duel(outcomes[0], "base", name), duel(outcomes[1], "reference", name)
    return AttackRow(name=name, summary=f"{name} does <things> | pipes", defence="the defence",
                     needs=needs, decided_by=("base", "reference"),
                     system_id=f"redteam/{name}()<flat@1>", base_label="flat", vs_base=b,
                     vs_reference=r, moved=("pace", 0.5), verdict=v, reason=reason)


def result(*rows: AttackRow) -> RedteamResult:
    return RedteamResult(
        rows=rows,
        configuration={"reference": {"label": "ref", "system_id": "ref@1"},
                       "flat": {"label": "flat", "system_id": "flat@1"},
                       "selection": {"evaluation_items": 30},
                       "evaluation_partition": "evaluation"},
        instruments=dict(OFFLINE), status=["intelligibility gate OFF: no transcriber"],
        timings={"total_s": 12.5})


def test_exit_codes() -> None:
    assert result(row("a", DEFENDED, ("lost", "lost"))).exit_code == EXIT_OK
    assert result(row("a", NOT_TESTED, ("won", "lost"), ("gate",))).exit_code == EXIT_OK
    assert result(row("a", DEFENDED, ("lost", "lost")),
                  row("b", VULNERABLE, ("won", "lost"))).exit_code == EXIT_VULNERABLE
    assert result(row("a", NOT_TESTED, ("incomplete", "lost"))).exit_code == EXIT_INCOMPLETE
    assert (EXIT_OK, EXIT_VULNERABLE, EXIT_INCOMPLETE) == (0, 1, 3)


def sample() -> RedteamResult:
    return result(row("noise", VULNERABLE, ("won", "tied"), reason="the attacker wins"),
                  row("silence", DEFENDED, ("lost", "lost")),
                  row("other-sentence", NOT_TESTED, ("tied", "tied"), ("gate",),
                      reason="needs the ASR gate; gate OFF in this configuration"))


def test_table_json_and_markdown(tmp_path: Path) -> None:
    r = sample()
    text = r.table()
    lines = text.splitlines()
    assert lines[0].startswith("vocencebench redteam — reference ref, flat base flat, 30 items")
    assert "instruments: probes ON · classifiers OFF · gate OFF · judge OFF · holdout OFF" \
        in text
    head = next(i for i, ln in enumerate(lines) if ln.startswith("attack"))
    assert lines[head + 1].split()[:2] == ["noise", "VULNERABLE"]
    assert "won (LCB +" in lines[head + 1] and "pace +0.500" in lines[head + 1]
    assert "other-sentence: NOT TESTED — needs the ASR gate" in text
    assert "DEFENDED 1 · VULNERABLE 1 · NOT TESTED 1 · wall time 12.5 s" in text

    out = r.save(tmp_path / "rt")
    assert sorted(p.name for p in out.iterdir()) == sorted(OUTPUT_FILES)  # no temp files
    data = json.loads((out / "redteam.json").read_text(encoding="utf-8"))
    assert data["kind"] == "redteam" and data["schema_version"] == 1
    assert data["verdicts"] == {"noise": VULNERABLE, "silence": DEFENDED,
                                "other-sentence": NOT_TESTED}
    assert data["exit_code"] == EXIT_VULNERABLE
    assert data["instruments"]["gate"] is False
    d0 = data["rows"][0]["vs_base"]
    assert d0["decision"]["kind"] == "decision" and d0["outcome"] == "won"
    assert d0["mean_d"]["flat"]["pace"] == 0.5 and d0["delta_d"] == {"pace": 0.5}
    back = load_redteam(out)
    assert back.to_dict() == r.to_dict()
    md = (out / "redteam.md").read_text(encoding="utf-8")
    assert "| noise | **VULNERABLE** | flat |" in md
    assert "&lt;things> \\| pipes" in md  # escaped: no raw HTML, no broken table
    # rewriting replaces the files whole
    result(row("noise", DEFENDED, ("lost", "lost"))).save(out)
    assert json.loads((out / "redteam.json").read_text())["verdicts"] == {"noise": DEFENDED}
    assert sorted(p.name for p in out.iterdir()) == sorted(OUTPUT_FILES)


def test_an_undecided_duel_round_trips_through_json(tmp_path: Path) -> None:
    d = duel("incomplete")
    d = Duel(opponent=d.opponent, partition=d.partition, attacker=d.attacker,
             opponent_label=d.opponent_label, n=d.n,
             decision=Decision(winner="incomplete", lcb=float("nan"), margin=float("nan"),
                               mean_a=float("nan"), mean_b=float("nan"), n=30,
                               reason="2 items incomplete", labels=("flat", "atk")))
    r = result(AttackRow(name="x", summary="s", defence="d", needs=("probes",),
                         decided_by=("base",), system_id="x", base_label="flat",
                         vs_base=d, vs_reference=None, verdict=NOT_TESTED, reason="r"))
    assert r.exit_code == EXIT_INCOMPLETE
    back = load_redteam(r.save(tmp_path))
    got = back.rows[0].vs_base
    assert got is not None and got.outcome == "incomplete" and got.brief() == "incomplete"
    assert json.loads((tmp_path / "redteam.json").read_text())["rows"][0]["vs_base"][
        "decision"]["lcb"] is None


def test_load_refuses_other_files(tmp_path: Path) -> None:
    from vocencebench.errors import ConfigError

    (tmp_path / "redteam.json").write_text('{"kind": "head2head"}')
    with pytest.raises(ConfigError, match=r"not a redteam\.json"):
        load_redteam(tmp_path)
    with pytest.raises(ConfigError, match="cannot read"):
        load_redteam(tmp_path / "missing.json")


# ----------------------------------------------------------------------------- browser

_CANDIDATES = ("chromium", "chromium-browser")
CHROMIUM = next((p for p in map(shutil.which, _CANDIDATES) if p), None)
WIDTH, HEIGHT = 1400, 1400


def _chromium(args: list[str], profile: Path) -> subprocess.CompletedProcess[bytes]:
    assert CHROMIUM is not None
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
           "--no-first-run", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", "--disable-extensions", "--hide-scrollbars",
           f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, timeout=120, check=False)


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium binary on PATH (looked for "
                    f"{', '.join(_CANDIDATES)}); install it with: apt-get install chromium")
def test_html_in_headless_chromium(tmp_path: Path) -> None:
    from PIL import Image

    out = sample().save(tmp_path / "rt")
    page = out / "redteam.html"
    png = tmp_path / "shot.png"
    proc = _chromium([f"--screenshot={png}", f"--window-size={WIDTH},{HEIGHT}",
                      page.resolve().as_uri()], tmp_path / "p1")
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")[-2000:]
    with Image.open(png) as im:
        assert im.size == (WIDTH, HEIGHT)
        rgb = im.convert("RGB")
    colours = rgb.getcolors(maxcolors=WIDTH * HEIGHT)
    assert colours is not None
    count = {c: n for n, c in colours}
    # the verdict cells, each in its colour: red VULNERABLE, green DEFENDED, grey NOT TESTED
    for col in ((0xDC, 0x26, 0x26), (0x05, 0x96, 0x69), (0x6B, 0x72, 0x80)):
        assert count.get(col, 0) > 300, col
    # the rows are tinted by verdict
    assert count.get((0xFE, 0xF2, 0xF2), 0) > 1000 and count.get((0xEC, 0xFD, 0xF5), 0) > 1000
    dom = _chromium(["--dump-dom", page.resolve().as_uri()], tmp_path / "p2")
    assert dom.returncode == 0
    text = dom.stdout.decode("utf-8")
    assert '<tr class="row vulnerable"' in text and '<tr class="row not-tested"' in text
    assert "<title>vocencebench redteam: ref</title>" in text
    assert text.count("<svg") == 1
    assert "&lt;things&gt;" in text and "<things>" not in text
    html_text = page.read_text(encoding="utf-8")
    for tag in ("tr", "td", "rect", "table"):  # nothing dropped by the parser
        assert len(re.findall(rf"<{tag}\b", text)) == len(re.findall(rf"<{tag}\b", html_text))
    # self-contained: nothing is fetched
    assert not re.search(r"(src|href)\s*=|<link\b|<script\b|url\(", html_text)
