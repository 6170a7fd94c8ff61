"""Targets and forger snippets shared by the verifier's output-forgery tests.

A Python target (``calc.add`` with a hidden test) and a Go one (``m.Abs``), and the
JUnit rewrite a forger runs at exit: the failures stripped from the report, the
canary's (the last file pytest was given) kept, exit 1 as when only the canary fails."""

from __future__ import annotations

PY_HIDDEN = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
PY_CALC = "def add(a, b):\n    return a - b\n"

GO_MOD = "module example.com/gf\n\ngo 1.19\n"
GO_CODE = "package m\n\nfunc Abs(x int) int { return x }\n"
GO_FIXED = "package m\n\nfunc Abs(x int) int {\n\tif x < 0 {\n\t\treturn -x\n\t}\n\treturn x\n}\n"
GO_HIDDEN = (
    'package m\n\nimport "testing"\n\n'
    "func TestAbsNegative(t *testing.T) {\n\tif Abs(-2) != 2 {\n\t\tt.Fatal(Abs(-2))\n\t}\n}\n"
)

# needs os, sys (and time when pause) imported by the snippet it is part of
SPARE_JUNIT = """
_junit = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--junitxml=")), None)
_bird = os.path.basename(sys.argv[-1]).rsplit(".", 1)[0]


def _spare():
    import xml.etree.ElementTree as ET

    time.sleep(PAUSE)
    tree = ET.parse(_junit)
    for case in tree.getroot().iter("testcase"):
        if _bird not in case.get("classname", ""):
            for bad in case.findall("failure") + case.findall("error"):
                case.remove(bad)
    tree.write(_junit)
    os._exit(1)

"""


def spare_junit(pause: float = 0.0) -> str:
    """The rewrite, waiting ``pause`` seconds before it reads the report."""
    return SPARE_JUNIT.replace("PAUSE", repr(pause))
