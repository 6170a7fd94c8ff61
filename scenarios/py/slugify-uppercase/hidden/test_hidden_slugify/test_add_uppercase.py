from slugify.special import add_uppercase_char


def test_adds_every_upper_case_form():
    got = add_uppercase_char([("ж", "zh"), ("ш", "sh"), ("ц", "ts")])
    for pair in [("Ж", "Zh"), ("Ш", "Sh"), ("Ц", "Ts"), ("ж", "zh"), ("ш", "sh"), ("ц", "ts")]:
        assert pair in got
    assert len(got) == 6


def test_skips_letters_without_a_different_upper_case():
    got = add_uppercase_char([("Ξ", "X"), ("ß", "ss"), ("1", "one")])
    # 'ß'.upper() is 'SS': a different string, so it gets an entry; the others do not.
    assert sorted(got) == sorted([("Ξ", "X"), ("ß", "ss"), ("1", "one"), ("SS", "Ss")])


def test_does_not_duplicate_existing_upper_entries():
    got = add_uppercase_char([("Ä", "Ae"), ("ä", "ae")])
    assert sorted(got) == sorted([("Ä", "Ae"), ("ä", "ae")])


def test_argument_is_not_modified():
    original = [("ж", "zh"), ("ш", "sh")]
    add_uppercase_char(original)
    assert original == [("ж", "zh"), ("ш", "sh")]


def test_empty():
    assert add_uppercase_char([]) == []
