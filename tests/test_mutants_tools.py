"""tools/mutants.py and tools/mutants_report.py: the module map points at real files, survivors are read right."""

from __future__ import annotations

import importlib.util
import os
import subprocess
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


ANNOTATED_SOURCE = '''from __future__ import annotations

LIMIT: int | None = 3


def f(a: int | None, /, b: "list[int]" = [1 | 2], *rest: float, c: dict[str, int] = 0, **kw: bytes) -> tuple[int]:
    total: float | int = a - 1
    return total


class Options:
    level: float | None = None

    def g(self, α: int | None) -> None:
        pass
'''


def test_annotation_spans_cover_arguments_returns_and_function_level_annotations_only() -> None:
    mutants = load_tool("mutants")
    lines = ANNOTATED_SOURCE.splitlines()

    def text(start, end):
        assert start[0] == end[0]  # every annotation above fits on its line
        return lines[start[0] - 1][start[1]:end[1]]

    spans = mutants.annotation_spans(ANNOTATED_SOURCE)
    assert [text(*span) for span in spans] == [
        "int | None",  # LIMIT (module level)
        "int | None", '"list[int]"', "float", "dict[str, int]", "bytes", "tuple[int]",  # f's arguments, return
        "float | int",  # total (function body)
        "int | None", "None",  # g's α (columns counted in characters, not UTF-8 bytes) and return
    ]  # and not Options.level: a class body's annotations are what typing.get_type_hints reads
    bar_of_limit = (3, 11), (3, 12)
    assert mutants.inside_annotation(*bar_of_limit, spans)
    default_bar = lines[5].index("1 | 2") + 2
    assert not mutants.inside_annotation((6, default_bar), (6, default_bar + 1), spans)  # a default is evaluated
    minus = lines[6].index("-")
    assert not mutants.inside_annotation((7, minus), (7, minus + 1), spans)
    class_bar = lines[11].index("|")
    assert not mutants.inside_annotation((12, class_bar), (12, class_bar + 1), spans)


def test_only_a_module_with_the_future_import_has_unevaluated_annotations() -> None:
    mutants = load_tool("mutants")
    assert mutants.has_future_annotations(ANNOTATED_SOURCE)
    inside_a_function = "import os\n\n\ndef f(a: int) -> None:\n    from __future__ import annotations\n"
    assert not mutants.has_future_annotations(inside_a_function)
    assert not mutants.has_future_annotations("from __future__ import division\n")
    assert mutants.has_future_annotations('"""Doc."""\n\nfrom __future__ import annotations, division\n')


def test_the_mutant_timeout_is_six_clean_runs_and_never_under_five_minutes() -> None:
    mutants = load_tool("mutants")
    assert mutants.mutant_timeout(10.0) == 300.0
    assert mutants.mutant_timeout(100.0) == 600.0


def test_modules_run_smallest_file_first() -> None:
    mutants = load_tool("mutants")
    order = mutants.smallest_first(mutants.MODULE_TESTS)
    sizes = [(ROOT / module).stat().st_size for module in order]
    assert sorted(order) == sorted(mutants.MODULE_TESTS) and sizes == sorted(sizes)


def test_annotation_mutants_are_recorded_skipped_and_reported_apart_from_the_killed(tmp_path: Path) -> None:
    pytest.importorskip("cosmic_ray", reason="the dev extra's cosmic-ray is not installed")
    from cosmic_ray.commands import init
    from cosmic_ray.work_db import WorkDB, use_db

    mutants, report = load_tool("mutants"), load_tool("mutants_report")
    source = "from __future__ import annotations\n\n\ndef f(a: int | None) -> int | None:\n    return a | 1\n"
    module = tmp_path / "annotated.py"
    module.write_text(source)
    session = tmp_path / "annotated.sqlite"
    with use_db(str(session)) as database:
        init([module], database, {})
        lines = {item.job_id: source.splitlines()[item.mutations[0].start_pos[0] - 1] for item in database.work_items}
    skipped = mutants.skip_annotation_mutants(session, source)
    with use_db(str(session), WorkDB.Mode.open) as database:
        skipped_lines = [lines[item.job_id] for item, _ in database.completed_work_items]
        pending_lines = [lines[item.job_id] for item in database.pending_work_items]
    assert skipped == len(skipped_lines) > 0
    assert set(skipped_lines) == {"def f(a: int | None) -> int | None:"}
    assert set(pending_lines) == {"    return a | 1"}  # the evaluated `|` is still to run
    tally = report.tally(session, set())
    assert (tally.skipped, tally.killed, tally.pending) == (skipped, 0, len(pending_lines))
    assert "| annotation (skipped) |" in report.markdown([tally])
    assert mutants.skip_annotation_mutants(session, source.replace("from __future__ import annotations\n", "")) == 0


def test_an_equivalent_row_that_matches_no_survivor_is_reported_stale(tmp_path: Path) -> None:
    """A survivor matched by a row counts as equivalent; a row of the same module that matches nothing (its mutant
    is now killed, or the line changed) is listed as stale; rows of modules without a session are not."""
    pytest.importorskip("cosmic_ray", reason="the dev extra's cosmic-ray is not installed")
    from cosmic_ray.commands import init
    from cosmic_ray.work_db import use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkResult

    report = load_tool("mutants_report")
    module = tmp_path / "small.py"
    module.write_text("def f(a):\n    return a | 1\n")
    session = tmp_path / "small.sqlite"
    with use_db(str(session)) as database:
        init([module], database, {})
        item = next(item for item in database.work_items if item.mutations[0].operator_name.endswith("BitOr_Add"))
        diff = "--- a\n+++ b\n@@ -2 +2 @@\n-    return a | 1\n+    return a + 1\n"
        database.set_result(item.job_id, WorkResult(WorkerOutcome.NORMAL, "", TestOutcome.SURVIVED, diff))
    operator = item.mutations[0].operator_name
    equivalents = {("small", operator, "return a | 1"), ("small", "core/NumberReplacer", "gone = 2"),
                   ("other", "core/AddNot", "if x:")}
    tally = report.tally(session, equivalents)
    assert (tally.equivalent, tally.survivors) == (1, [])
    stale = report.stale_rows([tally], equivalents)
    assert stale == [("small", "core/NumberReplacer", "gone = 2")]
    assert "- small | core/NumberReplacer | `gone = 2`" in report.markdown([tally], stale)


def _in_new_session(code: str, *, nice: int, tmp_path: Path) -> subprocess.CompletedProcess:
    """``code`` in a fresh Python at ``nice``, in its own session (as Cosmic Ray starts a test run), so that an
    autogroup it renices is never this test run's own."""
    return subprocess.run(["nice", "-n", str(nice), sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, start_new_session=True, timeout=120)


def test_niced_pytest_gives_its_session_the_nice_value_it_inherited(tmp_path: Path) -> None:
    """tools/niced_pytest.py: at nice 7 it writes 7 to the autogroup file it is given; at nice 0 it writes nothing
    (the default scheduling stays)."""
    written, untouched = tmp_path / "autogroup", tmp_path / "untouched"
    untouched.write_text("before")
    load = (f"import sys; sys.path.insert(0, {str(ROOT / 'tools')!r}); import niced_pytest as n; "
            "print(n.share_nice_with_session(sys.argv[-1]))")
    at_seven = _in_new_session(load.replace("sys.argv[-1]", repr(str(written))), nice=7, tmp_path=tmp_path)
    at_zero = _in_new_session(load.replace("sys.argv[-1]", repr(str(untouched))), nice=0, tmp_path=tmp_path)
    assert (at_seven.stdout.strip(), written.read_text()) == ("True", "7")
    assert (at_zero.stdout.strip(), untouched.read_text()) == ("False", "before")
    missing = _in_new_session(load.replace("sys.argv[-1]", repr(str(tmp_path / "no" / "such"))), nice=3,
                              tmp_path=tmp_path)
    assert missing.stdout.strip() == "False"


def test_niced_pytest_runs_pytest_in_a_session_at_its_nice_value(tmp_path: Path) -> None:
    """The whole wrapper, as mutants.test_command runs it: pytest runs the given file and passes its exit status
    through; where the kernel has autogroups, the session's autogroup reads "nice 5" inside the test."""
    (tmp_path / "test_probe.py").write_text(
        "import os\n"
        "def test_nice():\n"
        "    assert os.nice(0) == 5\n"
        "    if os.path.exists('/proc/self/autogroup'):\n"
        "        assert open('/proc/self/autogroup').read().split()[-1] == '5'\n"
        "def test_fails_on_request():\n"
        "    assert not os.environ.get('PROBE_FAIL')\n")
    command = [sys.executable, str(ROOT / "tools" / "niced_pytest.py"), "-q", "-p", "no:randomly",
               "-p", "no:cacheprovider", "test_probe.py"]
    passing = subprocess.run(["nice", "-n", "5", *command], cwd=tmp_path, capture_output=True, text=True,
                             start_new_session=True, timeout=300)
    failing = subprocess.run(["nice", "-n", "5", *command], cwd=tmp_path, capture_output=True, text=True,
                             start_new_session=True, timeout=300, env={**os.environ, "PROBE_FAIL": "1"})
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "2 passed" in passing.stdout
    assert failing.returncode == 1 and "1 failed, 1 passed" in failing.stdout


def test_mutants_test_command_goes_through_the_wrapper() -> None:
    mutants = load_tool("mutants")
    command = mutants.test_command(("tests/a.py", "tests/b.py"))
    assert command[:2] == [sys.executable, str(ROOT / "tools" / "niced_pytest.py")]
    assert command[-2:] == ["tests/a.py", "tests/b.py"] and "-x" in command
