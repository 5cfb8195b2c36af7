"""The template corpus: formulaic but valid items on the balanced assignment, for offline
tests and CI."""

from __future__ import annotations

from collections.abc import Sequence

from ..constants import CORPUS_SEED, CORPUS_SIZE
from ..errors import CorpusError
from ..schema import Item
from ..traits import TRAITS, TraitRegistry
from .checks import script_key
from .sampler import RawStream, balanced_assignment

__all__ = ["generate_template_corpus", "person_noun"]


_T_EMOTION = {"neutral": "emotionally neutral", "disgust": "disgusted"}
_T_PACE = {"slow": "slowly", "moderate": "at a moderate pace", "fast": "quickly"}
_T_LOUD = {"quiet": "quietly", "normal": "at a normal volume", "loud": "loudly"}
_T_PITCH = {"low": "in a low-pitched voice", "medium": "at a medium pitch",
            "high": "in a high-pitched voice"}

_EASY = (
    ("Please pass", "Can you find", "Let's paint", "I found", "Where is", "Bring me",
     "Look at", "We need", "Hand over", "Put away"),
    ("red", "blue", "green", "yellow", "purple", "orange", "pink", "brown", "silver", "golden",
     "white", "black"),
    ("cup", "kite", "chair", "book", "hat", "spoon", "bike", "lamp", "box", "coat", "ball",
     "shoe", "plate", "pen", "door", "rug", "bag", "key", "sock", "bowl"),
)
_NORMAL = (
    ("My cousin", "Our neighbour", "The plumber", "Somebody", "The delivery driver",
     "My friend", "Our coach", "The teacher"),
    ("by the back door", "on the kitchen table", "near the garden gate", "under the stairs",
     "in the hallway", "beside the shed"),
    ("bring it inside", "move it", "check on it", "hang it up", "tidy it away",
     "take a photo of it"),
    ("dinner", "the rain starts", "lunch", "the guests arrive", "we leave",
     "the shops close"),
)
_TWISTERS = (
    (("Peter", "Penny", "Paula", "Percy"), ("picked", "packed", "pinched", "poked"),
     ("plump", "purple", "prickly", "pink"), ("peppers", "pickles", "pears", "pebbles")),
    (("Sally", "Sam", "Susie", "Simon"), ("sold", "sorted", "stacked", "shook"),
     ("silky", "slippery", "silver", "shiny"), ("shells", "socks", "scarves", "sacks")),
    (("Betty", "Bob", "Bella", "Barry"), ("bought", "baked", "borrowed", "bundled"),
     ("big", "bumpy", "blue", "bitter"), ("buns", "buttons", "biscuits", "bottles")),
    (("Fred", "Freya", "Frank", "Frances"), ("fried", "froze", "fetched", "flipped"),
     ("fresh", "frilly", "frosty", "fine"), ("fish", "figs", "fritters", "flapjacks")),
)
_NESTED = (
    ("parcel", "letter", "ladder", "bicycle", "basket", "umbrella"),
    ("courier", "neighbour", "cousin", "plumber", "painter", "gardener"),
    ("lost the map last week", "moved in next door", "fixed our roof in May",
     "stayed with us over winter", "sings in the choir", "we met at the station"),
    ("by the gate", "in the porch", "on the landing", "behind the shed"),
    ("finally here", "still missing", "back in one piece", "mine after all"),
)
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")
_WORDS = ("north", "maple", "cedar", "harbour", "copper", "lantern", "orbit", "pixel", "meadow",
          "summit")


def _article(word: str) -> str:
    w = word.lower()
    if w[:1].isdigit():
        return "an" if w.startswith(("8", "11", "18")) else "a"
    return "an" if w[:1] in "aeiou" else "a"


def person_noun(age: str, gender: str) -> str:
    """The noun that names a speaker of ``age`` (years, a decimal string) and ``gender``:
    boy or girl under 18, else man or woman (``"male"`` → man, any other gender → woman; an
    age that is not a number counts as adult)."""
    try:
        young = float(age) < 18
    except ValueError:
        young = False
    return ("boy" if young else "man") if gender == "male" else ("girl" if young else "woman")


def _template_instruction(traits: dict[str, str], frame: int, registry: TraitRegistry) -> str:
    age = traits.get("age", "30")
    g = traits.get("gender", "female")
    noun = person_noun(age, g)
    pron = "he" if g == "male" else "she"
    emo = _T_EMOTION.get(traits.get("emotion", ""), traits.get("emotion", ""))
    acc = traits.get("accent", "")
    pace = _T_PACE.get(traits.get("pace", ""), traits.get("pace", ""))
    loud = _T_LOUD.get(traits.get("loudness", ""), traits.get("loudness", ""))
    pitch = _T_PITCH.get(traits.get("pitch", ""), traits.get("pitch", ""))
    tone = traits.get("tone", "")
    aged = f"{age}-year-old"
    if frame == 0:
        s = (f"Voice {_article(age)} {aged} {noun} with {_article(acc)} {acc} accent, sounding "
             f"{emo}. {pron.capitalize()} speaks {pace}, {loud}, {pitch}, with a {tone} tone.")
    elif frame == 1:
        s = (f"Cast {_article(acc)} {acc} {noun}, aged {age}, who is {emo}: {pron} talks {pace} "
             f"and {loud} {pitch}, keeping a {tone} tone.")
    else:
        s = (f"Record this as {_article(age)} {aged} {acc} {noun}, {emo}, speaking {pace}, "
             f"{loud} and {pitch}, in a {tone} manner.")
    builtin = {"gender", "age", "pace", "pitch", "loudness", "emotion", "accent", "tone"}
    extra = [f"{t.name.replace('_', ' ')} {traits[t.name]}" for t in registry
             if t.name not in builtin and t.name in traits]
    if extra:
        s += " Also: " + "; ".join(extra) + "."
    return s


def _template_text(category: str, difficulty: int, stream: RawStream) -> str:
    def pick(xs: Sequence[str]) -> str:
        return xs[stream.below(len(xs))]

    if difficulty == 0:
        opener = pick(_EASY[0])
        end = "?" if opener.startswith(("Where", "Can")) else "."
        return f"{opener} the {pick(_EASY[1])} {pick(_EASY[2])}{end}"
    if difficulty == 1:
        return (f"{pick(_NORMAL[0])} left the {pick(_EASY[1])} {pick(_EASY[2])} "
                f"{pick(_NORMAL[1])}, so could you {pick(_NORMAL[2])} before "
                f"{pick(_NORMAL[3])}?")
    if category == "tongue_twister":
        names, verbs, adjs, nouns = _TWISTERS[stream.below(len(_TWISTERS))]
        return (f"{pick(names)} {pick(verbs)} {pick(adjs)} {pick(nouns)} past the "
                f"{pick(adjs)} {pick(nouns)} and {pick(verbs)} {pick(adjs)} {pick(nouns)}.")
    if category == "numbers":
        year = 1990 + stream.below(35)
        return (f"On {1 + stream.below(28)} {pick(_MONTHS)} {year} at {1 + stream.below(12)}:"
                f"{stream.below(60):02d} we paid ${1 + stream.below(9)},{stream.below(1000):03d}."
                f"{stream.below(100):02d}, which is {1 + stream.below(40)}.{stream.below(10)}% "
                f"more than in {year - 1}.")
    if category == "urls":
        a, b = chr(65 + stream.below(26)), chr(65 + stream.below(26))
        return (f"Log in at www.{pick(_WORDS)}{stream.below(100)}.io/help or write to "
                f"{pick(_WORDS)}@{pick(_WORDS)}.org, ticket {a}{b}-{1000 + stream.below(9000)}.")
    return (f"The {pick(_NESTED[0])} that the {pick(_NESTED[1])} who {pick(_NESTED[2])} left "
            f"{pick(_NESTED[3])} is {pick(_NESTED[4])}.")


def generate_template_corpus(n: int = CORPUS_SIZE, seed: int = CORPUS_SEED, *,
                             registry: TraitRegistry = TRAITS) -> list[Item]:
    """A deterministic corpus built from templates on :func:`balanced_assignment`.

    For offline tests and CI only: the phrasing is formulaic (three instruction frames) but
    every item passes :func:`check_corpus`. Same (n, seed, registry) → identical items.
    """
    stream = RawStream(seed + 1)
    seen: set[str] = set()
    items: list[Item] = []
    for k, a in enumerate(balanced_assignment(n, seed, registry=registry)):
        for _ in range(200):
            text = _template_text(a.category, a.difficulty, stream)
            if script_key(text) not in seen:
                break
        else:
            raise CorpusError(f"template pools exhausted at item {a.id}; use a smaller n")
        seen.add(script_key(text))
        items.append(Item(id=a.id, instruction=_template_instruction(a.traits, k % 3, registry),
                          text=text, traits=dict(a.traits), difficulty=a.difficulty,
                          category=a.category))
    return items
