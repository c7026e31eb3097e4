"""The documentation is self-contained: every link and docs/ path resolves inside the repository, section
references point at sections that exist, and nothing points outside the checkout."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MARKDOWN = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SOURCES = sorted((ROOT / "src").rglob("*.py"))
#: Everything a user of the repository reads: it must not point at files outside the checkout.
USER_FACING = [ROOT / "README.md", ROOT / "Snakefile", ROOT / "Makefile", ROOT / "docs", ROOT / "src",
               ROOT / "workflow", ROOT / "profiles"]
FORBIDDEN = ("../shared", "DESIGN.md", "/work/shared")

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
DOCS_PATH = re.compile(r"(?<![\w./-])docs/[\w./-]*\w")
SECTION_REF = re.compile(r"docs/design\.md §(\d+(?:\.\d+)*)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def _text_files(paths: list[Path]) -> list[Path]:
    files = []
    for path in paths:
        candidates = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        files += [p for p in candidates if "__pycache__" not in p.parts and p.suffix not in {".pyc", ".png"}]
    return files


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(markdown: Path) -> set[str]:
    text = FENCE.sub("", markdown.read_text(encoding="utf-8"))
    return {_slug(match) for match in re.findall(r"^#{1,6} (.+)$", text, re.MULTILINE)}


def _design_sections() -> set[str]:
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    return set(re.findall(r"^#{2,3} (\d+(?:\.\d+)*)\.? ", text, re.MULTILINE))


@pytest.mark.parametrize("markdown", MARKDOWN, ids=lambda path: path.relative_to(ROOT).as_posix())
def test_relative_links_resolve(markdown: Path) -> None:
    text = FENCE.sub("", markdown.read_text(encoding="utf-8"))
    broken = []
    for target in LINK.findall(text):
        if re.match(r"^[a-z]+:", target):  # http:, https:, mailto:
            continue
        path_part, _, anchor = target.partition("#")
        resolved = (markdown.parent / path_part).resolve() if path_part else markdown
        if not resolved.exists() or ROOT not in (resolved, *resolved.parents):
            broken.append(f"{target} (no such file)")
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(f"{target} (no heading with anchor #{anchor})")
    assert not broken, f"{markdown.relative_to(ROOT)}: broken links {broken}"


def test_docs_paths_exist() -> None:
    """Every ``docs/...`` path named in the README, the docs, the library and the workflow files is a file here."""
    missing = []
    for file in [*MARKDOWN, *SOURCES, *_text_files([ROOT / "workflow", ROOT / "profiles", ROOT / "Snakefile",
                                                    ROOT / "Makefile"])]:
        for mention in DOCS_PATH.findall(file.read_text(encoding="utf-8")):
            if not (ROOT / mention.rstrip(".")).exists():
                missing.append(f"{file.relative_to(ROOT)}: {mention}")
    assert not missing, missing


def test_design_section_references_exist() -> None:
    """``docs/design.md §N.M`` anywhere in the repository names a numbered section of docs/design.md."""
    sections = _design_sections()
    assert {"1", "2", "2.1", "3", "4", "5", "6", "7"} <= sections
    files = [*MARKDOWN, *_text_files([ROOT / "src", ROOT / "workflow", ROOT / "profiles", ROOT / "tests",
                                      ROOT / "benchmarks", ROOT / "Snakefile", ROOT / "Makefile"])]
    unknown = [f"{file.relative_to(ROOT)}: §{number}" for file in files
               for number in SECTION_REF.findall(file.read_text(encoding="utf-8", errors="replace"))
               if number not in sections]
    assert not unknown, f"sections not in docs/design.md: {unknown}"


def test_nothing_points_outside_the_repository() -> None:
    offending = [f"{file.relative_to(ROOT)}: {needle}" for file in _text_files(USER_FACING)
                 for needle in FORBIDDEN if needle in file.read_text(encoding="utf-8", errors="replace")]
    assert not offending, offending


def test_papers_page_names_all_five_papers() -> None:
    papers = (ROOT / "docs" / "papers.md").read_text(encoding="utf-8")
    for number in ("000", "001", "002", "003", "004"):
        assert re.search(rf"^\| {number} \|", papers, re.MULTILINE), number
