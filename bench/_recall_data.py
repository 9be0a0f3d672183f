"""The synthetic conversation history of bench/memory_recall.py, built in code.

Many sessions over eleven simulated months of everyday chat between a person and the
character. Facts are stated once and asked about weeks or months later in other words;
distractor turns share the question's words without holding the answer. Five kinds of fact,
each asked the way people ask:

- `name`: "Mein Nachbar heißt übrigens Korbinian Wegscheider." — asked by the rare surname
  ("Was weißt du noch über Wegscheider?"), by a paraphrase of the relation ("Wie heißt noch
  mal der Mann, der nebenan wohnt?") or with the surname misspelt ("… Wegschieder?"), in
  rotation. Distractors: the same relation and the paraphrase's words without the name.
- `umschreibung`: a preference or circumstance, asked without any of its content words
  ("Ich habe panische Angst vor Spinnen." ← "Wovor grusle ich mich am meisten?").
- `beugung`: a fact asked with other word forms (Katzen ← Katze, Bäume ← Baum).
- `rueckfrage`: the character asks, the person answers in a few words; the question later
  repeats the character's words, the evidence is the short answer ("Mephisto.").
- `zeit`: the same topic told in several months; the question names the month or season.

Every query knows the source id of the turn that states its fact (the evidence). German and
English versions are parallel (the bundled embedder, MiniLM, is an English model). The
counts and the mix are printed by the benchmark; they decide what each method can win, so
they are stated, not tuned to a result.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

SPAN_START = datetime(2025, 6, 2, tzinfo=UTC)
SPAN_DAYS = 330
"""The history: 2 June 2025 … late April 2026."""
NOW = datetime(2026, 5, 10, 12, 0, tzinfo=UTC)
"""When the questions are asked (the month and season words resolve from here)."""

USER, CHARACTER = "user", "character"


@dataclass(frozen=True)
class Query:
    kind: str
    way: str
    text: str
    evidence: str
    more: tuple[str, ...] = ()
    """Further evidence turns: the question is found when any of them is."""

    @property
    def evidence_ids(self) -> frozenset[str]:
        return frozenset((self.evidence, *self.more))


@dataclass
class Dataset:
    lang: str
    turns: list[dict[str, Any]] = field(default_factory=list)
    queries: list[Query] = field(default_factory=list)


# --- names ------------------------------------------------------------------------------------

NAMES = [
    "Korbinian Wegscheider",
    "Hildegard Pfannenstiel",
    "Eberhard Quast",
    "Walburga Zirngibl",
    "Ottokar Schnabelrauch",
    "Philippa Krummbiegel",
    "Leopold Eichhorst",
    "Gunhild Wachtveitl",
    "Bartholomäus Feuchtinger",
    "Rosalinde Mühlhölzl",
    "Ignaz Breitschwerdt",
    "Brunhilde Sauerwein",
    "Florentin Haberkorn",
    "Notburga Kreuzpaintner",
    "Severin Ochsenknecht",
    "Adelheid Zwirnmann",
    "Kasimir Rauchenberger",
    "Irmtraud Pfefferle",
    "Vinzenz Grubmüller",
    "Theodora Stinglwagner",
    "Gottfried Leberecht",
    "Ottilie Knödlseder",
    "Wendelin Kapfhammer",
    "Hedwig Strohschneider",
    "Cornelius Fettköter",
    "Mechthild Rosskopf",
]

# (German possessive + relation, German paraphrase, English relation, English paraphrase)
RELATIONS = [
    ("Mein Nachbar", "der Mann, der nebenan wohnt", "neighbour", "the man who lives next door"),
    ("Mein Chef", "mein Vorgesetzter in der Firma", "boss", "my superior at the company"),
    (
        "Meine Zahnärztin",
        "die Frau, die meine Zähne behandelt",
        "dentist",
        "the woman who treats my teeth",
    ),
    ("Mein Schwager", "der Ehemann meiner Schwester", "brother-in-law", "my sister's husband"),
    (
        "Meine Vermieterin",
        "die Frau, der unsere Wohnung gehört",
        "landlady",
        "the woman who owns our flat",
    ),
    (
        "Meine Patentante",
        "die Frau, die bei meiner Taufe Patin war",
        "godmother",
        "the woman who was my sponsor at my christening",
    ),
    (
        "Mein Trainer",
        "der Mann, der unsere Fußballmannschaft leitet",
        "coach",
        "the man who runs our football team",
    ),
    (
        "Meine Friseurin",
        "die Frau, die mir die Haare schneidet",
        "hairdresser",
        "the woman who cuts my hair",
    ),
    (
        "Mein Hausarzt",
        "der Doktor, zu dem ich gehe, wenn ich krank bin",
        "family doctor",
        "the physician I see when I am ill",
    ),
    (
        "Der Mathelehrer meines Sohnes",
        "der Mann, der meinem Sohn Rechnen beibringt",
        "son's maths teacher",
        "the man who teaches my son arithmetic",
    ),
    (
        "Meine Klavierlehrerin",
        "die Frau, bei der ich Unterricht am Flügel nehme",
        "piano teacher",
        "the woman who gives me lessons at the keyboard",
    ),
    (
        "Mein Steuerberater",
        "der Mann, der meine Abrechnung fürs Finanzamt macht",
        "tax advisor",
        "the man who does my returns for the tax office",
    ),
    (
        "Meine Kollegin",
        "die Frau, mit der ich mir das Büro teile",
        "colleague",
        "the woman I share my office with",
    ),
]

RELATION_EVENTS_DE = [
    "hat heute wieder ewig geredet",
    "war heute ziemlich schlecht gelaunt",
    "hat sich ein neues Auto gekauft",
    "ist gerade im Urlaub",
    "hat mich heute gegrüßt",
]
RELATION_EVENTS_EN = [
    "talked for ages again today",
    "was in a pretty bad mood today",
    "bought a new car",
    "is on holiday at the moment",
    "said hello to me today",
]

# --- paraphrases: (statement, question) without a shared content word -------------------------

PARAPHRASE_DE = [
    ("Ich habe panische Angst vor Spinnen.", "Wovor grusle ich mich am meisten?"),
    (
        "Mein Lieblingsessen sind Käsespätzle mit Röstzwiebeln.",
        "Welches Gericht mag ich am liebsten?",
    ),
    ("Ich bin allergisch gegen Haselnüsse.", "Was darf ich auf keinen Fall essen?"),
    ("In den Ferien fliegen wir nach Lissabon.", "Wohin geht unsere nächste Urlaubsreise?"),
    ("Ich spiele seit Jahren Cello im Laienorchester.", "Welches Instrument beherrsche ich?"),
    ("Mein Auto ist ein alter roter Volvo.", "Was für einen Wagen fahre ich?"),
    ("Ich arbeite als Hebamme im Kreißsaal.", "Was ist mein Beruf?"),
    ("Zum Entspannen stricke ich Socken.", "Wie komme ich zur Ruhe?"),
    ("Ich trinke grundsätzlich keinen Alkohol.", "Welche Getränke lehne ich ab?"),
    (
        "Mein größter Traum ist eine Reise nach Island.",
        "Welches Land möchte ich unbedingt einmal sehen?",
    ),
    ("Ich kann Koriander nicht ausstehen.", "Welches Kraut hasse ich?"),
    ("Ich laufe regelmäßig fünf Kilometer an der Isar.", "Wie halte ich mich fit?"),
    ("Ich bin im Sternzeichen Skorpion geboren.", "Welches Horoskop passt zu mir?"),
    ("Wir wohnen im vierten Stock ohne Aufzug.", "Wie viele Treppen steige ich bis nach Hause?"),
    ("Ich sammle alte Briefmarken aus Skandinavien.", "Was ist mein Hobby?"),
    ("Bei Vollmond schlafe ich ganz schlecht.", "Wann finde ich keine Ruhe im Bett?"),
    ("Mein Lieblingsbuch ist Der Steppenwolf von Hesse.", "Welchen Roman lese ich immer wieder?"),
    ("Ich vertrage kein Gluten.", "Worauf muss ich beim Brot achten?"),
    ("Mein Opa war Schmied in Oberbayern.", "Welches Handwerk hatte mein Großvater?"),
    ("Ich habe einen Kletterkurs in der Halle angefangen.", "Welchen neuen Sport mache ich?"),
]
PARAPHRASE_EN = [
    ("I am terrified of spiders.", "Which creatures scare me the most?"),
    ("My favourite food is cheese noodles with fried onions.", "Which dish do I love most?"),
    ("I'm allergic to hazelnuts.", "What must I never eat?"),
    ("For the holidays we are flying to Lisbon.", "Where is our next trip going?"),
    (
        "I have played the cello in an amateur orchestra for years.",
        "Which musical instrument can I play?",
    ),
    ("My car is an old red Volvo.", "What kind of vehicle do I drive?"),
    ("I work as a midwife in the delivery ward.", "What is my job?"),
    ("To relax I knit socks.", "How do I unwind?"),
    ("I never drink alcohol.", "Which beverages do I refuse?"),
    ("My biggest dream is a trip to Iceland.", "Which country do I badly want to visit?"),
    ("I can't stand coriander.", "Which herb do I hate?"),
    ("I regularly run five kilometres along the river.", "How do I stay in shape?"),
    ("My star sign is Scorpio.", "Which horoscope fits me?"),
    ("We live on the fourth floor without a lift.", "How many stairs do I climb to get home?"),
    ("I collect old stamps from Scandinavia.", "What is my hobby?"),
    ("I sleep badly when the moon is full.", "When can I not rest in bed?"),
    ("My favourite book is Steppenwolf by Hesse.", "Which novel do I reread again and again?"),
    ("I can't tolerate gluten.", "What do I have to watch out for with bread?"),
    ("My grandpa was a blacksmith in Bavaria.", "What trade did my grandfather have?"),
    ("I started a climbing course at the gym.", "Which new sport have I taken up?"),
]

# --- other word forms: (statement, question, distractor) --------------------------------------

INFLECTION_DE = [
    (
        "Unsere beiden Katzen heißen Mimi und Lotte.",
        "Wie heißt meine Katze?",
        "Die Katze der Nachbarn schleicht ständig durch unseren Hof.",
    ),
    (
        "Im Garten stehen zwei alte Bäume, eine Eiche und eine Linde.",
        "Welcher Baum steht bei mir?",
        "Im Park haben sie einen Baum gefällt.",
    ),
    (
        "Meine Kinder gehen auf die Waldorfschule.",
        "Auf welche Schule geht mein Kind?",
        "Das Kind im Bus hat die ganze Zeit gesungen.",
    ),
    (
        "Auf dem Balkon blühen rote Geranien, meine Lieblingsblumen.",
        "Welche Blume mag ich am liebsten?",
        "Die Blume im Büro ist leider eingegangen.",
    ),
    (
        "Meine Schwestern wohnen beide in Hamburg.",
        "Wo lebt meine Schwester?",
        "Die Schwester von Tom hat ein Café eröffnet.",
    ),
    (
        "Mit meinen Freunden gehe ich jede Woche kegeln.",
        "Was unternehme ich mit meinem Freund?",
        "Ein Freund von der Arbeit hat geheiratet.",
    ),
    (
        "Die Hunde meiner Eltern heißen Rex und Struppi.",
        "Wie heißt der Hund meiner Eltern?",
        "Ein Hund hat heute im Park mein Brot geklaut.",
    ),
    (
        "In meiner Freizeit repariere ich alte Fahrräder.",
        "Was mache ich mit einem Fahrrad?",
        "Mein Fahrrad hatte heute einen Platten.",
    ),
    (
        "Meine Brüder betreiben zusammen eine Schreinerei.",
        "Was macht mein Bruder beruflich?",
        "Der Bruder meiner Kollegin ist Pilot.",
    ),
    (
        "Meine Töchter spielen beide Handball im Verein.",
        "Welchen Sport macht meine Tochter?",
        "Die Tochter vom Bäcker hat Abitur gemacht.",
    ),
    (
        "Auf dem Hof meines Onkels stehen vierzig Kühe.",
        "Wie viele Kuh hat mein Onkel?",
        "Auf der Wanderung stand eine Kuh mitten auf dem Weg.",
    ),
    (
        "Am liebsten lese ich Bücher über Vögel.",
        "Welches Buch lese ich gern?",
        "Das Buch für den Lesekreis ist furchtbar langweilig.",
    ),
]
INFLECTION_EN = [
    (
        "Our two cats are called Mimi and Lotte.",
        "What is my cat called?",
        "The neighbours' cat keeps sneaking through our yard.",
    ),
    (
        "In the garden there are two old trees, an oak and a lime.",
        "Which tree stands at my place?",
        "They cut down a tree in the park.",
    ),
    (
        "My kids go to the Waldorf school.",
        "Which school does my kid attend?",
        "The kid on the bus sang the whole time.",
    ),
    (
        "Red geraniums bloom on the balcony, my favourite flowers.",
        "Which flower do I like best?",
        "The flower in the office has died, sadly.",
    ),
    (
        "My sisters both live in Hamburg.",
        "Where does my sister live?",
        "Tom's sister has opened a café.",
    ),
    (
        "I go bowling with my friends every week.",
        "What do I do with my friend?",
        "A friend from work got married.",
    ),
    (
        "My parents' dogs are called Rex and Struppi.",
        "What is my parents' dog called?",
        "A dog stole my sandwich in the park today.",
    ),
    (
        "In my free time I repair old bikes.",
        "What do I do with a bike?",
        "My bike had a flat tyre today.",
    ),
    (
        "My brothers run a carpentry workshop together.",
        "What does my brother do for a living?",
        "My colleague's brother is a pilot.",
    ),
    (
        "My daughters both play handball in a club.",
        "Which sport does my daughter play?",
        "The baker's daughter finished school.",
    ),
    (
        "There are forty horses on my uncle's farm.",
        "How many horse does my uncle keep?",
        "On the hike a horse stood in the middle of the path.",
    ),
    (
        "I love reading books about birds.",
        "Which book do I like to read?",
        "The book for the reading circle is terribly boring.",
    ),
]

# --- the character asks, the person answers briefly: (question, answer, later query) ---------

QA_DE = [
    (
        "Was studiert eigentlich deine Tochter?",
        "Meeresbiologie, in Kiel.",
        "Was studiert meine Tochter noch mal?",
    ),
    ("Wo habt ihr damals geheiratet?", "Auf einer Alm im Allgäu.", "Wo haben wir geheiratet?"),
    ("Wie heißt dein Kater eigentlich?", "Mephisto.", "Wie heißt mein Kater?"),
    ("Welche Blutgruppe hast du?", "Null negativ.", "Welche Blutgruppe habe ich?"),
    ("Was ist deine Lieblingsfarbe?", "Petrol.", "Was ist meine Lieblingsfarbe?"),
    ("Wer ist dein Lieblingsautor?", "Terry Pratchett, ganz klar.", "Wer ist mein Lieblingsautor?"),
    (
        "Was für ein Auto fährt dein Bruder?",
        "Einen uralten Käfer.",
        "Was fährt mein Bruder für ein Auto?",
    ),
    (
        "Wie heißt dein bester Freund?",
        "Jonas, seit der Grundschule.",
        "Wie heißt mein bester Freund?",
    ),
    (
        "In welcher Stadt bist du aufgewachsen?",
        "In Gelsenkirchen.",
        "In welcher Stadt bin ich aufgewachsen?",
    ),
    (
        "Welchen Tee trinkst du am liebsten?",
        "Lapsang Souchong.",
        "Welchen Tee trinke ich am liebsten?",
    ),
    (
        "Was war dein erstes Haustier?",
        "Ein Wellensittich namens Pieps.",
        "Was war mein erstes Haustier?",
    ),
    ("Welche Schuhgröße hast du?", "Dreiundvierzig.", "Welche Schuhgröße habe ich?"),
    (
        "Wie heißt die Band deines Sohnes?",
        "Die Rostigen Nägel.",
        "Wie heißt die Band von meinem Sohn?",
    ),
    ("Welches Instrument spielt deine Frau?", "Bratsche.", "Welches Instrument spielt meine Frau?"),
]
QA_EN = [
    (
        "What does your daughter study, by the way?",
        "Marine biology, in Kiel.",
        "What is my daughter studying again?",
    ),
    (
        "Where did you two get married back then?",
        "On a mountain pasture in the Allgäu.",
        "Where did we get married?",
    ),
    ("What is your tomcat called, actually?", "Mephisto.", "What is my tomcat called?"),
    ("What blood type are you?", "O negative.", "What blood type am I?"),
    ("What is your favourite colour?", "Petrol blue.", "What is my favourite colour?"),
    ("Who is your favourite author?", "Terry Pratchett, obviously.", "Who is my favourite author?"),
    ("What car does your brother drive?", "An ancient Beetle.", "What car does my brother drive?"),
    (
        "What is your best friend's name?",
        "Jonas, since primary school.",
        "What is my best friend's name?",
    ),
    ("Which town did you grow up in?", "In Gelsenkirchen.", "Which town did I grow up in?"),
    ("Which tea do you like best?", "Lapsang Souchong.", "Which tea do I like best?"),
    ("What was your first pet?", "A budgie called Pieps.", "What was my first pet?"),
    ("What is your shoe size?", "Forty-three.", "What is my shoe size?"),
    ("What is your son's band called?", "The Rusty Nails.", "What is my son's band called?"),
    ("Which instrument does your wife play?", "The viola.", "Which instrument does my wife play?"),
]

# --- one topic in several months: (topic statements by month, query naming one month) -------
# month keys are (year, month); the query's time word must resolve (from NOW) to that month

TIME_DE = [
    (
        {
            (2026, 3): "Beim Zahnarzt wurde mir ein Weisheitszahn gezogen.",
            (2025, 10): "Beim Zahnarzt war nur die Kontrolle, alles gut.",
            (2025, 7): "Der Zahnarzt hat die Praxis renoviert.",
        },
        "Was war im März beim Zahnarzt?",
    ),
    (
        {
            (2025, 7): "Wir waren am Gardasee zum Segeln.",
            (2026, 1): "Ich habe Bilder vom Gardasee aufgehängt.",
            (2025, 11): "Am Gardasee soll es jetzt ein Hochwasser geben.",
        },
        "Was war letzten Sommer am Gardasee?",
    ),
    (
        {
            (2025, 12): "Die Heizung ist ausgefallen und der Monteur kam erst nach drei Tagen.",
            (2025, 9): "Der Monteur hat den Wasserhahn getauscht.",
            (2026, 4): "Der Monteur hat die Heizung gewartet.",
        },
        "Was war im Dezember mit dem Monteur?",
    ),
    (
        {
            (2025, 10): "Im Garten haben wir die Kartoffeln geerntet.",
            (2026, 4): "Im Garten habe ich die Kartoffeln gesetzt.",
            (2025, 6): "Im Garten blühen die Kartoffeln.",
        },
        "Was war letzten Herbst mit den Kartoffeln?",
    ),
    (
        {
            (2026, 2): "Beim Skifahren habe ich mir das Knie verdreht.",
            (2025, 8): "Das Knie tut beim Wandern weh.",
            (2025, 11): "Der Orthopäde hat mein Knie untersucht.",
        },
        "Was war im Februar mit meinem Knie?",
    ),
    (
        {
            (2025, 8): "Der Umzug von meiner Mutter ist geschafft.",
            (2026, 3): "Meine Mutter überlegt schon wieder einen Umzug.",
            (2025, 12): "Meine Mutter hat sich nach dem Umzug gut eingelebt.",
        },
        "Was war im August mit dem Umzug meiner Mutter?",
    ),
    (
        {
            (2026, 1): "Das Konzert in der Elbphilharmonie war überwältigend.",
            (2025, 9): "Für das Konzert gab es keine Karten mehr.",
            (2026, 4): "Das Konzert wurde leider abgesagt.",
        },
        "Wie war das Konzert im Januar?",
    ),
    (
        {
            (2025, 11): "Mein Laptop ist kaputt gegangen, der Bildschirm ist dunkel.",
            (2026, 2): "Der neue Laptop ist viel schneller.",
            (2025, 7): "Am Laptop klemmt eine Taste.",
        },
        "Was war im November mit meinem Laptop?",
    ),
]
TIME_EN = [
    (
        {
            (2026, 3): "At the dentist they pulled a wisdom tooth.",
            (2025, 10): "At the dentist it was only the check-up, all good.",
            (2025, 7): "The dentist has renovated the practice.",
        },
        "What happened at the dentist in March?",
    ),
    (
        {
            (2025, 7): "We went sailing on Lake Garda.",
            (2026, 1): "I hung up pictures from Lake Garda.",
            (2025, 11): "Lake Garda is supposed to be flooding now.",
        },
        "What happened at Lake Garda last summer?",
    ),
    (
        {
            (2025, 12): "The heating broke down and the fitter only came after three days.",
            (2025, 9): "The fitter replaced the tap.",
            (2026, 4): "The fitter serviced the heating.",
        },
        "What happened with the fitter in December?",
    ),
    (
        {
            (2025, 10): "We harvested the potatoes in the garden.",
            (2026, 4): "I planted the potatoes in the garden.",
            (2025, 6): "The potatoes in the garden are flowering.",
        },
        "What happened with the potatoes last autumn?",
    ),
    (
        {
            (2026, 2): "I twisted my knee skiing.",
            (2025, 8): "My knee hurts when hiking.",
            (2025, 11): "The orthopaedist examined my knee.",
        },
        "What happened to my knee in February?",
    ),
    (
        {
            (2025, 8): "My mother's move is done.",
            (2026, 3): "My mother is already thinking about another move.",
            (2025, 12): "My mother has settled in well after the move.",
        },
        "What happened in August with my mother's move?",
    ),
    (
        {
            (2026, 1): "The concert at the Elbphilharmonie was overwhelming.",
            (2025, 9): "There were no more tickets for the concert.",
            (2026, 4): "The concert was cancelled, sadly.",
        },
        "How was the concert in January?",
    ),
    (
        {
            (2025, 11): "My laptop broke, the screen stays dark.",
            (2026, 2): "The new laptop is much faster.",
            (2025, 7): "A key on the laptop is stuck.",
        },
        "What happened with my laptop in November?",
    ),
]

# --- everyday chat -----------------------------------------------------------------------------

FILLER_USER_DE = [
    "Heute war das Wetter {w}.",
    "Auf der Arbeit war heute {a}.",
    "Ich koche heute Abend {d}.",
    "Ich bin gerade {m}.",
    "Hast du einen Tipp für {t}?",
    "Ich war heute {p}.",
    "Wir haben uns einen Film angeschaut, {f}.",
    "Ich muss noch {c} erledigen.",
    "Der Tag war {m2}, aber jetzt ist Ruhe.",
    "Ich habe vorhin mit meiner Mutter telefoniert.",
]
FILLER_CHARACTER_DE = [
    "Das klingt {r}!",
    "Erzähl mir mehr davon.",
    "Wie fühlst du dich dabei?",
    "Oh, das kann ich gut verstehen.",
    "Und was hast du jetzt vor?",
    "Schön, dass du davon erzählst.",
    "Das hört sich nach einem {r2} Tag an.",
    "Magst du mir sagen, was dich beschäftigt?",
]
SLOTS_DE = {
    "w": ["sonnig und warm", "grau und regnerisch", "stürmisch", "neblig und kalt", "schwül"],
    "a": [
        "viel los",
        "eine lange Besprechung",
        "erstaunlich ruhig",
        "Chaos im Lager",
        "ein Ausflug mit dem Team",
    ],
    "d": [
        "Nudeln mit Pesto",
        "eine Gemüsesuppe",
        "Linsen mit Spätzle",
        "Risotto",
        "Ofenkartoffeln",
    ],
    "m": ["ziemlich müde", "gut gelaunt", "etwas gestresst", "nachdenklich", "voller Energie"],
    "t": [
        "ein Geschenk",
        "ein gutes Buch",
        "einen Ausflug",
        "besseren Schlaf",
        "ein schnelles Rezept",
    ],
    "p": ["beim Einkaufen", "im Schwimmbad", "in der Stadt", "beim Sport", "in der Bibliothek"],
    "f": [
        "eine Komödie",
        "ein Krimi",
        "eine Doku über Wale",
        "ein alter Western",
        "ein Liebesfilm",
    ],
    "c": ["die Wäsche", "die Steuer", "ein paar Anrufe", "den Einkauf", "die Post"],
    "m2": ["anstrengend", "lang", "merkwürdig", "schön", "hektisch"],
    "r": ["spannend", "anstrengend", "schön", "lustig", "aufregend"],
    "r2": ["guten", "vollen", "ruhigen", "langen", "besonderen"],
}
FILLER_USER_EN = [
    "The weather today was {w}.",
    "Work today was {a}.",
    "I'm cooking {d} tonight.",
    "I'm feeling {m} right now.",
    "Do you have a tip for {t}?",
    "I was {p} today.",
    "We watched a film, {f}.",
    "I still have to take care of {c}.",
    "The day was {m2}, but now it's quiet.",
    "I just phoned my mother.",
]
FILLER_CHARACTER_EN = [
    "That sounds {r}!",
    "Tell me more about it.",
    "How do you feel about that?",
    "Oh, I can understand that.",
    "And what are you going to do now?",
    "I'm glad you tell me.",
    "That sounds like a {r2} day.",
    "Would you like to tell me what's on your mind?",
]
SLOTS_EN = {
    "w": ["sunny and warm", "grey and rainy", "stormy", "foggy and cold", "humid"],
    "a": [
        "very busy",
        "one long meeting",
        "surprisingly calm",
        "chaos in the warehouse",
        "a team outing",
    ],
    "d": [
        "pasta with pesto",
        "a vegetable soup",
        "lentils with noodles",
        "risotto",
        "baked potatoes",
    ],
    "m": ["quite tired", "cheerful", "a bit stressed", "thoughtful", "full of energy"],
    "t": ["a present", "a good book", "a day trip", "better sleep", "a quick recipe"],
    "p": ["shopping", "at the pool", "in town", "at sports", "at the library"],
    "f": ["a comedy", "a crime story", "a documentary about whales", "an old western", "a romance"],
    "c": ["the laundry", "the taxes", "a few calls", "the shopping", "the post"],
    "m2": ["exhausting", "long", "strange", "nice", "hectic"],
    "r": ["exciting", "exhausting", "lovely", "funny", "thrilling"],
    "r2": ["good", "full", "quiet", "long", "special"],
}


def _typo(word: str) -> str:
    """The surname with two inner letters swapped (a typing slip)."""
    if len(word) < 6:
        return word
    i = len(word) // 2
    return word[: i - 1] + word[i] + word[i - 1] + word[i + 1 :]


SYLLABLES = [
    "ka",
    "lo",
    "mir",
    "ben",
    "tra",
    "vel",
    "do",
    "ris",
    "an",
    "sel",
    "mo",
    "gur",
    "ti",
    "na",
    "fen",
    "bro",
    "li",
    "zak",
    "wer",
    "hu",
    "pel",
    "ost",
    "ma",
    "dun",
]
EXTRAS_DE = [
    "{N} hat mir von {P} erzählt.",
    "Wir waren kurz in {P}.",
    "Das hat {n} Euro gekostet.",
    "{N} kommt am Wochenende vorbei.",
    "Um {h} Uhr war ich endlich fertig.",
]
EXTRAS_EN = [
    "{N} told me about {P}.",
    "We were in {P} for a bit.",
    "It cost {n} euros.",
    "{N} is coming round at the weekend.",
    "I was finally done at {h}.",
]


def _made_up(rng: random.Random) -> str:
    """A name or place nobody else uses (people mention many): two or three syllables."""
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()


def _filler(rng: random.Random, lang: str, speaker: str) -> str:
    """Everyday chat: two of the speaker's sentences with their slots filled, the person's
    often with a made-up name, place or number (a large archive is not a few sentences
    repeated: real ones mention many names)."""
    if lang == "de":
        pool = FILLER_USER_DE if speaker == USER else FILLER_CHARACTER_DE
        slots = SLOTS_DE
    else:
        pool = FILLER_USER_EN if speaker == USER else FILLER_CHARACTER_EN
        slots = SLOTS_EN
    first, second = rng.sample(pool, 2)
    fill = {k: rng.choice(v) for k, v in slots.items()}
    text = f"{first.format(**fill)} {second.format(**{k: rng.choice(v) for k, v in slots.items()})}"
    if speaker == USER and rng.random() < 0.6:
        extra = rng.choice(EXTRAS_DE if lang == "de" else EXTRAS_EN)
        text += " " + extra.format(
            N=_made_up(rng), P=_made_up(rng), n=rng.randint(3, 400), h=rng.randint(6, 23)
        )
    return text


Block = list[tuple[str, str, str | None]]
"""Consecutive turns: (speaker, text, evidence key or None)."""


@dataclass
class _Session:
    day: datetime
    blocks: list[Block] = field(default_factory=list)


def _sessions(rng: random.Random, count: int) -> list[_Session]:
    days = sorted(rng.sample(range(SPAN_DAYS), count))
    return [_Session(SPAN_START + timedelta(days=d, hours=rng.randint(8, 21))) for d in days]


def _month_sessions(sessions: list[_Session], year: int, month: int) -> list[_Session]:
    return [s for s in sessions if s.day.year == year and s.day.month == month]


def build_dataset(lang: str, *, seed: int = 18, sessions: int = 150) -> Dataset:
    """The history with its facts, distractors and questions (same seed, same data)."""
    rng = random.Random(f"{seed}-{lang}")
    days = _sessions(rng, sessions)
    queries: list[Query] = []
    de = lang == "de"

    def place(block: Block, within: list[_Session] | None = None) -> None:
        rng.choice(within or days).blocks.append(block)

    ways = ["name", "umschreibung", "tippfehler"]
    for index, name in enumerate(NAMES):
        rel_de, para_de, rel_en, para_en = RELATIONS[index % len(RELATIONS)]
        surname = name.split()[-1]
        key = f"name-{index}"
        if de:
            statement = f"{rel_de} heißt übrigens {name}."
            asks = {
                "name": f"Was weißt du noch über {surname}?",
                "umschreibung": f"Wie heißt noch mal {para_de}?",
                "tippfehler": f"Was war noch mal mit {_typo(surname)}?",
            }
            distractors = [
                f"{rel_de} {rng.choice(RELATION_EVENTS_DE)}.",
                f"{para_de[0].upper()}{para_de[1:]}, {rng.choice(RELATION_EVENTS_DE)}.",
            ]
        else:
            statement = f"My {rel_en} is called {name}, by the way."
            asks = {
                "name": f"What do you remember about {surname}?",
                "umschreibung": f"What is the name of {para_en} again?",
                "tippfehler": f"What was the thing with {_typo(surname)}?",
            }
            distractors = [
                f"My {rel_en} {rng.choice(RELATION_EVENTS_EN)}.",
                f"{para_en[0].upper()}{para_en[1:]} {rng.choice(RELATION_EVENTS_EN)}.",
            ]
        way = ways[index % len(ways)]
        place([(USER, statement, key)])
        for text in distractors:
            place([(USER, text, None)])
        queries.append(Query("name", way, asks[way], key))

    for index, (statement, question) in enumerate(PARAPHRASE_DE if de else PARAPHRASE_EN):
        key = f"umschreibung-{index}"
        place([(USER, statement, key)])
        queries.append(Query("umschreibung", "umschreibung", question, key))

    for index, (statement, question, distractor) in enumerate(
        INFLECTION_DE if de else INFLECTION_EN
    ):
        key = f"beugung-{index}"
        place([(USER, statement, key)])
        place([(USER, distractor, None)])
        queries.append(Query("beugung", "beugung", question, key))

    for index, (asked, answer, question) in enumerate(QA_DE if de else QA_EN):
        key = f"rueckfrage-{index}"
        place([(CHARACTER, asked, None), (USER, answer, key)])
        queries.append(Query("rueckfrage", "rueckfrage", question, key))

    for index, (by_month, question) in enumerate(TIME_DE if de else TIME_EN):
        first = True
        for (year, month), text in by_month.items():
            key = f"zeit-{index}" if first else None
            place([(USER, text, key)], _month_sessions(days, year, month))
            first = False
        queries.append(Query("zeit", "zeit", question, f"zeit-{index}"))

    dataset = Dataset(lang, queries=queries)
    serial = 0

    def add(speaker: str, text: str, key: str | None, moment: datetime) -> None:
        nonlocal serial
        dataset.turns.append(
            {
                "id": key or f"{lang}-{serial}",
                "speaker": speaker,
                "text": text,
                "time": moment.isoformat(),
            }
        )
        serial += 1

    for session in days:
        blocks: list[Block] = [
            [
                (USER, _filler(rng, lang, USER), None),
                (CHARACTER, _filler(rng, lang, CHARACTER), None),
            ]
            for _ in range(rng.randint(4, 7))
        ]
        for block in session.blocks:
            if block[-1][0] == USER:  # the character answers what the person said
                block = [*block, (CHARACTER, _filler(rng, lang, CHARACTER), None)]
            blocks.insert(rng.randint(0, len(blocks)), block)
        moment = session.day
        for block in blocks:
            for speaker, text, key in block:
                moment += timedelta(seconds=rng.randint(20, 240))
                add(speaker, text, key, moment)
    return dataset


def filler_turns(lang: str, count: int, *, seed: int, prefix: str) -> list[dict[str, Any]]:
    """`count` turns of everyday chat spread over the same months (the bulk of a large
    archive), ids `{prefix}-{n}`."""
    rng = random.Random(f"{seed}-{lang}-{prefix}")
    turns = []
    for n in range(count):
        moment = SPAN_START + timedelta(seconds=rng.randint(0, SPAN_DAYS * 86_400))
        speaker = USER if n % 2 == 0 else CHARACTER
        turns.append(
            {
                "id": f"{prefix}-{n}",
                "speaker": speaker,
                "text": _filler(rng, lang, speaker),
                "time": moment.isoformat(),
            }
        )
    return turns
