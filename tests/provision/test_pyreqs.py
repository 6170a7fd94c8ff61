"""A project's Python requirements, read without building: declared ones, test extras,
and what test files import."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.unit


def test_project_requirements_are_read_without_building() -> None:
    from harness.provision.pyreqs import project_requirements

    pyproject = """[project]
name = "x"
dependencies = ["a>=1"]
[project.optional-dependencies]
tests = ["pytest>=8"]
docs = ["sphinx"]
"""
    assert project_requirements(pyproject, None) == (["a>=1"], ["pytest>=8"])
    setup_py = (
        "from setuptools import setup\n"
        "install_requires = ['text-unidecode>=1.3']\n"
        "setup(name='x', install_requires=install_requires, tests_require=['b'])\n"
    )
    assert project_requirements(None, setup_py) == (["text-unidecode>=1.3"], ["b"])
    assert project_requirements("not toml [", "def (") == ([], [])


def test_a_test_file_s_import_is_installed_when_the_project_declares_it() -> None:
    """Issue 50: test dependencies declared outside the test extras (a `dev` extra, a
    dependency group) are installed when a test file imports them, and only then."""
    from harness.provision.pyreqs import imported_by_tests

    pyproject = (
        '[project]\nname = "x"\n[project.optional-dependencies]\n'
        'dev = ["freezegun>=1.0", "black"]\ndocs = ["mkdocs"]\n'
        '[dependency-groups]\ntesting = ["hypothesis", {include-group = "dev"}]\n'
    )
    tests = [
        "import freezegun\nfrom hypothesis import given\nimport os\n",
        "from . import helper\nimport mkdocs_ext\n",
    ]
    assert imported_by_tests(pyproject, tests) == ["freezegun>=1.0", "hypothesis"]
    assert imported_by_tests(None, tests) == []
