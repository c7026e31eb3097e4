"""Size limits of the source (issue 35): glue stays glue, and no module grows past what one reader can hold.

* ``neuroneval.pipeline`` (the step functions and their runner) holds at most :data:`PIPELINE_LINES` lines in all;
* no ``pipeline/*_steps.py`` has more than :data:`STEPS_LINES` lines (a step reads, calls one library function,
  writes);
* no module of ``src/`` has more than :data:`MODULE_LINES` lines.
"""

from __future__ import annotations

from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "src" / "neuroneval"
PIPELINE_LINES = 3000
STEPS_LINES = 300
MODULE_LINES = 600


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines())


def _modules(folder: Path) -> list[Path]:
    return sorted(path for path in folder.rglob("*.py") if "__pycache__" not in path.parts)


def test_no_module_of_src_exceeds_the_module_limit() -> None:
    long = {str(path.relative_to(SOURCE)): _lines(path) for path in _modules(SOURCE) if _lines(path) > MODULE_LINES}
    assert not long, f"modules over {MODULE_LINES} lines (split them by topic): {long}"


def test_no_steps_module_exceeds_the_steps_limit() -> None:
    long = {path.name: _lines(path) for path in sorted((SOURCE / "pipeline").glob("*_steps.py"))
            if _lines(path) > STEPS_LINES}
    assert not long, f"step modules over {STEPS_LINES} lines (move the science into the library): {long}"


def test_the_pipeline_package_stays_within_its_limit() -> None:
    sizes = {path.name: _lines(path) for path in _modules(SOURCE / "pipeline")}
    total = sum(sizes.values())
    largest = sorted(sizes.items(), key=lambda item: -item[1])[:5]
    assert total <= PIPELINE_LINES, (f"neuroneval.pipeline has {total} lines, over {PIPELINE_LINES}: move non-glue "
                                     f"modules into the library (largest: {largest})")
