"""WER text normalisation: equivalent spellings score 0, different content still counts."""

from __future__ import annotations

import pytest

from repo_paths import DOCS
from vocencebench.errors import ConfigError
from vocencebench.textnorm import POST_RULES, PRE_RULES, normalize, wer, word_errors

# (reference as written in a script, what an ASR engine may write for the same speech)
EQUIVALENT: list[tuple[str, str]] = [
    # a trailing ellipsis is punctuation, not a word (the normaliser left a lone ".")
    ("I really do not know...", "I really do not know."),
    ("The end…", "the end"),
    ("Wait... what?", "wait what"),
    # zero decimals: the normaliser writes a script's "2.0" as 2, a reading as 2.0
    ("Web 2.0 is here.", "web two point zero is here"),
    ("Web 2.0.", "web two point oh"),
    ("It weighs 1.05 kg.", "it weighs one point zero five kilograms"),
    ("I have a point, oh well.", "i have a point oh well"),
    # currency
    ("$3.50", "three dollars fifty"),
    ("$3.50", "3.50 dollars"),
    ("$3.50", "three dollars and fifty cents"),
    ("It costs $3.50.", "it costs three dollars fifty"),
    ("The ticket is $12.", "The ticket is twelve dollars."),
    (
        "The fee is $1,250.99 in total.",
        "the fee is one thousand two hundred fifty dollars and ninety nine cents in total",
    ),
    ("A refund of $0.75 was issued.", "a refund of seventy five cents was issued"),
    ("That will be $3.00, please.", "That will be three dollars, please."),
    ("Send £20 by Friday.", "Send twenty pounds by Friday."),
    ("Tickets cost €45 each.", "tickets cost forty five euros each"),
    ("The budget rose to $2.5 million.", "the budget rose to two point five million dollars"),
    ("She paid $7.25 for lunch.", "She paid seven dollars and twenty-five cents for lunch."),
    # dates
    ("12 March 2024", "March twelfth twenty twenty-four"),
    ("12 March 2024", "March 12, 2024"),
    ("on 12 March 2024", "on the twelfth of March, 2024"),
    ("The meeting is on March 3rd.", "The meeting is on March third."),
    ("Born on 4 July 1976.", "born on the fourth of july nineteen seventy six"),
    ("Due Jan. 5, 2025.", "Due January fifth, 2025."),
    ("The deadline is 2024-03-12.", "The deadline is March 12th, 2024."),
    ("It opened on 1 May 2020.", "It opened on May first, two thousand twenty."),
    ("Return by Sept. 30.", "return by september thirtieth"),
    ("In 1999 everything changed.", "In nineteen ninety-nine everything changed."),
    ("The 1990s were loud.", "The nineteen nineties were loud."),
    ("the 21st century", "the twenty-first century"),
    ("December 25th", "the 25th of December"),
    # times
    ("10:30", "ten thirty"),
    ("Meet me at 10:30.", "meet me at ten thirty"),
    ("The train leaves at 7:45 a.m.", "The train leaves at seven forty-five AM."),
    ("The train leaves at 7:45 a.m.", "the train leaves at 7:45 am"),
    ("Call before 5:00 p.m.", "call before five o'clock pm"),
    ("Lunch is at 12:15.", "Lunch is at twelve fifteen."),
    ("The alarm rang at 6:05.", "The alarm rang at six oh five."),
    ("Doors open at 9:00.", "Doors open at nine o'clock."),
    ("It starts at 3 p.m.", "it starts at three pm"),
    ("It starts at 3 p.m.", "It starts at 3 PM."),
    ("We close at 11 o'clock.", "we close at eleven oclock"),
    # percentages
    ("50%", "fifty percent"),
    ("Sales rose 12.5% last year.", "Sales rose twelve point five percent last year."),
    ("About 99% of users agreed.", "about ninety-nine per cent of users agreed"),
    ("Only 3 % failed.", "only three percent failed"),
    ("A 100% refund.", "a one hundred percent refund"),
    # web addresses and e-mail
    ("www.example.com/help", "w w w dot example dot com slash help"),
    ("www.example.com/help", "www dot example dot com slash help"),
    ("www.example.com/help", "www.example.com slash help"),
    ("Visit example.org for details.", "visit example dot org for details"),
    (
        "Go to https://vocence.ai/docs today.",
        "go to h t t p s colon slash slash vocence dot ai slash docs today",
    ),
    ("Write to help@example.com.", "write to help at example dot com"),
    ("Write to help@example.com.", "Write to help@example.com"),
    ("Email jane.doe@mail.co.uk now.", "email jane dot doe at mail dot co dot uk now"),
    ("See docs.python.org/3/library.", "see docs dot python dot org slash three slash library"),
    ("Open my-site.net today.", "open my dash site dot net today"),
    # phone numbers and codes
    ("Call 555-0134.", "call five five five zero one three four"),
    ("Call 555-0134.", "Call 555 0134."),
    ("Call 555-0134.", "call five five five oh one three four"),
    ("Your code is 0042.", "your code is zero zero four two"),
    ("Flight BA249 is delayed.", "flight b a two four nine is delayed"),
    ("Flight BA249 is delayed.", "Flight BA 249 is delayed."),
    ("Gate B12 is closed.", "gate b twelve is closed"),
    ("Room 4B is on the left.", "room four b is on the left"),
    ("The FBI arrived.", "the f b i arrived"),
    ("The FBI arrived.", "The F.B.I. arrived."),
    ("Open 24/7.", "open twenty four seven"),
    ("Press 1 2 3.", "press one two three"),
    ("Order #4471 shipped.", "order number four four seven one shipped"),
    ("Order No. 4471 shipped.", "Order number 4471 shipped."),
    # version strings and decimals
    ("Install version 2.3.1 now.", "install version two point three point one now"),
    ("Install v2.3.1 now.", "install version two point three point one now"),
    ("Install version 2.3.1 now.", "install version two dot three dot one now"),
    ("Pi is about 3.14.", "pi is about three point one four"),
    ("It weighs 1.5 kg.", "it weighs one point five kilograms"),
    ("It weighs 1.5 kg.", "It weighs one and a half kilograms."),
    # units and numbers
    ("The speed limit is 30 mph.", "the speed limit is thirty miles per hour"),
    ("Run 5 km daily.", "run five kilometres daily"),
    ("It was 20°C outside.", "it was twenty degrees celsius outside"),
    ("The drive holds 512 GB.", "the drive holds five hundred twelve gigabytes"),
    ("There are 1,000,000 stars.", "there are one million stars"),
    ("She counted 347 sheep.", "she counted three hundred and forty-seven sheep"),
    ("Add 3/4 of a cup.", "add three quarters of a cup"),
    ("Take the 2nd left.", "take the second left"),
    ("It was her 3rd attempt.", "it was her third attempt"),
    # abbreviations and titles
    ("Dr. Smith will see you.", "doctor smith will see you"),
    ("Mr. and Mrs. Jones left.", "mister and missus jones left"),
    ("We need fruit, e.g. apples.", "we need fruit, for example apples"),
    ("Bring tools, etc.", "bring tools et cetera"),
    ("Red vs. blue.", "red versus blue"),
    ("Salt & pepper.", "salt and pepper"),
    ("He lives on Main St.", "he lives on main street"),
    ("St. Louis is big.", "saint louis is big"),
    ("It's okay.", "it is ok"),
    ("I can't go.", "I cannot go."),
    # spelling and punctuation
    ("The colour is grey.", "the color is gray"),
    ("Well-known facts.", "well known facts"),
    ("Check your e-mail.", "check your email"),
    ("Hello (again), friend.", "hello again friend"),
    ("Peter Piper picked a peck of pickled peppers.", "peter piper picked a peck of pickled pepper"
     "s"),
    ("She sells seashells by the seashore!", "she sells seashells by the seashore"),
]

# pairs that must still count as errors: a different number, word, date, address, ...
DIFFERENT: list[tuple[str, str]] = [
    ("$3.50", "three dollars fifteen"),
    ("$3.50", "three euros fifty"),
    ("The fee is $1,250.99.", "the fee is one thousand two hundred fifty dollars"),
    ("12 March 2024", "March thirteenth twenty twenty-four"),
    ("12 March 2024", "12 May 2024"),
    ("12 March 2024", "12 March 2023"),
    ("10:30", "ten forty"),
    ("Meet me at 10:30.", "meet me at eleven thirty"),
    ("It starts at 3 p.m.", "it starts at three am"),
    ("50%", "fifteen percent"),
    ("50%", "fifty"),
    ("www.example.com/help", "www dot sample dot com slash help"),
    ("www.example.com/help", "www dot example dot org slash help"),
    ("Write to help@example.com.", "write to held at example dot com"),
    ("Call 555-0134.", "call five five five zero one three five"),
    ("Call 555-0134.", "call five five five one three four"),
    ("Flight BA249 is delayed.", "flight b a two four eight is delayed"),
    ("Install version 2.3.1 now.", "install version two point three now"),
    ("Install version 2.3.1 now.", "install version two point four point one now"),
    ("Dr. Smith will see you.", "mister smith will see you"),
    ("It weighs 1.5 kg.", "it weighs one point five pounds"),
    ("Take the 2nd left.", "take the second right"),
    ("She counted 347 sheep.", "she counted three hundred forty sheep"),
    ("Peter Piper picked a peck of pickled peppers.", "peter piper picked a pack of pickled"
     " peppers"),
    ("The colour is grey.", "the colour is green"),
    ("Red vs. blue.", "red and blue"),
    ("Open 24/7.", "open twenty four six"),
    ("Add 3/4 of a cup.", "add one quarter of a cup"),
    # The fourth audit: each of these scored WER 0 before.
    ("Version 2.1 is out.", "version twenty-one is out"),
    ("Growth was 3.1% last year.", "growth was thirty-one last year"),
    ("It is 1.1 meters.", "it is eleven meters"),
    ("It costs $1.", "it costs one euro"),
    ("Up 1%.", "up one dollar"),
    ("Update to 3.1.1 now.", "update to three eleven now"),
    ("Pages 10-20 are missing.", "pages ten twenty are missing"),
    # The fifth round's rules must not let these through.
    ("Meet me at 9:00.", "meet me at nine thirty"),
    ("Meet me at 9:00.", "meet me at nine hundred"),
    ("World War II ended.", "world war three ended"),
    ("Henry VIII was king.", "henry the seventh was king"),
    ("Henry VIII was king.", "henry eight was king"),
    ("It costs 99¢.", "it costs ninety nine dollars"),
    ("I live on Elm Dr.", "i live on elm street"),
    ("Dr. Smith is here.", "drive smith is here"),
    ("She earned her Ph.D.", "she earned her p h"),
    # The sixth audit's rules (money, currency signs, dotted times, "O", units) must not let
    # a different amount, currency, unit, day or time through.
    ("The bill comes to £12.40.", "the bill comes to twelve pounds and fourteen pence"),
    ("The bill comes to £12.40.", "the bill comes to twelve dollars and forty cents"),
    ("The bill comes to £12.40.", "the bill comes to twelve pounds"),
    ("Only 50p.", "only fifty cents"),
    ("Only 50p.", "only fifteen pence"),
    ("You owe ₹250.", "you owe 250"),  # the currency left out
    ("You owe ₹250.", "you owe two hundred fifty dollars"),
    ("You owe ₹250.", "you owe two hundred fifty yen"),
    ("You owe ¥500.", "you owe five hundred"),
    ("Revenue rose to ₹6.9 crore.", "revenue rose to six point nine crore"),
    ("Revenue rose to ₹6.9 crore.", "revenue rose to six point nine lakh rupees"),
    ("Lovely, $18.50 each.", "lovely $18 and $0.15 each"),
    ("Bought at 7:05 on Monday.", "bought at 7.50 on monday"),
    ("It weighs 7.05 kg.", "it weighs seven oh five kilograms"),
    ("It closed at 7.05%.", "it closed at seven oh five percent"),
    ("O great, it works.", "zero great it works"),
    ("Dial 6 O 1.", "dial six oh two"),
    ("Wait 10 mins.", "wait ten seconds"),
    ("Wait 10 mins.", "wait ten hours"),
    ("Wait 1 min.", "wait one hour"),
    ("It is 3 m long.", "it is three miles long"),
    ("Back in the 30s.", "back in thirty seconds"),  # "30s" glued is not seconds
    ("It is 5 in. wide.", "it is five centimetres wide"),
    ("A 40 W bulb.", "a forty volt bulb"),
    ("It weighs 1 kg.", "it weighs one gram"),
    ("It costs £1.5m.", "it costs one point five billion pounds"),
    ("It costs $5k.", "it costs five hundred dollars"),
    ("It costs $5k.", "it costs five thousand pounds"),
    ("Open Mon. to Fri.", "open monday to thursday"),
    ("Add 1/2 cup of sugar.", "add a cup of sugar"),
    ("Add 1/2 cup of sugar.", "add a quarter cup of sugar"),
    ("Add 1 1/2 cups.", "add one cup"),
]


# The fourth audit: correct readings each of these vetoed (WER 0.25 to 4.0) before.
READ_RIGHT = [
    ("Version 2.1 is out.", "version two point one is out"),
    ("Growth was 3.1% last year.", "growth was three point one percent last year"),
    ("It is 1.1 meters.", "it is one point one meters"),
    ("It costs $1.50.", "it costs one dollar fifty"),
    ("Pages 10-20 are missing.", "pages ten to twenty are missing"),
    ("Open 9-5.", "open nine to five"),
    ("It is -5 degrees.", "it is minus five degrees"),
    ("1 + 1 = 2", "one plus one equals two"),
    ("The c\u200bat sat.", "the cat sat"),
    ("\ufeffThe cat sat.", "the cat sat"),
    ("soft\u00adware works", "software works"),
    ("\x00yes", "yes"),
    ("Don\u2032t go.", "don't go"),
    ("Install 2.0.1 now.", "install two point oh point one now"),
    # codes and chains are still read as digits, not as ranges
    ("Call 555-1234 now.", "call five five five one two three four now"),
    ("Numbers 7-19-23 won.", "numbers seven nineteen twenty three won"),
    # The fifth audit (each cost a word or more before).
    ("Meet me at 9:00.", "meet me at nine"),
    ("Meet me at 9:00.", "meet me at nine o'clock"),
    ("Your dose is at 10:00 p.m.", "your dose is at ten p m"),
    ("We close at 11 o'clock.", "we close at eleven"),
    ("It costs 99¢.", "it costs ninety nine cents"),
    ("World War II ended.", "world war two ended"),
    ("World War II ended.", "World War II ended."),
    ("Chapter IV begins.", "chapter four begins"),
    ("Henry VIII was king.", "henry the eighth was king"),
    ("Louis XIV ruled.", "Louis the Fourteenth ruled."),
    ("Pope John Paul II spoke.", "pope john paul the second spoke"),
    ("I live on Elm Dr.", "i live on elm drive"),
    ("Call the Dr. now.", "call the doctor now"),
    ("O.K., go.", "okay go"),
    ("She earned her Ph.D.", "she earned her p h d"),
    ("Er, I think so.", "i think so"),
    ("Erm, yes.", "yes"),
    ("Take him to the ER.", "take him to the e r"),
    # The sixth audit: real Whisper tiny.en on hibari clips of the frozen corpus (vb-00262,
    # vb-00042, vb-00080, vb-00452, vb-00341) and the normaliser alone.
    ("The bill comes to £12.40.", "The bill comes to twelve pounds and forty pence."),
    ("The bill comes to £12.40.", "the bill comes to 12 pounds and 40 pence"),
    ("The bill comes to £12.40.", "the bill comes to £12 and 40p"),
    ("Only 50p.", "only fifty pence"),
    ("A refund of £0.40.", "a refund of forty pence"),
    ("You owe ₹250.", "You owe two hundred and fifty rupees."),
    ("You borrowed ₹250 on 5 May.", "You borrowed 250 rupees on the 5th of May."),
    ("You owe ¥500.", "You owe five hundred yen."),
    ("Revenue rose from ₹4.2 crore to ₹6.9 crore.",
     "revenue rose from four point two crore rupees to six point nine crore rupees"),
    ("Revenue rose from ₹4.2 crore to ₹6.9 crore.",  # hibari's reading, as Whisper wrote it
     "Revenue rose from 4.2 rupees crore to 6.9 rupees crore."),
    ("It costs ₩5000.", "it costs five thousand won"),
    ("It costs ₽100.", "it costs one hundred roubles"),
    ("It costs ₺50.", "it costs fifty lira"),
    ("It costs Rs. 250.", "it costs two hundred and fifty rupees"),
    ("Lovely, $18.50 for a smoothie.", "Lovely, $18 and $0.50 for a smoothie."),
    ("Lovely, $18.50 for a smoothie.", "lovely eighteen dollars and fifty cents for a smoothie"),
    ("It is £18.50.", "it is £18 and £0.50"),
    ("It is €18.50.", "it is €18 and €0.50"),
    ("Bought at 7:05 on 2 February 2025.", "Bought at 7.05 on the 2nd of February 2025."),
    ("Meet at 7.05 p.m.", "meet at seven oh five pm"),
    ("Open from 9.30 to 5.30.", "open from nine thirty to five thirty"),
    ("Meet at 7:05am.", "meet at seven oh five am"),
    ("Oh great, it works.", "O great, it works."),
    ("O great, it works.", "oh great it works"),
    ("Wait 10 mins.", "Wait 10 minutes."),
    ("Wait 5 min.", "wait five minutes"),
    ("Wait 1 min.", "wait one minute"),
    ("Wait 2 hrs.", "wait two hours"),
    ("Wait 1 hr.", "wait one hour"),
    ("Open 24h.", "open twenty four hours"),
    ("Wait 30 secs.", "Wait 30 seconds."),
    ("Hold for 30 s.", "hold for thirty seconds"),
    ("Wait 1 sec.", "wait one second"),
    ("It is 3 m long.", "it is three metres long"),
    ("It is 3 m long.", "It is 3 meters long."),
    ("It is 20 L.", "it is twenty litres"),
    ("Use 2 tsp of salt.", "use two teaspoons of salt"),
    ("Use 1 tbsp of oil.", "use one tablespoon of oil"),
    ("It is 5 in. wide.", "it is five inches wide"),
    ("A 40 W bulb.", "a forty watt bulb"),
    ("It weighs 1 kg.", "it weighs one kilogram"),
    ("A 5 km run.", "a five kilometre run"),
    ("It used 1 kWh.", "it used one kilowatt hour"),
    ("It costs £1.5m.", "it costs one point five million pounds"),
    ("It costs $2bn.", "it costs two billion dollars"),
    ("It costs $5k.", "it costs five thousand dollars"),
    ("Open Mon. to Fri.", "open monday to friday"),
    ("Open Mon–Fri.", "open monday to friday"),
    ("Open Sat. and Sun.", "open saturday and sunday"),
    ("She will wed on Sat.", "she will wed on saturday"),
    ("Add 1/2 cup of sugar.", "add half a cup of sugar"),
    ("Add ½ cup of sugar.", "add a half cup of sugar"),
    ("Add 1 1/2 cups.", "add one and a half cups"),
    ("Add 1½ cups.", "add one and a half cups"),
    ("Add 1/4 cup.", "add a quarter cup"),
]


@pytest.mark.parametrize(("reference", "hypothesis"), READ_RIGHT)
def test_correct_readings_the_audit_found_vetoed_now_pass(reference: str, hypothesis: str
                                                          ) -> None:
    res = word_errors(reference, hypothesis)
    assert res.wer == 0.0, (res.reference_norm, res.hypothesis_norm)


def test_tables_are_large_enough() -> None:
    assert len(EQUIVALENT) >= 80
    assert len(DIFFERENT) >= 20


@pytest.mark.parametrize(("reference", "hypothesis"), EQUIVALENT)
def test_equivalent_forms_score_zero(reference: str, hypothesis: str) -> None:
    res = word_errors(reference, hypothesis)
    assert res.wer == 0.0, (res.reference_norm, res.hypothesis_norm)
    assert normalize(reference) == normalize(hypothesis)


@pytest.mark.parametrize(("reference", "hypothesis"), DIFFERENT)
def test_different_content_counts(reference: str, hypothesis: str) -> None:
    res = word_errors(reference, hypothesis)
    assert res.wer > 0.0, (res.reference_norm, res.hypothesis_norm)


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("It costs $3.50.", "it costs $3.50"),
        ("12 March 2024", "march 12th 2024"),
        ("www.example.com/help", "www dot example dot com slash help"),
        ("Meet me at 10:30.", "meet me at 1030"),
        ("Call 555-0134.", "call 5550134"),
        ("Dr. Smith", "doctor smith"),
        ("Oh my gosh, oh no!", "oh my gosh oh no"),
        ("Hello (again), friend.", "hello again friend"),
        ("Hmm.", ""),
        # words the sixth audit's rules must leave alone
        ("He sat in the Sun.", "he sat in the sun"),
        ("It is 5 in the box.", "it is 5 in the box"),
        ("Live at 350 W Main St.", "live at 350 w main street"),
        ("Back in the 1990s and 30s.", "back in the 1990s and 30s"),
        ("Pi is about 3.14.", "pi is about 3.14"),
        ("Send an S O S.", "send an s 0 s"),  # a spelled O stays the letter-digit it was
    ],
)
def test_canonical_form(text: str, canonical: str) -> None:
    assert normalize(text) == canonical


def test_counts_and_fraction() -> None:
    res = word_errors("the cat sat on the mat", "the cat sat on a mat today")
    assert (res.substitutions, res.deletions, res.insertions, res.hits) == (1, 0, 1, 5)
    assert res.reference_words == 6
    assert res.wer == pytest.approx(2 / 6)
    assert wer("the cat sat on the mat", "the cat sat on a mat today") == res.wer


def test_empty_hypothesis_is_all_deletions() -> None:
    res = word_errors("Call 555-0134 at 10:30.", "")
    assert res.wer == 1.0
    assert res.deletions == res.reference_words == 4


def test_empty_reference_is_an_error() -> None:
    with pytest.raises(ConfigError, match="no words"):
        wer("  (hmm) ", "anything")


def test_non_string_is_an_error() -> None:
    with pytest.raises(ConfigError, match="needs a str"):
        normalize(b"bytes")  # type: ignore[arg-type]


def test_rules_are_named_once_and_documented() -> None:

    names = [r.name for r in (*PRE_RULES, *POST_RULES)]
    assert len(names) == len(set(names))
    doc = (DOCS / "probes.md").read_text("utf-8")
    missing = [n for n in names if f"`{n}`" not in doc]
    assert not missing, f"rules not described in docs/probes.md: {missing}"


@pytest.mark.parametrize("padding", [
    " one two three four five six seven eight nine",  # joined into 123456789 by the normaliser
    " 12 34 56 78 90 11 22 33",                        # joined into one token by join_digits
])
def test_digits_padded_onto_a_reading_cost_one_word_each(padding: str) -> None:
    """A hostile system appended digits to pass the gate: they were joined into one token and
    cost one word of the allowance (WER 0.10, a pass)."""
    script = "Please read the whole of this sentence out loud now."
    res = word_errors(script, script + padding)
    assert res.wer > 0.15 and res.insertions >= 9, res
    assert word_errors("Call 555 0134 today.", "call five five five zero one three four "
                       "today").wer == 0.0  # a number the script has is still one word
