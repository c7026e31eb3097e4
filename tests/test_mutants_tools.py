"""tools/mutants.py and tools/mutants_report.py: the module map points at real files, survivors are read right."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def load_tool(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_every_mapped_module_and_test_file_exists() -> None:
    mutants = load_tool("mutants")
    missing = [path for module, tests in mutants.MODULE_TESTS.items() for path in (module, *tests)
               if not (ROOT / path).is_file()]
    assert not missing
    assert mutants.module_slug("src/neuroneval/metrics/binarize.py") == "metrics.binarize"


def test_the_original_line_is_the_first_removed_line_of_the_diff() -> None:
    pytest.importorskip("cosmic_ray", reason="the dev extra's cosmic-ray is not installed")
    report = load_tool("mutants_report")
    diff = "--- mutation diff ---\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-    if a == b:\n+    if a <= b:\n"
    assert report.original_line(diff) == "if a == b:"


def test_the_equivalent_mutants_table_of_the_docs_is_read(tmp_path: Path) -> None:
    pytest.importorskip("cosmic_ray", reason="the dev extra's cosmic-ray is not installed")
    report = load_tool("mutants_report")
    doc = tmp_path / "doc.md"
    doc.write_text("## Other\n| m | op | `x` | no |\n## Equivalent mutants\n\n| module | operator | line | why |\n"
                   "|---|---|---|---|\n| metrics.binarize | core/Op | `y = f(x, axis=-1)` | 2-D only |\n"
                   "| metrics.binarize | core/Or | `return a \\| b` | disjoint |\n## Next\n")
    assert report.equivalent_mutants(doc) == {("metrics.binarize", "core/Op", "y = f(x, axis=-1)"),
                                              ("metrics.binarize", "core/Or", "return a | b")}
    assert report.equivalent_mutants()  # docs/mutation_testing.md lists at least one
