"""Gaming resistance, demonstrated: the red-team suite.

:data:`CATALOGUE` lists documented attacks (each a TTS system that transforms an honest
base system in one stated way); :func:`redteam` runs each against its base and the honest
reference with the caller's instruments and returns a :class:`RedteamResult` whose rows say
DEFENDED, VULNERABLE or NOT TESTED (see ``docs/gaming.md``). ``vb.redteam`` is
:func:`redteam`; the command line is ``vocencebench redteam``.

(The package is called ``gaming`` rather than ``redteam`` so that ``vb.redteam`` stays the
function: importing a submodule ``vocencebench.redteam`` would replace it with the module.)
"""

from __future__ import annotations

from ._result import (
    EXIT_INCOMPLETE,
    EXIT_OK,
    EXIT_VULNERABLE,
    OUTPUT_FILES,
    RedteamResult,
    load_redteam,
    render_html,
    render_markdown,
    render_text,
)
from ._runner import default_reference, instruments_on, redteam, resolve_system
from ._verdict import (
    DEFENDED,
    INSTRUMENT_HINTS,
    NOT_TESTED,
    VULNERABLE,
    AttackRow,
    Duel,
    outcome_of,
    verdict,
)
from .attacks import CATALOGUE, INSTRUMENTS, Attack, AttackSpec, attack_names, get_spec

__all__ = [
    "CATALOGUE",
    "DEFENDED",
    "EXIT_INCOMPLETE",
    "EXIT_OK",
    "EXIT_VULNERABLE",
    "INSTRUMENTS",
    "INSTRUMENT_HINTS",
    "NOT_TESTED",
    "OUTPUT_FILES",
    "VULNERABLE",
    "Attack",
    "AttackRow",
    "AttackSpec",
    "Duel",
    "RedteamResult",
    "attack_names",
    "default_reference",
    "get_spec",
    "instruments_on",
    "load_redteam",
    "outcome_of",
    "redteam",
    "render_html",
    "render_markdown",
    "render_text",
    "resolve_system",
    "verdict",
]
