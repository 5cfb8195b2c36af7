"""Word tables of :mod:`vocencebench.textnorm` (the WER normaliser of the intelligibility
gate): written abbreviations, units, currency signs, weekdays and regnal names. Data only;
the rules that use them, and their documentation, are in ``textnorm``."""

from __future__ import annotations

DIGIT_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
NUMBER_WORDS = (
    *DIGIT_WORDS,
    "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
    "eighteen", "nineteen", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty",
    "ninety", "hundred", "oh",
)  # fmt: skip

MONTHS = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
)  # fmt: skip
MONTH_ABBR = {
    "jan": "january", "feb": "february", "mar": "march", "apr": "april", "jun": "june",
    "jul": "july", "aug": "august", "sep": "september", "sept": "september", "oct": "october",
    "nov": "november", "dec": "december",
}  # fmt: skip

# How the characters of a web or e-mail address are read.
URL_CHARS = {".": " dot ", "/": " slash ", "@": " at ", "-": " dash ", "_": " underscore ",
             ":": " colon ", "?": " question mark ", "=": " equals ", "&": " and ",
             "#": " hash ", "+": " plus ", "~": " tilde "}  # fmt: skip

FRACTIONS = {"1/2": "one half", "1/3": "one third", "2/3": "two thirds", "1/4": "one quarter",
             "3/4": "three quarters"}  # fmt: skip

# Spelling variants that agree after the Whisper normaliser (textnorm's 'variants').
VARIANTS = {"ok": "okay", "cannot": "can not", "alright": "all right", "percent": "%",
            "aeroplane": "airplane", "til": "until", "till": "until", "roubles": "rubles",
            "liras": "lira", "lire": "lira"}  # fmt: skip

# Written abbreviations (regex, spoken form), matched case-insensitively in this order.
ABBREVIATIONS: tuple[tuple[str, str], ...] = (
    (r"\be\.\s?g\.?(?=\W|$)", "for example"),
    (r"\bi\.\s?e\.?(?=\W|$)", "that is"),
    (r"\betc\.?(?=\W|$)", "et cetera"),
    (r"\bvs\.?(?=\W|$)", "versus"),
    (r"\bapprox\.?(?=\W|$)", "approximately"),
    (r"\bno\.\s?(?=\d)", "number "),
    (r"#\s?(?=\d)", "number "),
    (r"&", " and "),
    (r"\bave\.?(?=\W|$)", "avenue"),
    (r"\bblvd\.?(?=\W|$)", "boulevard"),
    (r"\bdept\.?(?=\W|$)", "department"),
    (r"\bmt\.?(?=\s+[A-Z])", "mount"),
    (r"\be-mail\b", "email"),
)

# Units after a number (matched case-insensitively, longest first) → spoken name. The
# Whisper normaliser maps the British spellings (metres, litres) to these American ones.
UNITS: tuple[tuple[str, str], ...] = (
    ("km/h", "kilometers per hour"), ("kph", "kilometers per hour"), ("m/s", "meters per second"),
    ("mph", "miles per hour"), ("km", "kilometers"), ("kg", "kilograms"), ("cm", "centimeters"),
    ("mm", "millimeters"), ("mg", "milligrams"), ("ml", "milliliters"), ("lbs", "pounds"),
    ("lb", "pounds"), ("ft", "feet"), ("oz", "ounces"), ("°c", "degrees celsius"),
    ("°f", "degrees fahrenheit"), ("°", "degrees"), ("gb", "gigabytes"), ("mb", "megabytes"),
    ("tb", "terabytes"), ("kb", "kilobytes"), ("ghz", "gigahertz"), ("mhz", "megahertz"),
    ("khz", "kilohertz"), ("hz", "hertz"), ("kw", "kilowatts"), ("kwh", "kilowatt hours"),
    ("¢", "cents"), ("min", "minutes"), ("mins", "minutes"), ("hr", "hours"), ("hrs", "hours"),
    ("sec", "seconds"), ("secs", "seconds"), ("tsp", "teaspoons"), ("tbsp", "tablespoons"),
)  # fmt: skip

# One-letter units, matched case-sensitively after a number (see textnorm's 'abbreviations'):
# (regex after the digit, spoken name).
LETTER_UNITS: tuple[tuple[str, str], ...] = (
    (r" m(?![\w'/])", "meters"),  # only with a space: "5m" may be five million
    (r"\s?h(?![\w'/])", "hours"),
    (r"\s?[lL](?![\w'/])", "liters"),
    (r" s(?![\w'/])", "seconds"),  # only with a space: "5s" and "the 1990s" are plurals
    (r"\s?W(?![\w'/])(?!\s+(?:\d|[A-Z]))", "watts"),  # not "350 W Main St" (west)
    (r" in\.(?=\s|$)", "inches"),  # only with its full stop: "5 in the box" is the word
)

# Singular unit and currency words → the plural, after a number ("one minute", "a 40 watt
# bulb" and "1 min", "40 W" agree). "second" is handled apart (textnorm's 'unit_plurals').
UNIT_PLURALS: dict[str, str] = {
    **{w: w + "s" for w in (
        "minute", "hour", "meter", "metre", "kilometer", "kilometre", "centimeter",
        "centimetre", "millimeter", "millimetre", "liter", "litre", "milliliter", "millilitre",
        "gram", "kilogram", "milligram", "ounce", "mile", "yard", "watt", "kilowatt",
        "teaspoon", "tablespoon", "degree", "gigabyte", "megabyte", "terabyte", "kilobyte",
        "rupee", "ruble", "rouble", "peso", "shekel", "hryvnia", "franc", "cedi",
    )},
    "foot": "feet", "inch": "inches", "penny": "pence", "kilowatt hour": "kilowatt hours",
    "watt hour": "watt hours",
}  # fmt: skip

# Currency signs the Whisper normaliser drops (it keeps only $ £ € ¢) → the currency's name.
# ¥ is read yen (the renminbi's yuan shares the sign; a script meaning yuan is read wrong).
CURRENCY_NAMES: dict[str, str] = {
    "₹": "rupees", "¥": "yen", "₩": "won", "₽": "rubles", "₺": "lira", "₦": "naira",
    "₱": "pesos", "₪": "shekels", "₫": "dong", "฿": "baht", "₴": "hryvnias", "₿": "bitcoin",
    "₵": "cedis", "₸": "tenge", "₼": "manat", "₾": "lari", "₭": "kip",
}  # fmt: skip

# Magnitude abbreviations after an amount with a currency sign ("$5k", "£1.5m", "$2bn").
MAGNITUDES: dict[str, str] = {"k": "thousand", "m": "million", "mn": "million", "b": "billion",
                              "bn": "billion", "tn": "trillion"}  # fmt: skip

# Abbreviated weekdays. Wed, Sat and Sun are also words (wed, sat, the sun): textnorm expands
# those only beside another weekday or before a date.
WEEKDAYS: dict[str, str] = {
    "Mon": "Monday", "Tue": "Tuesday", "Tues": "Tuesday", "Wed": "Wednesday",
    "Thu": "Thursday", "Thur": "Thursday", "Thurs": "Thursday", "Fri": "Friday",
    "Sat": "Saturday", "Sun": "Sunday",
}  # fmt: skip
AMBIGUOUS_WEEKDAYS = frozenset({"Wed", "Sat", "Sun"})

# Words after a dotted number that make it a quantity, not a clock time ("at 7.05 kg"):
# the units, unit words, currency names and magnitudes of the tables above, and these.
QUANTITY_WORDS = frozenset(
    {"%", "m", "h", "l", "s", "w", "percent", "per", "points", "point", "times", "x", "lakh",
     "crore", "dollars", "pounds", "euros", "cents", "pence"}
    | {u for u, _ in UNITS} | {w for _, n in UNITS for w in n.split()} | set(UNIT_PLURALS)
    | set(UNIT_PLURALS.values()) | set(CURRENCY_NAMES.values()) | set(MAGNITUDES)
    | set(MAGNITUDES.values())
)

# Capitalised words after which a Roman numeral names a monarch or pope, read "the eighth":
# the regnal names common in English text. After any other capitalised word it is a number
# (World War II, Chapter IV, Part III), read "two", "four", "three".
REGNAL_NAMES = frozenset({
    "Alexander", "Alfonso", "Benedict", "Boniface", "Carlos", "Catherine", "Charles",
    "Christian", "Clement", "Constantine", "Edward", "Elizabeth", "Felipe", "Ferdinand",
    "Francis", "Frederick", "Friedrich", "George", "Gregory", "Gustav", "Haakon", "Harold",
    "Henry", "Innocent", "James", "John", "Juan", "Leo", "Leopold", "Louis", "Ludwig", "Mary",
    "Napoleon", "Nicholas", "Olav", "Otto", "Paul", "Peter", "Philip", "Pius", "Ramesses",
    "Richard", "Rudolf", "Sixtus", "Stephen", "Urban", "Victor", "Wilhelm", "Willem",
    "William",
})
