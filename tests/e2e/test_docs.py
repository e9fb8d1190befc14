"""What a reader follows: the generated pages are current, every reference can be
followed from the repository, and README stays a short guide."""

import re
import subprocess
from pathlib import Path

import pytest

from rlopt._docs import pages

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["cli.md", "api.md"])
def test_generated_pages_are_current(name):
    fresh = {path.name: text for path, text in pages(ROOT).items()}
    assert (ROOT / "docs" / name).read_text() == fresh[name], (
        f"docs/{name} is stale: run `python -m rlopt._docs`"
    )


def _tracked(*patterns: str) -> list[Path]:
    listed = subprocess.run(["git", "ls-files", *patterns], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode != 0:  # not a git checkout: the files on disk
        return [p for pattern in patterns for p in ROOT.glob(pattern)]
    # a copy of the tree may hold an index older than its files: what is on disk counts
    return [ROOT / line for line in listed.stdout.split() if (ROOT / line).is_file()]


def test_no_reference_to_a_document_outside_the_repository():
    """The scenario document the project started from is not shipped: code, help and
    docs point to docs/method.md sections instead."""
    files = _tracked(
        "rlopt/*.py",
        "rlopt/**/*.py",
        "rlopt/report/templates/*",
        "docs/*.md",
        "README.md",
        "configs/**/*.yaml",
    )
    files += [ROOT / "experiments" / "README.md"]
    offending = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in files
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"\bSPEC\b", line)
    ]
    assert not offending, offending


def test_tests_name_behaviour_not_tickets():
    files = _tracked("tests/*.py", "tests/**/*.py")
    offending = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in files
        if path.name != "test_docs.py"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"\bissues? ?#?\d+|\bthe \w+ issue\b", line, re.I)
    ]
    assert not offending, offending


def test_readme_is_a_short_guide_without_commit_hashes():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 200
    hashes = re.findall(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b", text)
    assert not hashes, f"commit hashes in README (history goes to CHANGELOG.md): {hashes}"
