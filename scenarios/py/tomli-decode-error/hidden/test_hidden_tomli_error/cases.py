"""Invalid documents: (document, message, pos, line, column); pos is None at the end."""

CASES = [
    ("a = 1\nb = \n", "Invalid value", 10, 2, 5),
    ('x = "unterminated', "Unterminated string", None, 1, 18),
    ("[table]\nkey = 1\nkey = 2\n", "Cannot overwrite a value", 23, 3, 8),
    ("a = [1, 2", "Unclosed array", None, 1, 10),
    ("a = 1\n\n  bad line", "Expected '=' after a key in a key/value pair", 13, 3, 7),
    ("= 1", "Invalid statement", 0, 1, 1),
    ("a = 1 b = 2", "Expected newline or end of document after a statement", 6, 1, 7),
    ("[[a]]\n[a]\n", "Cannot declare ('a',) twice", 8, 2, 3),
    ('s = "\\q"', "Unescaped '\\' in a string", 7, 1, 8),
    ("a = { b = 1, }", "Invalid initial character for a key part", 13, 1, 14),
]
