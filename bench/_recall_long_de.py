"""The German long conversation of bench/memory_recall.py (`--languages de-long`): the same
shape as `en-long` (bench/_recall_long.py: the same names, kinds of question, months and
counts), its own German text, written by hand for this bench (not a translation tool's).
German asks more of the words: nouns are compounds ("Teamleiterstelle"), verbs split
("bin … umgezogen") and questions inflect differently from statements.
"""

from __future__ import annotations

from _recall_data import CHARACTER, USER

SPEAKER_QUESTION = "Was hat {name} über {topic} gesagt?"

# topics in a form that is the same as subject and after "über" (feminine, neuter, plural)
SPEAKER_TOPICS: list[tuple[str, dict[str, str]]] = [
    ("die Parzelle", {
        "Lena": "Die Parzelle ist mein Lieblingsort, ich würde dort das ganze Jahr Kürbisse ziehen.",
        "Tom": "Die Parzelle macht viel zu viel Arbeit, das Unkraut gewinnt jeden Sommer.",
        "Priya": "Der Vorstand will die Pacht für die Parzelle schon wieder erhöhen, eine Frechheit.",
    }),
    ("die neue Bäckerei", {
        "Lena": "Die neue Bäckerei hat eine Kardamomschnecke, für die sich das Anstehen lohnt.",
        "Tom": "Die neue Bäckerei ist überteuert, vier Euro für ein Croissant.",
        "Priya": "Der Besitzer der neuen Bäckerei war früher angeblich Chemiker.",
    }),
    ("die Lesegruppe", {
        "Lena": "In der Lesegruppe möchte ich endlich mal etwas Lustiges lesen.",
        "Tom": "Die Lesegruppe ist doch nur ein Vorwand für Wein, mir soll es recht sein.",
        "Priya": "Nächsten Monat bin ich Gastgeberin der Lesegruppe, ich koche Dal.",
    }),
    ("die Campingtour", {
        "Lena": "Auf der Campingtour will ich jeden Morgen im See schwimmen.",
        "Tom": "Für die Campingtour bringe ich das große Zelt mit, da passen sechs rein.",
        "Priya": "Die Campingtour fällt auf die Hochzeit meines Cousins, ich kann nur am Sonntag.",
    }),
    ("das neue Büro", {
        "Lena": "Im neuen Büro bekomme ich endlich einen Platz am Fenster.",
        "Tom": "Das neue Büro ist ein Chaos, die Hälfte der Bildschirme fehlt.",
        "Priya": "Zum neuen Büro brauche ich zwanzig Minuten länger.",
    }),
    ("das Chorkonzert", {
        "Lena": "Beim Chorkonzert singe ich in der zweiten Hälfte ein Solo, ich habe Panik.",
        "Tom": "Zum Chorkonzert komme ich nur, wenn es eine Bar gibt.",
        "Priya": "Die Karten für das Chorkonzert sind schon ausverkauft.",
    }),
    ("die Hündin der Nachbarn", {
        "Lena": "Die Hündin der Nachbarn ist ein Schatz, sie bringt mir Stöckchen.",
        "Tom": "Die Hündin der Nachbarn bellt um fünf Uhr morgens, ich könnte schreien.",
        "Priya": "Die Hündin der Nachbarn hat zweimal meine Tulpen ausgegraben.",
    }),
    ("die Radtour an die Küste", {
        "Lena": "Bei der Radtour an die Küste sollten wir im Teehaus in Husum anhalten.",
        "Tom": "Die Radtour an die Küste sind hundertfünfzig Kilometer, das ist Wahnsinn.",
        "Priya": "Die Radtour an die Küste fahre ich mit dem E-Bike, ohne Scham.",
    }),
    ("die Wohnungssuche", {
        "Lena": "Bei der Wohnungssuche würde ich immer Licht vor Platz nehmen.",
        "Tom": "Die Wohnungssuche ist hoffnungslos, bei jeder Besichtigung sind dreißig Leute.",
        "Priya": "Für die Wohnungssuche: Mein Vermieter hat im Juni eine Wohnung frei.",
    }),
    ("die Hochzeitspläne", {
        "Lena": "Für die Hochzeitspläne stimme ich für eine Scheune und eine Folkband.",
        "Tom": "Die Hochzeitspläne sind viel zu groß, geht doch einfach aufs Standesamt.",
        "Priya": "Für die Hochzeitspläne kann ich die Blumen machen, das habe ich bei meiner Schwester auch.",
    }),
    ("das Kneipenquiz", {
        "Lena": "Beim Kneipenquiz haben wir schon wieder in der Erdkunderunde verloren.",
        "Tom": "Das Kneipenquiz-Team braucht jemanden, der sich mit Fußball auskennt.",
        "Priya": "Das Kneipenquiz ist jetzt mittwochs.",
    }),
    ("das Gartenfest", {
        "Lena": "Für das Gartenfest backe ich einen Zitronenkuchen.",
        "Tom": "Das Gartenfest braucht einen Pavillon, falls es regnet.",
        "Priya": "Zum Gartenfest kann ich nicht kommen, ich habe an dem Wochenende Bereitschaft.",
    }),
]  # fmt: skip

TOPIC_MENTIONS = [
    "Gibt es was Neues über {t}?",
    "Ich muss dauernd an {t} denken.",
    "{T} war beim Mittagessen wieder Thema.",
    "Lass uns am Wochenende über {t} reden.",
    "Ehrlich gesagt ist mir {t} ziemlich egal.",
    "Erinnere mich, dass ich {t} anspreche.",
    "Hat jemand den Plan für {t} aufgeschrieben?",
    "Schon wieder {t}? Darüber haben wir letzte Woche geredet.",
]

CHANGED: list[tuple[list[str], str]] = [
    (["Ich wohne gerade in Leipzig, nah an der Uni.",
      "Wir sind endlich umgezogen, ich wohne jetzt in Hamburg, direkt am Hafen."],
     "Wo wohne ich inzwischen?"),
    (["Ich arbeite in der Bücherei in der Lindenstraße.",
      "Ich habe in der Bücherei gekündigt, ich arbeite jetzt im Fahrradladen."],
     "Wo ist mein Job?"),
    (["Meine Freundin heißt Mara.",
      "Mara und ich haben Schluss gemacht. Ich bin jetzt mit Jule zusammen."],
     "Mit wem bin ich gerade zusammen?"),
    (["Ich fahre einen kleinen blauen Fiat.",
      "Ich habe den Fiat verkauft und einen grünen Skoda Kombi gekauft."],
     "Welches Auto fahre ich jetzt?"),
    (["Meine Lieblingsband ist Element of Crime.",
      "Ich höre nur noch Von Wegen Lisbeth, das ist jetzt meine Lieblingsband."],
     "Welche Band mag ich am liebsten?"),
    (["Ich nehme morgens den Zug um 7:40 zur Arbeit.",
      "Ich bin auf den Zug um 8:15 umgestiegen, der frühe war immer voll."],
     "Welchen Zug nehme ich morgens?"),
    (["Die Katze wiegt vier Kilo.", "Der Tierarzt sagt, die Katze hat jetzt fünf Kilo.",
      "Die Katze hat sechs Kilo, der Tierarzt hat sie auf Diät gesetzt."],
     "Wie schwer ist meine Katze?"),
    (["Ich lerne Spanisch mit einer App.",
      "Ich habe Spanisch aufgegeben und lerne stattdessen Japanisch."],
     "Welche Sprache lerne ich gerade?"),
    (["Meine Miete sind 750 Euro im Monat.",
      "Der Vermieter hat meine Miete auf 820 Euro erhöht."],
     "Wie viel Miete zahle ich?"),
    (["Ich gehe dienstags schwimmen.",
      "Ich habe das Schwimmen auf Donnerstagmorgen verlegt."],
     "An welchem Tag gehe ich schwimmen?"),
]  # fmt: skip

WHEN: list[tuple[list[tuple[str, str]], str]] = [
    ([(USER, "Heute war mein allererster Töpferkurs, meine Schale ist zusammengefallen.")],
     "Wann habe ich mit dem Töpfern angefangen?"),
    ([(USER, "Wir haben heute eine Hündin aus dem Tierheim geholt, sie heißt Keks.")],
     "Wann haben wir Keks bekommen?"),
    ([(USER, "Ich habe heute Morgen meine Abschlussarbeit abgegeben!")],
     "Wann habe ich meine Abschlussarbeit eingereicht?"),
    ([(USER, "Das Baby meiner Schwester ist letzte Nacht gekommen, ein kleiner Junge namens Ezra.")],
     "Wann wurde mein Neffe geboren?"),
    ([(USER, "Ich bin von der Leiter gefallen und habe mir das Handgelenk gebrochen.")],
     "Wann habe ich mir das Handgelenk gebrochen?"),
    ([(CHARACTER, "Und, wie lief die Fahrprüfung?"),
      (USER, "Bestanden, im zweiten Anlauf!")],
     "Wann habe ich die Führerscheinprüfung bestanden?"),
    ([(CHARACTER, "Ist die Küche fertig geworden?"),
      (USER, "Ja, wir haben sie am Wochenende gelb gestrichen.")],
     "Wann haben wir die Küche gestrichen?"),
    ([(CHARACTER, "Wie lief der Halbmarathon?"),
      (USER, "Zwei Stunden und fünf Minuten, mein erster.")],
     "Wann bin ich meinen ersten Halbmarathon gelaufen?"),
]  # fmt: skip

PAIRS: list[tuple[str, str, str]] = [
    ("Von welcher Bäckerei holst du dein Brot?", "Von Hartmann, die am Kanal.",
     "Wo kaufe ich normalerweise Brot?"),
    ("Was hat die Ärztin zu deinem Rücken gesagt?", "Bandscheibenvorfall, sechs Wochen Physio.",
     "Was war die Diagnose für meinen Rücken?"),
    ("Wer kümmert sich um deine Pflanzen, wenn du weg bist?", "Meine Nachbarin Agnes.",
     "Wer gießt meine Pflanzen, wenn ich verreise?"),
    ("Was schenkst du deinem Vater zum Geburtstag?",
     "Eine Angel, er deutet das seit Monaten an.", "Welches Geschenk habe ich für meinen Papa ausgesucht?"),
    ("Welchen Film hast du an deinem Geburtstag gesehen?", "Dune, im großen Saal.",
     "Was habe ich an meinem Geburtstag im Kino geschaut?"),
    ("Was ist die Lieblingsblume deiner Mutter?", "Wicken.", "Welche Blumen liebt meine Mama?"),
    ("Wie lange fährst du zu deinen Eltern?", "Etwa drei Stunden, wenn die A7 frei ist.",
     "Wie weit wohnen meine Eltern mit dem Auto weg?"),
    ("Wie ist das WLAN-Passwort in der Hütte?", "Blaufink42, alles in einem Wort.",
     "Wie war das Internet-Passwort in der Hütte?"),
]  # fmt: skip

TIMED: list[tuple[dict[tuple[int, int], str], str]] = [
    ({(2026, 2): "Der Monteur hat die Pumpe der Heizung getauscht, endlich wieder warmes Wasser.",
      (2025, 11): "Die Heizung hat die ganze Nacht gehämmert.",
      (2025, 8): "Wir haben die Heizung warten lassen."},
     "Was war im Februar mit der Heizung?"),
    ({(2025, 10): "Beim Tag der offenen Gärten haben wir einen Preis für die Kürbisse gewonnen.",
      (2026, 4): "Beim Tag der offenen Gärten hat es die ganze Zeit geregnet.",
      (2025, 7): "Der Tag der offenen Gärten wird gerade geplant."},
     "Was war letzten Herbst beim Tag der offenen Gärten?"),
    ({(2026, 1): "Mein Auto ist wegen der Bremsen durch den TÜV gefallen.",
      (2025, 9): "Beim Auto ist bald der TÜV fällig.",
      (2026, 3): "Das Auto hat die Nachprüfung beim TÜV bestanden."},
     "Was war im Januar mit dem TÜV?"),
    ({(2025, 12): "Unser Stand auf dem Weihnachtsmarkt hatte mittags keine Kerzen mehr.",
      (2025, 9): "Wir haben uns für einen Stand auf dem Weihnachtsmarkt angemeldet.",
      (2026, 2): "Der Weihnachtsmarkt hat uns die Rechnung für den Stand geschickt."},
     "Wie lief der Marktstand im Dezember?"),
    ({(2026, 3): "Bei der Arbeit bin ich zur Teamleiterin befördert worden.",
      (2025, 10): "Bei der Arbeit wird über eine Stelle als Teamleiterin geredet.",
      (2026, 4): "Bei der Arbeit hat die Schulung für Teamleiter angefangen."},
     "Was war im März bei der Arbeit?"),
    ({(2025, 7): "In den Sommerferien sind wir den Rheinsteig gewandert.",
      (2026, 2): "Ich habe Fotos vom Rheinsteig ausgedruckt.",
      (2025, 11): "Vielleicht wandern wir irgendwann nochmal den Rheinsteig."},
     "Was haben wir letzten Sommer auf dem Rheinsteig gemacht?"),
]  # fmt: skip
