from slugify import CYRILLIC, GERMAN, GREEK, PRE_TRANSLATIONS

EXPECTED_UPPER = {
    "cyrillic": [("Ё", "E"), ("Я", "Ya"), ("Х", "H"), ("У", "Y"), ("Щ", "Sch"), ("Ю", "U")],
    "german": [("Ä", "Ae"), ("Ö", "Oe"), ("Ü", "Ue")],
    "greek": [("Χ", "Ch"), ("Υ", "Y"), ("Ύ", "Y"), ("Ϋ", "Y")],
}
LOWER = {
    "cyrillic": [("ё", "e"), ("я", "ya"), ("х", "h"), ("у", "y"), ("щ", "sch"), ("ю", "u")],
    "german": [("ä", "ae"), ("ö", "oe"), ("ü", "ue")],
    "greek": [
        ("χ", "ch"),
        ("Ξ", "X"),
        ("ϒ", "Y"),
        ("υ", "y"),
        ("ύ", "y"),
        ("ϋ", "y"),
        ("ΰ", "y"),
    ],
}
LISTS = {"cyrillic": CYRILLIC, "german": GERMAN, "greek": GREEK}


def test_every_language_has_its_upper_case_letters():
    for language, entries in LISTS.items():
        for pair in EXPECTED_UPPER[language]:
            assert pair in entries, f"{language}: {pair} missing"


def test_lower_case_entries_are_kept_in_order():
    for language, entries in LISTS.items():
        lower = [pair for pair in entries if pair in LOWER[language]]
        assert lower == LOWER[language], language


def test_no_duplicates_and_nothing_foreign():
    for language, entries in LISTS.items():
        assert len(entries) == len(set(entries)), language
        for char, _ in entries:
            assert char.lower() in {c.lower() for c, _ in LOWER[language]} or char in {
                c.upper() for c, _ in LOWER[language]
            }, (language, char)


def test_pre_translations_is_the_union():
    assert PRE_TRANSLATIONS == CYRILLIC + GERMAN + GREEK
    for pairs in EXPECTED_UPPER.values():
        for pair in pairs:
            assert pair in PRE_TRANSLATIONS
