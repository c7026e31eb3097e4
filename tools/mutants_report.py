"""Markdown table of the mutation sessions of tools/mutants.py: killed / survived / equivalent per module.

Mutants that tools/mutants.py skipped because they lie inside a type annotation that is never evaluated get their
own column, "annotation (skipped)": they were not run, so they count neither as killed nor in the killed share.

A survivor counts as *equivalent* when docs/mutation_testing.md's table "Equivalent mutants" lists its module,
operator and mutated source line (the one home of that list, with the reason); every other survivor is listed
under the table with its diff, to be killed by a test or argued equivalent there. A row of that list whose module
has a session here but which matches none of its survivors is listed as stale (a test now kills that mutant, or
the line changed): delete or update it, so the list claims nothing the sessions do not show.

    python tools/mutants_report.py                      # all sessions in .mutants/, to stdout
    python tools/mutants_report.py -o .mutants/report.md
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from cosmic_ray.work_db import WorkDB, use_db
from cosmic_ray.work_item import TestOutcome, WorkerOutcome

ROOT = Path(__file__).resolve().parents[1]
WORK_DIR = ROOT / ".mutants"
EQUIVALENTS_DOC = ROOT / "docs" / "mutation_testing.md"
EQUIVALENTS_HEADING = "## Equivalent mutants"
UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


@dataclass
class ModuleTally:
    """Outcomes of one module's session; ``survivors`` holds (operator, source line, diff) of non-equivalent ones."""

    module: str
    mutants: int = 0
    killed: int = 0
    timeouts: int = 0
    equivalent: int = 0
    skipped: int = 0
    pending: int = 0
    survivors: list[tuple[str, str, str]] = field(default_factory=list)
    #: The rows of the equivalents list that matched at least one of this session's survivors.
    matched: set[tuple[str, str, str]] = field(default_factory=set)

    @property
    def done(self) -> int:
        return self.mutants - self.pending

    @property
    def killed_share(self) -> float:
        """Killed (timeouts included) over decided mutants that are neither equivalent nor skipped; NaN before any
        is decided."""
        decided = self.done - self.equivalent - self.skipped
        return self.killed / decided if decided else float("nan")


def equivalent_mutants(doc: Path = EQUIVALENTS_DOC) -> set[tuple[str, str, str]]:
    """(module, operator, stripped source line) rows of the doc's "Equivalent mutants" table.

    Rows look like ``| metrics.binarize | core/NumberReplacer | `return x >= 0` | why |``; the header and
    separator rows are skipped; operator ``*`` matches every operator on that line; a ``|`` inside a cell is
    written ``\\|``, as GitHub's tables need.
    """
    rows: set[tuple[str, str, str]] = set()
    inside = False
    for line in doc.read_text().splitlines():
        if line.startswith("## "):
            inside = line.strip() == EQUIVALENTS_HEADING
            continue
        if inside and line.startswith("|"):
            cells = [cell.strip().replace("\\|", "|") for cell in UNESCAPED_PIPE.split(line.strip().strip("|"))]
            if len(cells) >= 3 and cells[2].startswith("`"):
                rows.add((cells[0], cells[1], cells[2].strip("`").strip()))
    return rows


def tally(session: Path, equivalents: set[tuple[str, str, str]]) -> ModuleTally:
    """Count one session's outcomes; a timeout and a mutant that cannot even run the tests (incompetent) count as
    killed, as Cosmic Ray counts them; a skipped mutant (never run) counts as skipped."""
    result = ModuleTally(module=session.stem)
    with use_db(str(session), WorkDB.Mode.open) as database:
        result.mutants = database.num_work_items
        completed = database.completed_work_items
    result.pending = result.mutants - len(completed)
    for item, outcome in completed:
        mutation = item.mutations[0]
        if outcome.worker_outcome == WorkerOutcome.SKIPPED:
            result.skipped += 1
        elif outcome.test_outcome == TestOutcome.KILLED and outcome.output == "timeout":
            result.killed += 1
            result.timeouts += 1
        elif outcome.test_outcome == TestOutcome.SURVIVED:
            line = original_line(outcome.diff or "")
            rows = {(result.module, mutation.operator_name, line), (result.module, "*", line)} & equivalents
            if rows:
                result.equivalent += 1
                result.matched |= rows
            else:
                result.survivors.append((mutation.operator_name, line, outcome.diff or ""))
        else:
            result.killed += 1
    return result


def original_line(diff: str) -> str:
    """The unmutated source line of a mutant: the first removed line of its diff (the scratch tree may hold
    another mutant while a run goes on, so the file is not read)."""
    removed = (line for line in diff.splitlines() if line.startswith("-") and not line.startswith("---"))
    return next(removed, "-")[1:].strip()


def stale_rows(tallies: list[ModuleTally], equivalents: set[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """Rows of the equivalents list for a module with a session here that match none of its survivors."""
    modules = {t.module for t in tallies}
    matched = set().union(*(t.matched for t in tallies))
    return sorted(row for row in equivalents if row[0] in modules and row not in matched)


def markdown(tallies: list[ModuleTally], stale: list[tuple[str, str, str]] = ()) -> str:
    """The per-module table, a total row, each non-equivalent survivor with its diff, then the stale rows of the
    equivalents list (:func:`stale_rows`)."""
    lines = ["| module | mutants | done | annotation (skipped) | killed (timeouts) | survived | equivalent "
             "| killed % |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for t in tallies:
        lines.append(f"| {t.module} | {t.mutants} | {t.done} | {t.skipped} | {t.killed} ({t.timeouts}) | "
                     f"{len(t.survivors)} | {t.equivalent} | {100 * t.killed_share:.1f} |")
    total = ModuleTally(module="**total**", mutants=sum(t.mutants for t in tallies),
                        killed=sum(t.killed for t in tallies), timeouts=sum(t.timeouts for t in tallies),
                        equivalent=sum(t.equivalent for t in tallies), skipped=sum(t.skipped for t in tallies),
                        pending=sum(t.pending for t in tallies),
                        survivors=[s for t in tallies for s in t.survivors])
    lines.append(f"| {total.module} | {total.mutants} | {total.done} | {total.skipped} | {total.killed} "
                 f"({total.timeouts}) | {len(total.survivors)} | {total.equivalent} | {100 * total.killed_share:.1f} |")
    for t in tallies:
        for operator, line, diff in t.survivors:
            lines += ["", f"### Survivor in {t.module}: {operator}", "", f"`{line}`", "", "```diff", diff.strip(),
                      "```"]
    if stale:
        lines += ["", "### Stale rows of the equivalent mutants (no survivor matches them: delete or update)", ""]
        lines += [f"- {module} | {operator} | `{line}`" for module, operator, line in stale]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sessions", nargs="*", type=Path, help="session files (default: .mutants/*.sqlite)")
    parser.add_argument("-o", "--output", type=Path, help="write the markdown here instead of stdout")
    args = parser.parse_args(argv)
    sessions = args.sessions or sorted(WORK_DIR.glob("*.sqlite"))
    if not sessions:
        parser.error(f"no session in {WORK_DIR}; run tools/mutants.py (make mutants) first")
    equivalents = equivalent_mutants()
    tallies = [tally(session, equivalents) for session in sessions]
    text = markdown(tallies, stale_rows(tallies, equivalents))
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
