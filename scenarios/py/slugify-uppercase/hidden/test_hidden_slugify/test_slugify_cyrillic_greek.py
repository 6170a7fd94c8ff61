from slugify import PRE_TRANSLATIONS, slugify


def test_upper_case_cyrillic():
    assert slugify("ЩЯ Ю", replacements=PRE_TRANSLATIONS) == "schya-u"
    assert slugify("ЁХУ", replacements=PRE_TRANSLATIONS, lowercase=False) == "EHY"


def test_upper_case_greek():
    assert slugify("ΧΥ Ύ", replacements=PRE_TRANSLATIONS) == "chy-y"
    assert slugify("Χχ", replacements=PRE_TRANSLATIONS, lowercase=False) == "Chch"
