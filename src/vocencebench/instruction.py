"""Read trait values out of a natural-language voice brief, deterministically.

``parse_instruction("A 70-year-old Canadian man, quiet and low-pitched, ...")`` returns
``{"gender": "male", "age": "78", "accent": "Canadian", ...}`` for every trait it finds. The
corpus validator uses it to prove that each instruction states its fields (invariant 2), the
built-in eSpeak system uses it to turn a brief into synthesis parameters, and users may call
it on their own briefs. :func:`trait_mentions` is the other direction: it lists trait words
that leak into a *script* (invariant 3).

How it reads a brief
--------------------
The text is lower-cased, and hyphens inside words become spaces ("low-pitched" reads as
"low pitched"). Every lexicon entry is a regular expression with a priority; all matches
are collected, then claimed greedily by (priority, longer first, earlier first), and a match
that overlaps an already claimed span is dropped. So "low volume" (a phrase) claims "low"
before any pitch rule can, "neutral accent" is claimed by a blocker that yields nothing, and
"deep voice" is pitch while "deep sorrow" is not. Then, per trait:

* gender: the first person noun (woman, grandfather, lad, ...) wins; without one, the
  majority of he/him/his versus she/her/hers (a tie leaves gender unknown);
* age: an explicit age ("78-year-old", "seventy-eight", "aged 13", "a man of 45",
  "in her late seventies", "mid-forties", "in his 60s") is mapped to the nearest registry age
  (ties go to the younger); without one, a bare number word or vague word ("teenager",
  "middle-aged", "elderly") is the fallback;
* every other trait: the first value claimed in the text.

It has no notion of negation ("not loud" reads as loud). Traits outside the built-in lexicon
(a trait registered by a user) are read from the trait's own values and
:attr:`~vocencebench.traits.Trait.synonyms`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .traits import TRAITS, Trait, TraitRegistry

__all__ = [
    "Contradiction",
    "Mention",
    "find_contradictions",
    "nearest_age",
    "parse_age",
    "parse_instruction",
    "trait_mentions",
    "words_to_number",
]

# --------------------------------------------------------------------------- numbers

_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19,
}
_TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
    "eighty": 80, "ninety": 90,
}
_DECADES = {
    "teens": 10, "twenties": 20, "thirties": 30, "forties": 40, "fifties": 50, "sixties": 60,
    "seventies": 70, "eighties": 80, "nineties": 90,
}
_DECADE_OFFSET = {"early": 2, "mid": 5, "middle": 5, "late": 8, "": 5}

_UNIT_RE = "|".join(sorted(_UNITS, key=len, reverse=True))
_TENS_RE = "|".join(_TENS)
#: A number written in words ("eight", "forty five", "seventy eight") or digits.
_NUM = rf"(?:\d{{1,3}}|(?:{_TENS_RE})(?:\s+(?:{_UNIT_RE}))?|{_UNIT_RE}|a\s+hundred)"
_DECADE_WORD = "|".join(_DECADES)


def words_to_number(words: str) -> int | None:
    """The integer a number phrase names ("seventy eight", "78", "thirteen"), else None."""
    w = re.sub(r"[\s\-]+", " ", words.strip().lower())
    if w.isdigit():
        return int(w)
    if w == "a hundred":
        return 100
    if w in _UNITS:
        return _UNITS[w]
    parts = w.split(" ")
    if parts[0] in _TENS and len(parts) <= 2:
        if len(parts) == 1:
            return _TENS[parts[0]]
        if parts[1] in _UNITS and _UNITS[parts[1]] < 10:
            return _TENS[parts[0]] + _UNITS[parts[1]]
    return None


def nearest_age(years: float, values: Iterable[str]) -> str:
    """The registry age (decimal string) nearest to ``years``; a tie goes to the younger."""
    vals = sorted(values, key=float)
    return min(vals, key=lambda v: (abs(float(v) - years), float(v)))


# --------------------------------------------------------------------------- normalisation


def _normalise(text: str) -> tuple[str, str]:
    """(lower-cased, case-kept) forms of ``text``, equal length, hyphens and dashes as spaces."""
    low: list[str] = []
    keep: list[str] = []
    for ch in text:
        c = ch
        if ch in "\u2018\u2019\u02bc":
            c = "'"
        elif ch in "\u201c\u201d":
            c = '"'
        elif ch in "-\u2010\u2011\u2012\u2013\u2014\u2212_":
            c = " "
        lc = c.lower()
        low.append(lc if len(lc) == 1 else c)
        keep.append(c)
    return "".join(low), "".join(keep)


# --------------------------------------------------------------------------- the lexicon


@dataclass(frozen=True)
class _Entry:
    """One lexicon rule: a pattern that, when claimed, states ``trait = value``.

    ``value`` None makes a blocker (claims its span, states nothing). ``priority``: lower
    claims first. ``script``: whether the words name a trait inside a script (invariant 3).
    ``kind``: for gender, ``noun`` or ``pronoun``; for age, ``explicit`` or ``vague``.
    """

    trait: str
    value: str | None
    pattern: re.Pattern[str]
    priority: int
    script: bool = True
    kind: str = ""
    case_sensitive: bool = False


# Priorities.
_BLOCK, _PHRASE, _WORD, _WINDOW = 0, 1, 2, 3


def _words_re(words: Iterable[str]) -> str:
    alts = sorted({w.strip().lower() for w in words if w.strip()}, key=len, reverse=True)
    return "|".join(r"\s+".join(re.escape(p) for p in a.replace("-", " ").split()) for a in alts)


def _rx(body: str, *, flags: int = 0) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w']){body}(?![\w])", flags)


# Words meaning each value. Plain words count anywhere (and are forbidden in scripts);
# contextual ("weak") words count only next to a trait noun and are allowed in scripts.
_EMOTION: dict[str, tuple[str, ...]] = {
    "neutral": ("neutral", "neutrally", "emotionless", "emotionlessly", "matter of fact",
                "matter of factly", "unemotional", "unemotionally", "impassive", "impassively",
                "dispassionate", "dispassionately", "without emotion", "without any emotion",
                "no emotion", "no particular emotion", "expressionless"),
    "calm": ("calm", "calmly", "calmness", "composed", "relaxed", "tranquil", "tranquilly",
             "collected", "serene", "serenely", "placid", "placidly", "unruffled", "at ease",
             "at peace", "unflustered", "unbothered", "even keeled", "level headed"),
    "happy": ("happy", "happily", "happiness", "joyful", "joyfully", "joyous", "joyously",
              "joy", "delighted", "delightedly", "delight", "glad", "gladly", "elated",
              "elation", "thrilled", "overjoyed", "gleeful", "gleefully", "glee", "ecstatic",
              "jubilant", "jubilantly", "in high spirits"),
    "sad": ("sad", "sadly", "sadness", "sorrowful", "sorrowfully", "sorrow", "heartbroken",
            "grieving", "grief", "grief stricken", "melancholy", "melancholic", "mournful",
            "mournfully", "downcast", "unhappy", "gloomy", "gloomily", "dejected", "dejectedly",
            "despondent", "tearful", "tearfully", "forlorn", "miserable", "miserably",
            "heartache", "crestfallen", "woeful", "woefully", "doleful", "dolefully"),
    "angry": ("angry", "angrily", "anger", "furious", "furiously", "fury", "irate", "enraged",
              "livid", "irritated", "irritation", "fuming", "seething", "outraged", "annoyed",
              "indignant", "indignantly", "rage", "raging", "infuriated", "incensed", "wrathful",
              "exasperated"),
    "fearful": ("fearful", "fearfully", "fear", "frightened", "scared", "afraid", "terrified",
                "nervous", "nervously", "anxious", "anxiously", "anxiety", "worried",
                "worriedly", "panicked", "panicky", "panicking", "uneasy", "apprehensive",
                "apprehensively", "jittery", "petrified", "alarmed", "dread", "dreading",
                "on edge", "fright", "timid", "timidly"),
    "disgust": ("disgust", "disgusted", "disgustedly", "revolted", "repulsed", "grossed out",
                "sickened", "nauseated", "revulsion", "repelled", "repugnance", "queasy with"),
    "surprised": ("surprised", "surprise", "astonished", "astonishment", "amazed",
                  "amazement", "startled", "stunned", "shocked", "taken aback", "flabbergasted",
                  "dumbfounded", "astounded", "thunderstruck", "gobsmacked"),
}

_TONE: dict[str, tuple[str, ...]] = {
    "warm": ("warm", "warmly", "warmth", "warmer", "affectionate", "affectionately",
             "heartfelt"),
    "authoritative": ("authoritative", "authoritatively", "commanding", "commandingly",
                      "assertive", "assertively", "authority", "in command"),
    "playful": ("playful", "playfully", "playfulness", "teasing", "teasingly", "mischievous",
                "mischievously", "impish", "impishly", "cheeky", "cheekily", "jokey",
                "jokingly", "whimsical", "puckish"),
    "serious": ("serious", "seriously", "seriousness", "grave", "gravely", "solemn",
                "solemnly", "earnest", "earnestly", "sombre", "somber"),
    "soothing": ("soothing", "soothingly", "comforting", "comfortingly", "reassuring",
                 "reassuringly", "calming", "consoling", "lulling"),
    "cheerful": ("cheerful", "cheerfully", "cheerfulness", "cheery", "cheerily", "upbeat",
                 "sunny", "chirpy", "chipper", "bubbly", "perky", "breezy", "sunnily"),
    "sarcastic": ("sarcastic", "sarcastically", "sarcasm", "sardonic", "sardonically",
                  "mocking", "mockingly", "dry", "dryly", "drily", "wry", "wryly", "snarky",
                  "snide", "ironic", "ironically", "deadpan sarcasm"),
    "formal": ("formal", "formally", "formality", "businesslike", "prim and proper",
               "buttoned up", "stately"),
}
#: Tone words that count only when a tone noun (tone, manner, delivery, ...) is next to them.
_TONE_WEAK: dict[str, tuple[str, ...]] = {
    "warm": ("friendly", "kindly", "tender"),
    "playful": ("joking", "silly", "light hearted", "lighthearted"),
    "serious": ("heavy", "weighty"),
    "authoritative": ("firm", "confident", "stern", "forceful", "no nonsense"),
    "soothing": ("soft", "gentle", "hushing"),
    "cheerful": ("bright", "jolly", "merry"),
    "sarcastic": ("deadpan", "biting", "caustic"),
    "formal": ("proper", "professional", "polished", "official", "courteous", "polite"),
}
#: Synonyms the parser reads in a brief but that do not, on their own, name a trait inside a
#: script ("six sheep slid swiftly" is a tongue-twister, not a pace direction).
_PARSER_ONLY = frozenset({
    "swift", "swiftly", "speedy", "speedily", "hasty", "hastily", "rushed", "rushing", "racing",
    "rattling off", "in a rush", "in a hurry", "breakneck", "lingering", "lingeringly",
    "plodding", "sluggish", "sluggishly", "at a crawl", "drawn out", "boom", "projects",
    "projected", "projecting", "resounding", "thunderous", "blaring", "murmur", "murmurs",
    "murmured", "murmuring", "hush", "faintly", "softer", "alarmed", "timid",
    "timidly", "dread", "dreading", "fright", "stately", "heartfelt", "authority",
    "in command", "piping", "squeaky", "shrill", "collected", "composed", "at ease", "at peace",
    "relaxed", "sober", "brisk", "briskly", "hurried", "hurriedly", "glee", "rage", "raging",
    "cheeky", "cheekily", "breezy", "bubbly", "perky", "chipper", "sunny", "sunnily",
    "lulling", "consoling", "ironic", "ironically", "steadily", "low level", "mocking",
    "mockingly", "grave", "gravely", "earnest", "earnestly", "delight", "dry", "drily", "dryly",
    "thrilled", "worried", "worriedly", "uneasy", "fury", "on edge",
})
_TONE_NOUNS = (r"(?:tone|tones|manner|delivery|quality|air|style|attitude|demeanou?r|"
               r"register|inflection|way)")

_PACE: dict[str, tuple[str, ...]] = {
    "slow": ("slow", "slowly", "slower", "slowed", "unhurried", "unhurriedly", "leisurely",
             "unrushed", "languid", "languidly", "plodding", "sluggish", "sluggishly",
             "at a crawl", "drawn out", "slow and steady", "slow paced", "slow moving",
             "lingering", "lingeringly"),
    "moderate": ("moderately paced", "moderate paced", "medium paced", "evenly paced",
                 "steadily paced", "normally paced", "at a steady clip", "steadily"),
    "fast": ("fast", "faster", "quick", "quickly", "quicker", "rapid", "rapidly", "brisk",
             "briskly", "hurried", "hurriedly", "at speed", "speedy", "speedily", "swift",
             "swiftly", "hasty", "hastily", "rushed", "rushing", "racing", "rattling off",
             "rapid fire", "fast paced", "fast talking", "quick fire", "breakneck",
             "in a rush", "in a hurry"),
}
_PITCH: dict[str, tuple[str, ...]] = {
    "low": ("low pitched", "low pitch", "deep voiced", "low register", "deep register",
            "deep pitch", "lower pitch", "bass voice", "deep toned", "low voiced",
            "low toned", "deep tones", "low tones", "pitched low", "pitched deep",
            "pitched down", "low in pitch", "deep in pitch", "pitched lower"),
    "medium": ("medium pitch", "medium pitched", "mid range pitch", "mid range pitched",
               "midrange pitch", "mid pitch", "mid pitched", "middle pitch", "natural pitch",
               "moderate pitch", "moderately pitched", "average pitch", "normal pitch",
               "neutral pitch", "regular pitch", "ordinary pitch", "mid register",
               "middle register", "medium register", "mid range register", "natural register",
               "pitched in the middle", "pitched at a medium level", "pitched naturally",
               "neither high nor low", "neither low nor high", "moderate register",
               "average register", "normal register", "pitched normally", "medium in pitch",
               "middle of the range", "middle of her range", "middle of his range",
               "mid range voice", "medium range pitch"),
    "high": ("high pitched", "high pitch", "high register", "higher pitch", "high voiced",
             "pitched high", "pitched up", "squeaky", "shrill", "piping", "high in pitch",
             "pitched higher", "high toned"),
}
_LOUD: dict[str, tuple[str, ...]] = {
    "quiet": ("quiet", "quietly", "quieter", "softly", "soft spoken", "hushed", "hush",
              "whisper", "whispers", "whispering", "whispered", "whisper quiet", "murmuring",
              "murmured", "murmurs", "murmur", "under her breath", "under his breath",
              "under their breath", "low volume", "barely audible", "low level",
              "soft voice", "soft voiced", "low loudness", "volume low", "volume down",
              "low in volume", "sotto voce", "subdued volume", "gentle volume", "hushed tones",
              "soft volume", "softer", "faintly", "muted volume"),
    "normal": ("normal volume", "conversational volume", "regular volume", "ordinary volume",
               "everyday volume", "moderate volume", "medium volume", "average volume",
               "normal loudness", "moderate loudness", "medium loudness", "average loudness",
               "conversational level", "speaking volume", "natural volume", "standard volume",
               "neither loud nor quiet", "neither quiet nor loud", "neither loud nor soft",
               "comfortable volume", "indoor volume", "indoor voice", "conversational loudness",
               "typical volume", "usual volume", "normal speaking volume", "mid volume",
               "middling volume", "even volume", "steady volume", "normal level",
               "moderately loud", "medium loud"),
    "loud": ("loud", "loudly", "louder", "loudest", "booming", "boomingly", "boom",
             "at full volume", "full volume", "high volume", "projecting", "projects",
             "projected", "shouting", "shouts", "shouted", "yelling", "yells", "yelled",
             "bellowing", "bellows", "bellowed", "hollering", "thunderous",
             "at the top of her lungs", "at the top of his lungs", "at the top of their lungs",
             "at the top of her voice", "at the top of his voice", "at the top of my lungs",
             "raised voice", "volume high", "volume up", "high in volume", "blaring",
             "full throated", "full throttle volume", "loud voiced", "resounding"),
}
_GENDER_NOUNS: dict[str, tuple[str, ...]] = {
    "male": ("man", "men", "boy", "boys", "gentleman", "gentlemen", "guy", "male", "lad",
             "father", "grandfather", "grandpa", "granddad", "grandad", "dad", "daddy", "son",
             "fellow", "chap", "gent", "uncle", "brother", "husband", "mr", "sir", "schoolboy",
             "grandson", "king", "prince", "monk", "priest", "bloke", "dude", "nephew",
             "boyfriend", "businessman", "fisherman", "postman", "policeman", "fireman",
             "chairman", "salesman", "craftsman", "waiter", "actor", "widower", "lord",
             "masculine", "baritone", "tenor"),
    "female": ("woman", "women", "girl", "girls", "lady", "ladies", "female", "lass",
               "mother", "grandmother", "grandma", "granny", "gran", "mum", "mom", "mommy",
               "mummy", "daughter", "aunt", "auntie", "sister", "wife", "mrs", "ms", "madam",
               "schoolgirl", "granddaughter", "queen", "princess", "nun", "gal", "niece",
               "girlfriend", "businesswoman", "policewoman", "chairwoman", "waitress",
               "actress", "widow", "feminine", "soprano", "matriarch", "heroine"),
}
#: Gender words that name the speaker in a script (family words and pronouns do not).
_GENDER_SCRIPT = {
    "man", "men", "boy", "boys", "gentleman", "gentlemen", "guy", "male", "lad", "gent",
    "woman", "women", "girl", "girls", "lady", "ladies", "female", "lass", "masculine",
    "feminine",
}
_PRONOUNS = {"male": ("he", "him", "his", "himself"),
             "female": ("she", "her", "hers", "herself")}

_ACCENT: dict[str, tuple[str, ...]] = {
    "American": ("american", "americans", "america", "american english", "general american",
                 "united states", "the states", "midwestern", "texan", "californian",
                 "new yorker", "new york accent", "southern us", "yankee"),
    "British": ("british", "britain", "briton", "brit", "brits", "british english",
                "received pronunciation", "queen's english", "king's english", "bbc english",
                "scottish", "welsh", "cockney", "londoner", "england", "united kingdom",
                "great britain", "english accent", "english accented", "rp accent"),
    "Australian": ("australian", "australians", "australia", "aussie", "aussies",
                   "australian english", "strine"),
    "Indian": ("indian", "indians", "india", "indian english", "south asian accent",
               "hindi accent"),
    "Canadian": ("canadian", "canadians", "canada", "canadian english", "canuck"),
}
_ACCENT_CASE: dict[str, tuple[str, ...]] = {
    "American": (r"U\.?S\.?A?\.?", r"USA"),
    "British": (r"U\.?K\.?", r"RP"),
}
#: Places that suggest an accent; weak evidence (used only when no accent word is present).
_ACCENT_PLACES: dict[str, tuple[str, ...]] = {
    "American": ("texas", "california", "new york", "boston", "chicago", "ohio", "georgia",
                 "alabama", "brooklyn", "los angeles", "the midwest", "the south"),
    "British": ("london", "manchester", "liverpool", "yorkshire", "scotland", "wales",
                "birmingham", "oxford", "glasgow", "edinburgh"),
    "Australian": ("sydney", "melbourne", "brisbane", "perth", "queensland", "the outback"),
    "Indian": ("mumbai", "delhi", "bangalore", "bengaluru", "chennai", "kolkata", "kerala",
               "punjab", "hyderabad"),
    "Canadian": ("toronto", "vancouver", "montreal", "ottawa", "calgary", "alberta",
                 "ontario", "nova scotia", "manitoba"),
}
_PERSON = (r"(?:man|men|woman|women|boy|girl|lady|gentleman|guy|lad|lass|speaker|narrator|"
           r"voice|teacher|student|person|grandmother|grandfather|mother|father|kid|child|"
           r"teenager|chap|gent|mum|dad|granny|grandpa|grandma|fellow|accent|accented|"
           r"businessman|businesswoman|schoolboy|schoolgirl)")

_PITCH_NOUN = r"(?:pitch|pitched|register|voice|tones)"
_LOUD_NOUN = r"(?:volume|loudness|level|voice)"
_PACE_NOUN = (r"(?:pace|pacing|speed|tempo|rate|speaking rate|rhythm|cadence|clip|"
              r"delivery speed|speech rate)")
#: Up to %d filler words between a modifier and its noun (never another trait noun).
_GAP = (r"(?:[\s,:]+(?!(?:pitch|volume|loudness|pace|speed|tempo|and|but|while|with)\b)"
        r"[a-z']+){0,%d}")


def _entries_for(
    trait: str,
    table: Mapping[str, Iterable[str]],
    *,
    priority_multi: int = _PHRASE,
    script: bool = True,
    kind: str = "",
) -> list[_Entry]:
    out: list[_Entry] = []
    for value, words in table.items():
        for flag in (True, False):
            group = [w for w in words if (w not in _PARSER_ONLY) == flag]
            single = [w for w in group if len(w.replace("-", " ").split()) == 1]
            multi = [w for w in group if len(w.replace("-", " ").split()) > 1]
            if single:
                out.append(_Entry(trait, value, _rx(f"(?:{_words_re(single)})"), _WORD,
                                  script and flag, kind))
            if multi:
                out.append(_Entry(trait, value, _rx(f"(?:{_words_re(multi)})"), priority_multi,
                                  script and flag, kind))
    return out


def _window(trait: str, value: str, body: str, priority: int = _WINDOW) -> _Entry:
    return _Entry(trait, value, _rx(body), priority, script=False)


def _builtin_entries() -> list[_Entry]:
    e: list[_Entry] = []
    # Blockers: spans that look like trait words but state nothing.
    blockers = [
        r"neutral(?=\s+(?:(?:american|british|australian|indian|canadian|english)\s+)?accent)",
        r"(?:in|speaks?|speaking|spoken|reads?|reading)\s+(?:plain\s+)?english",
        r"english\s+(?:text|words|language|sentence|lines?|script)",
        r"surprisingly", r"high\s+school", r"high\s+spirited", r"fast\s+food",
        r"low\s+key", r"dry\s+(?:cleaning|run|cleaner)",
        r"voice\s+actor", r"voice\s+actress", r"sound\s+director",
        r"tone\s+of\s+voice", r"the\s+states?\s+of",
        # a participle with an object is an action, not a manner: "reassuring a friend"
        r"(?:reassuring|comforting|soothing|teasing|mocking|consoling|calming)\s+(?:a|an|the|"
        r"her|his|their|my|your|our|someone|somebody|him|them|us|me|everyone|people)",
    ]
    e += [_Entry("", None, _rx(b), _BLOCK, script=False) for b in blockers]

    e += _entries_for("emotion", _EMOTION)
    e += _entries_for("tone", _TONE)
    for value, words in _TONE_WEAK.items():
        alt = _words_re(words)
        e.append(_Entry("tone", value, _rx(rf"(?:{alt})\s+(?:[a-z]+\s+)?{_TONE_NOUNS}"),
                        _PHRASE, script=False, kind="weak"))
        e.append(_Entry("tone", value, _rx(rf"{_TONE_NOUNS}\s+(?:(?:that\s+is|is|stays|"
                                           rf"remains|kept|of)\s+)?(?:[a-z]+ly\s+)?(?:{alt})"),
                        _PHRASE, script=False, kind="weak"))
    e += _entries_for("pace", _PACE)
    e += _entries_for("pitch", _PITCH)
    e += _entries_for("loudness", _LOUD)
    e += _entries_for("gender", _GENDER_NOUNS, kind="noun")
    e += _entries_for("accent", _ACCENT)
    for value, pats in _ACCENT_CASE.items():
        e.append(_Entry("accent", value, re.compile(rf"(?<![\w.])(?:{'|'.join(pats)})(?![\w])"),
                        _WORD, script=True, case_sensitive=True))
    e.append(_window("accent", "British", rf"english(?=\s+{_PERSON})", _WORD))
    for value, places in _ACCENT_PLACES.items():
        e.append(_Entry("accent", value, _rx(rf"(?:from|in|of)\s+(?:{_words_re(places)})"),
                        _PHRASE, script=False, kind="weak"))

    # Pitch: modifiers before a pitch noun, adjectives after it.
    pitch_mods = {
        "low": r"low|deep|lower|deeper|bass|low\s+ish|husky|gravelly\s+low",
        "medium": r"medium|mid|middle|moderate|average|normal|natural|neutral|regular|"
                  r"mid\s+range|midrange|middling|even",
        "high": r"high|higher|bright\s+high|squeaky|piping|shrill|light\s+high",
    }
    for value, mods in pitch_mods.items():
        e.append(_window("pitch", value, rf"(?:{mods}){_GAP % 2}[\s,:]+(?:pitch|pitched|register"
                                         rf"|voice|tones|range)"))
        e.append(_window("pitch", value, rf"(?:pitch|register){_GAP % 3}[\s,:]+(?:{mods})"
                                         rf"(?!\s+(?:volume|loudness|pace|speed))"))
    e.append(_window("pitch", "low", rf"voice{_GAP % 3}[\s,:]+(?:deep|low)"
                                     r"(?!\s+(?:volume|loudness|pace|speed))"))
    # Loudness: modifiers before a loudness noun, adjectives after it.
    loud_mods = {
        "quiet": r"low|soft|quiet|hushed|lowered|reduced|gentle|muted|subdued|minimal",
        "normal": r"normal|moderate|medium|average|regular|ordinary|everyday|conversational|"
                  r"natural|standard|typical|usual|even|steady|middling|comfortable|mid",
        "loud": r"high|loud|full|raised|big|maximum|booming|considerable",
    }
    for value, mods in loud_mods.items():
        e.append(_window("loudness", value, rf"(?:{mods}){_GAP % 1}[\s,:]+(?:volume|loudness)"))
        e.append(_window("loudness", value, rf"(?:volume|loudness){_GAP % 3}[\s,:]+(?:{mods})"
                                            r"(?!\s+(?:pitch|pace|speed|register))"))
    # Pace: modifiers before a pace noun, adjectives after it.
    pace_mods = {
        "slow": r"slow|slower|leisurely|unhurried|relaxed|gentle|sluggish|crawling|measured\s+"
                r"slow|languid|lazy|easy|dragging|deliberate",
        "moderate": r"moderate|moderately|medium|average|normal|natural|steady|even|regular|"
                    r"ordinary|conversational|comfortable|middling|mid|standard|typical|usual|"
                    r"measured|balanced|unremarkable|everyday",
        "fast": r"fast|quick|quicker|faster|rapid|brisk|hurried|breakneck|speedy|swift|high|"
                r"racing|rushed|lively|snappy|clipped",
    }
    for value, mods in pace_mods.items():
        e.append(_window("pace", value, rf"(?:{mods}){_GAP % 1}[\s,:]+{_PACE_NOUN}"))
        e.append(_window("pace", value, rf"{_PACE_NOUN}{_GAP % 3}[\s,:]+(?:{mods})"
                                        r"(?!\s+(?:pitch|volume|loudness|register))"))
    # "moderately" alone is pace unless it modifies another trait word.
    e.append(_Entry("pace", "moderate",
                    _rx(r"moderately(?!\s+(?:loud|loudly|quiet|quietly|high|low|pitched|"
                        r"deep|soft|softly|fast|quick|quickly|slow|slowly|brisk|briskly))"),
                    _WORD, script=False))
    e.append(_window("pace", "moderate", r"(?:neither\s+(?:fast|quick|rushed)\s+nor\s+slow|"
                                         r"neither\s+slow\s+nor\s+(?:fast|quick|rushed)|"
                                         r"(?:not\s+too\s+(?:fast|quick)\s+(?:and|or|,)?\s*"
                                         r"not\s+too\s+slow)|not\s+too\s+slow\s+(?:and|or|,)?"
                                         r"\s*not\s+too\s+(?:fast|quick))", _PHRASE))
    return e


_BUILTIN = _builtin_entries()
_BUILTIN_TRAITS = ("gender", "age", "pace", "pitch", "loudness", "emotion", "accent", "tone")

# Pronouns are read separately (majority vote), never claimed.
_PRONOUN_RE = {g: _rx(f"(?:{'|'.join(ws)})") for g, ws in _PRONOUNS.items()}

# --------------------------------------------------------------------------- ages

_AGE_EXPLICIT = [
    # 78-year-old, seventy eight years old, 8 yo, 45 yrs old
    re.compile(rf"(?<![\w'])({_NUM})\s*(?:years?|yrs?|yr)\s+old(?![\w])"),
    re.compile(rf"(?<![\w'])({_NUM})\s*(?:yo|y\s*o)(?![\w])"),
    # aged 13, age 13, of age 13, at age thirteen
    re.compile(rf"(?<![\w'])(?:aged|age|ages)\s*:?\s+({_NUM})(?![\w])"),
    # 13 years of age
    re.compile(rf"(?<![\w'])({_NUM})\s+years?\s+of\s+age(?![\w])"),
    # a man of 45, a woman of sixty (person noun before "of")
    re.compile(rf"(?<![\w'])(?:{_PERSON[3:-1]}|someone|somebody|one)\s*,?\s+of\s+(?:about\s+|"
               rf"around\s+|roughly\s+)?({_NUM})(?![\w])"),
    # "a British girl, thirteen, ..."
    re.compile(rf"(?<![\w'])(?:{_PERSON[3:-1]})\s*,\s*({_NUM})(?=\s*(?:[,.;:)]|$))"),
    # "who is 45", "she's 60", "he is seventy"
    re.compile(rf"(?<![\w'])(?:is|she's|he's|i'm|turned|turning|just)\s+(?:about\s+|around\s+)?"
               rf"({_NUM})(?!\s*(?:%|percent|minutes|seconds|words|times))(?![\w])"),
]
_AGE_DECADE = re.compile(
    rf"(?<![\w'])(?:(early|mid|middle|late)\s+)?({_DECADE_WORD}|\d0s|\d0's)(?![\w])"
)
_AGE_SOMETHING = re.compile(rf"(?<![\w'])({_TENS_RE})\s*something(?![\w])")
_AGE_VAGUE: tuple[tuple[re.Pattern[str], float], ...] = (
    (_rx(r"(?:teenager|teenaged|teenage|teen|adolescent)s?"), 15.0),
    (_rx(r"(?:child|kid|little\s+(?:boy|girl)|young\s+child|schoolchild|youngster|"
         r"(?:boy|girl)\s+of\s+primary\s+school\s+age)"), 8.0),
    (_rx(r"(?:young\s+(?:man|woman|adult|lady|guy|fellow)|twenty\s*something)"), 22.0),
    (_rx(r"middle\s+aged"), 45.0),
    (_rx(r"(?:elderly|senior\s+citizen|pensioner|old\s+(?:man|woman|lady|gentleman)|"
         r"octogenarian|septuagenarian|retiree|aged\s+(?:man|woman))"), 77.0),
)
_BARE_NUMBER = re.compile(rf"(?<![\w'$£€#@])(?<!\d[.,:/])({_NUM})(?![\w%]|[.,:/]\d)")


def _decade_years(prefix: str | None, decade: str) -> float:
    base = int(decade[:2].rstrip("s'")) if decade[0].isdigit() else _DECADES[decade]
    if base == 10:  # teens: 13–19
        return {"early": 14.0, "mid": 16.0, "middle": 16.0, "late": 18.0}.get(prefix or "", 16.0)
    return float(base + _DECADE_OFFSET[prefix or ""])


@dataclass(frozen=True)
class _AgeHit:
    years: float
    start: int
    end: int
    phrase: str
    explicit: bool


def _age_hits(low: str) -> list[_AgeHit]:
    hits: list[_AgeHit] = []
    taken: list[tuple[int, int]] = []

    def free(a: int, b: int) -> bool:
        return all(b <= s or a >= t for s, t in taken)

    for rx in _AGE_EXPLICIT:
        for m in rx.finditer(low):
            n = words_to_number(m.group(1))
            if n is None or not (1 <= n <= 120) or not free(m.start(), m.end()):
                continue
            hits.append(_AgeHit(float(n), m.start(), m.end(), m.group(0), True))
            taken.append((m.start(), m.end()))
    for m in _AGE_DECADE.finditer(low):
        if not free(m.start(), m.end()):
            continue
        hits.append(_AgeHit(_decade_years(m.group(1), m.group(2)), m.start(), m.end(),
                            m.group(0), True))
        taken.append((m.start(), m.end()))
    for m in _AGE_SOMETHING.finditer(low):
        if free(m.start(), m.end()):
            hits.append(_AgeHit(_TENS[m.group(1)] + 5.0, m.start(), m.end(), m.group(0), True))
            taken.append((m.start(), m.end()))
    hits.sort(key=lambda h: h.start)
    return hits


def parse_age(text: str, *, values: Iterable[str] = TRAITS.get("age").values) -> str | None:
    """The registry age ``text`` states (see module docs), or None when it states none."""
    low, _ = _normalise(text)
    vals = tuple(values)
    hits = _age_hits(low)
    if hits:
        return nearest_age(hits[0].years, vals)
    for rx, years in _AGE_VAGUE:
        if rx.search(low):
            return nearest_age(years, vals)
    for m in _BARE_NUMBER.finditer(low):
        n = words_to_number(m.group(1))
        if n is not None and 5 <= n <= 110:
            return nearest_age(float(n), vals)
    return None


# --------------------------------------------------------------------------- matching


@dataclass(frozen=True)
class Mention:
    """A trait word found in a text: ``trait`` and ``value`` it states, the ``phrase`` as
    written, and its character span ``[start, end)``."""

    trait: str
    value: str
    phrase: str
    start: int
    end: int
    kind: str = ""


def _generic_entries(trait: Trait) -> list[_Entry]:
    table: dict[str, list[str]] = {}
    for v in trait.values:
        words = [v, *trait.synonyms.get(v, ())]
        table[v] = [w for w in words if w.strip()]
    return _entries_for(trait.name, table)


def _entries(registry: TraitRegistry) -> list[_Entry]:
    """Built-in entries for built-in traits (restricted to the registry's values, extended by
    its synonyms), generic entries for any other trait."""
    out = [x for x in _BUILTIN if x.trait == ""]
    for t in registry:
        if t.name == "age" and t.scoring == "numeric":
            continue
        if t.name in _BUILTIN_TRAITS:
            own = [x for x in _BUILTIN if x.trait == t.name and x.value in t.values]
            out += own
            known = {x.value for x in own}
            extra = {v: t.synonyms.get(v, ()) for v in t.values}
            for v in t.values:
                if v not in known:
                    extra[v] = (v, *extra[v])
            out += _entries_for(t.name, {v: ws for v, ws in extra.items() if ws})
        else:
            out += _generic_entries(t)
    return out


_Signature = tuple[tuple[str, str, tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]], ...]
_ENTRY_CACHE: dict[_Signature, list[_Entry]] = {}


def _cached_entries(registry: TraitRegistry) -> list[_Entry]:
    """The compiled lexicon for ``registry``, cached by its traits' names, values, synonyms."""
    sig: _Signature = tuple(
        (t.name, t.scoring, t.values,
         tuple(sorted((k, tuple(v)) for k, v in t.synonyms.items())))
        for t in registry
    )
    entries = _ENTRY_CACHE.get(sig)
    if entries is None:
        entries = _ENTRY_CACHE[sig] = _entries(registry)
    return entries


def _claim(text: str, entries: Iterable[_Entry], *, script_only: bool = False) -> list[
        tuple[_Entry, Mention]]:
    low, keep = _normalise(text)
    cands: list[tuple[int, int, int, _Entry, re.Match[str]]] = []
    for ent in entries:
        if script_only and not ent.script and ent.value is not None:
            continue
        src = keep if ent.case_sensitive else low
        for m in ent.pattern.finditer(src):
            if m.end() > m.start():
                cands.append((ent.priority, -(m.end() - m.start()), m.start(), ent, m))
    cands.sort(key=lambda c: (c[0], c[1], c[2]))
    taken: list[tuple[int, int]] = []
    out: list[tuple[_Entry, Mention]] = []
    for _, _, _, ent, m in cands:
        a, b = m.start(), m.end()
        if any(not (b <= s or a >= t) for s, t in taken):
            continue
        taken.append((a, b))
        if ent.value is not None:
            out.append((ent, Mention(ent.trait, ent.value, text[a:b], a, b, ent.kind)))
    out.sort(key=lambda x: x[1].start)
    return out


def _all_mentions(text: str, registry: TraitRegistry) -> dict[str, list[Mention]]:
    found: dict[str, list[Mention]] = {t.name: [] for t in registry}
    for _ent, men in _claim(text, _cached_entries(registry)):
        if men.trait in found:
            found[men.trait].append(men)
    return found


_POSSESSED = re.compile(r"(?:\b(?:her|his|their|my|your|our|whose)|\w's)\s+(?:[a-z]+\s+){0,2}$")


def _gender(text: str, nouns: list[Mention], values: tuple[str, ...]) -> str | None:
    # A possessed noun ("her little brother", "his wife") is someone else, not the speaker.
    low, _ = _normalise(text)
    own = [m for m in nouns if not _POSSESSED.search(low[max(0, m.start - 40):m.start])]
    if own or nouns:
        return (own or nouns)[0].value
    low, _ = _normalise(text)
    counts = {g: len(rx.findall(low)) for g, rx in _PRONOUN_RE.items() if g in values}
    if not counts:
        return None
    best = max(counts.values())
    winners = [g for g, c in counts.items() if c == best]
    return winners[0] if best > 0 and len(winners) == 1 else None


def parse_instruction(text: str, *, registry: TraitRegistry = TRAITS) -> dict[str, str]:
    """Every trait value that ``text`` states, as ``{trait: value}`` with registry values.

    Deterministic and offline. Traits the text does not state are absent from the result
    (never guessed). Ages come back as the nearest registry age (decimal string, years).
    """
    found = _all_mentions(text, registry)
    out: dict[str, str] = {}
    for t in registry:
        if t.name == "age" and t.scoring == "numeric":
            age = parse_age(text, values=t.values)
            if age is not None:
                out["age"] = age
            continue
        hits = found.get(t.name, [])
        if t.name == "gender" and "male" in t.values and "female" in t.values:
            g = _gender(text, hits, t.values)
            if g is not None:
                out["gender"] = g
            continue
        strong = [h for h in hits if h.kind != "weak"]
        if strong or hits:
            out[t.name] = (strong or hits)[0].value
    return out


@dataclass(frozen=True)
class Contradiction:
    """A value the instruction states for ``trait`` that differs from the ``expected`` field:
    ``found`` is the value, ``phrase`` the words that state it."""

    trait: str
    expected: str
    found: str
    phrase: str


def find_contradictions(
    text: str, traits: Mapping[str, str], *, registry: TraitRegistry = TRAITS
) -> list[Contradiction]:
    """Every value stated in ``text`` that disagrees with ``traits`` (trait → expected value).

    Gender compares the speaker's gender (first person noun, else pronoun majority); age
    compares every explicit age phrase (mapped to the nearest registry age); every other trait
    compares each claimed mention. Traits absent from ``traits`` are not checked.
    """
    out: list[Contradiction] = []
    found = _all_mentions(text, registry)
    for t in registry:
        want = traits.get(t.name)
        if want is None:
            continue
        if t.name == "age" and t.scoring == "numeric":
            low, _ = _normalise(text)
            for h in _age_hits(low):
                got = nearest_age(h.years, t.values)
                if got != want:
                    out.append(Contradiction("age", want, got, text[h.start:h.end]))
            continue
        if t.name == "gender" and "male" in t.values and "female" in t.values:
            g = _gender(text, found.get("gender", []), t.values)
            if g is not None and g != want:
                hits = found.get("gender", [])
                phrase = hits[0].phrase if hits else "pronouns"
                out.append(Contradiction("gender", want, g, phrase))
            continue
        for men in found.get(t.name, []):
            if men.value != want and men.kind != "weak":
                out.append(Contradiction(t.name, want, men.value, men.phrase))
    return out


# --------------------------------------------------------------------------- scripts

_SCRIPT_EXTRA: dict[str, tuple[str, ...]] = {
    # Words that name a trait (or describe a voice) without stating a value.
    "pitch": ("pitch", "pitched", "high pitched", "low pitched", "deep voiced"),
    "loudness": ("volume", "loudness"),
    "accent": ("accent", "accents", "accented", "english", "england", "scotland", "wales",
               "nationality"),
}
_SCRIPT_AGE = [
    re.compile(rf"(?<![\w'])({_NUM})\s*(?:years?|yrs?)\s+old(?![\w])"),
    re.compile(rf"(?<![\w'])(?:aged)\s+({_NUM})(?![\w])"),
    re.compile(rf"(?<![\w'])({_NUM})\s+years?\s+of\s+age(?![\w])"),
    re.compile(rf"(?<![\w'])(?:in\s+(?:my|his|her|their|our|your)\s+)(?:(?:early|mid|late)"
               rf"\s+)?(?:{_DECADE_WORD}|\d0s)(?![\w])"),
    re.compile(rf"(?<![\w'])(?:early|mid|late)\s+(?:{_DECADE_WORD})(?![\w])"),
    re.compile(rf"(?<![\w'])({_TENS_RE})\s*something(?![\w])"),
    re.compile(r"(?<![\w'])(?:year\s+old|years\s+old|middle\s+aged|teenager|teenagers)(?![\w])"),
]


_SCRIPT_CACHE: dict[int, tuple[list[_Entry], list[_Entry]]] = {}


def _script_entries(registry: TraitRegistry) -> list[_Entry]:
    """The script lexicon for ``registry`` (cached per compiled parser lexicon)."""
    base = _cached_entries(registry)
    hit = _SCRIPT_CACHE.get(id(base))
    if hit is not None and hit[0] is base:
        return hit[1]
    ents = _build_script_entries(registry)
    _SCRIPT_CACHE[id(base)] = (base, ents)
    return ents


def _build_script_entries(registry: TraitRegistry) -> list[_Entry]:
    ents = [x for x in _cached_entries(registry)
            if x.value is not None and x.script and not (x.trait == "gender" and x.kind)]
    gender = registry.get("gender") if "gender" in registry else None
    if gender is not None:
        table = {
            v: tuple(w for w in _GENDER_NOUNS.get(v, ()) if w in _GENDER_SCRIPT)
            for v in gender.values
        }
        ents += _entries_for("gender", {v: ws for v, ws in table.items() if ws})
        ents += [x for x in _cached_entries(registry) if x.trait == "gender" and not x.kind]
    for trait, words in _SCRIPT_EXTRA.items():
        if trait in registry:
            ents.append(_Entry(trait, "*", _rx(f"(?:{_words_re(words)})"), _PHRASE))
    return ents


def trait_mentions(script: str, *, registry: TraitRegistry = TRAITS) -> list[tuple[str, str]]:
    """Trait words in a *script* as ``[(trait, words as written), ...]``, in text order.

    Flags every value word, synonym and inflection of every trait (emotion words, tone
    words, nationality and accent words, "loud", "slow", "high-pitched", person nouns like
    "woman" or "boy"), the words pitch/volume/accent, and explicit ages ("8 years old",
    "a 13-year-old", "aged 45", "in my forties"). Bare numbers (prices, dates, counts) are not
    ages. An empty list means the script names no trait.
    """
    low, _ = _normalise(script)
    out: list[tuple[int, str, str]] = []
    for _ent, men in _claim(script, _script_entries(registry), script_only=True):
        out.append((men.start, men.trait, men.phrase))
    if "age" in registry:
        spans: list[tuple[int, int]] = []
        for rx in _SCRIPT_AGE:
            for m in rx.finditer(low):
                if any(not (m.end() <= s or m.start() >= t) for s, t in spans):
                    continue
                spans.append((m.start(), m.end()))
                out.append((m.start(), "age", script[m.start():m.end()]))
    out.sort()
    return [(t, w) for _, t, w in out]
