"""The word tables the brief reader is built from: number words, and the words (and
phrases) that state each value of the built-in traits.

Data only; :mod:`vocencebench._instruction.lexicon` compiles them into rules.
"""

from __future__ import annotations

# Numbers.
UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19,
}
TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
    "eighty": 80, "ninety": 90,
}
DECADES = {
    "teens": 10, "twenties": 20, "thirties": 30, "forties": 40, "fifties": 50, "sixties": 60,
    "seventies": 70, "eighties": 80, "nineties": 90,
}
DECADE_OFFSET = {"early": 2, "mid": 5, "middle": 5, "late": 8, "": 5}

UNIT_RE = "|".join(sorted(UNITS, key=len, reverse=True))
TENS_RE = "|".join(TENS)
#: A number written in words ("eight", "forty five", "seventy eight") or digits.
NUM = rf"(?:\d{{1,3}}|(?:{TENS_RE})(?:\s+(?:{UNIT_RE}))?|{UNIT_RE}|a\s+hundred)"
DECADE_WORD = "|".join(DECADES)

# Words meaning each value. Plain words count anywhere (and are forbidden in scripts);
# contextual ("weak") words count only next to a trait noun and are allowed in scripts.
EMOTION: dict[str, tuple[str, ...]] = {
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

TONE: dict[str, tuple[str, ...]] = {
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
TONE_WEAK: dict[str, tuple[str, ...]] = {
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
PARSER_ONLY = frozenset({
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
TONE_NOUNS = (r"(?:tone|tones|manner|delivery|quality|air|style|attitude|demeanou?r|"
               r"register|inflection|way)")

PACE: dict[str, tuple[str, ...]] = {
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
PITCH: dict[str, tuple[str, ...]] = {
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
LOUD: dict[str, tuple[str, ...]] = {
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
GENDER_NOUNS: dict[str, tuple[str, ...]] = {
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
GENDER_SCRIPT = {
    "man", "men", "boy", "boys", "gentleman", "gentlemen", "guy", "male", "lad", "gent",
    "woman", "women", "girl", "girls", "lady", "ladies", "female", "lass", "masculine",
    "feminine",
}
PRONOUNS = {"male": ("he", "him", "his", "himself"),
             "female": ("she", "her", "hers", "herself")}

ACCENT: dict[str, tuple[str, ...]] = {
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
ACCENT_CASE: dict[str, tuple[str, ...]] = {
    "American": (r"U\.?S\.?A?\.?", r"USA"),
    "British": (r"U\.?K\.?", r"RP"),
}
#: Places that suggest an accent; weak evidence (used only when no accent word is present).
ACCENT_PLACES: dict[str, tuple[str, ...]] = {
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
PERSON = (r"(?:man|men|woman|women|boy|girl|lady|gentleman|guy|lad|lass|speaker|narrator|"
           r"voice|teacher|student|person|grandmother|grandfather|mother|father|kid|child|"
           r"teenager|chap|gent|mum|dad|granny|grandpa|grandma|fellow|accent|accented|"
           r"businessman|businesswoman|schoolboy|schoolgirl)")

PACE_NOUN = (r"(?:pace|pacing|speed|tempo|rate|speaking rate|rhythm|cadence|clip|"
              r"delivery speed|speech rate)")
#: Up to %d filler words between a modifier and its noun (never another trait noun).
GAP = (r"(?:[\s,:]+(?!(?:pitch|volume|loudness|pace|speed|tempo|and|but|while|with)\b)"
        r"[a-z']+){0,%d}")
