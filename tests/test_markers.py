"""The markers of heavy tests keep their promise (docs/testing.md): each test marked ``slow`` says why in the first
sentence of its docstring, and every marker a test file uses is registered in pyproject.toml."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEST_FILES = sorted((ROOT / "tests").rglob("test_*.py"))


def marked(node: ast.FunctionDef, marker: str) -> bool:
    return any(ast.unparse(decorator) == f"pytest.mark.{marker}" for decorator in node.decorator_list)


def test_every_slow_test_says_why() -> None:
    missing = []
    for path in TEST_FILES:
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef) and marked(node, "slow"):
                if not (ast.get_docstring(node) or "").startswith("Slow (marker ``slow``): "):
                    missing.append(f"{path.relative_to(ROOT)}::{node.name}")
    assert not missing, f"slow tests whose docstring does not start with 'Slow (marker ``slow``): why': {missing}"


def test_every_marker_used_is_registered() -> None:
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    registered = {line.split(":", 1)[0] for line in options["markers"]}
    builtin = {"parametrize", "skip", "skipif", "xfail", "usefixtures", "filterwarnings"}
    used = {name for path in [*TEST_FILES, ROOT / "tests/conftest.py"]
            for name in re.findall(r"pytest\.mark\.(\w+)", path.read_text(encoding="utf-8"))}
    assert used - builtin <= registered, sorted(used - builtin - registered)
    assert {"slow", "tiny_build", "cluster", "faults"} <= registered
