from slugify import GERMAN, PRE_TRANSLATIONS, slugify


def test_upper_case_umlauts():
    assert slugify("ÄRGER über ÖL", replacements=GERMAN) == "aerger-ueber-oel"
    assert slugify("ÜBER Über über", replacements=PRE_TRANSLATIONS) == "ueber-ueber-ueber"


def test_upper_case_umlauts_keep_case():
    got = slugify("Übermaß Öfen", replacements=GERMAN + [("ß", "ss")], lowercase=False)
    assert got == "Uebermass-Oefen"
    assert slugify("ÄÖÜ", replacements=PRE_TRANSLATIONS, lowercase=False) == "AeOeUe"
