"""Snakemake's HTML report of whatever the build holds (``make report`` → ``results/report.html``).

Every file a reader looks at is declared in its rule with ``report(path, caption=..., category=...)``; the captions
are the RST files of ``workflow/report/``. ``snakemake --report`` covers the jobs of the targets it is given and
fails on a report file of those jobs that does not exist, so the report is made for exactly the report files that
exist: :func:`reported_patterns` reads the ``report("...")`` declarations of ``workflow/rules/*.smk``,
:func:`report_targets` keeps the existing files that match one whose job's other report files exist too (a job
stopped halfway is left out and named). After ``make run`` that is Table 4; after every stage, every table,
figure and viewer page. The report is one HTML file: data, scripts and styles inline, nothing fetched.

Run ``python -m neuroneval.snakemake_report [results/report.html]`` (what ``make report`` does); a ``.zip`` path
writes Snakemake's zip form instead.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

RULES_DIR = Path("workflow") / "rules"
"""The rule files, relative to the workflow's root."""
DEFAULT_REPORT = Path("results") / "report.html"
"""Where ``make report`` writes the report."""
_RULE = re.compile(r"^rule (\w+):", re.MULTILINE)
_REPORTED = re.compile(r'report\(\s*"([^"]+)"')
_WILDCARD = re.compile(r"\{(\w+)(?:,[^}]*)?\}")


@dataclass(frozen=True)
class Targets:
    """The report files to give ``snakemake --report`` and those left out (a sibling report file is missing)."""

    present: tuple[str, ...]
    incomplete: tuple[str, ...]


def reported_patterns(root: Path) -> dict[str, tuple[str, ...]]:
    """Each rule's report file patterns (``report("<pattern>", ...)`` in its output block), by rule name."""
    patterns: dict[str, tuple[str, ...]] = {}
    for path in sorted((root / RULES_DIR).glob("*.smk")):
        text = path.read_text()
        starts = [(match.start(), match.group(1)) for match in _RULE.finditer(text)]
        ends = [start for start, _ in starts[1:]] + [len(text)] * bool(starts)
        for (start, rule), end in zip(starts, ends, strict=True):
            found = tuple(_REPORTED.findall(text[start:end]))
            if found:
                patterns[rule] = found
    return patterns


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    parts, seen, last = [], set(), 0
    for match in _WILDCARD.finditer(pattern):
        parts.append(re.escape(pattern[last:match.start()]))
        name = match.group(1)
        parts.append(f"(?P={name})" if name in seen else f"(?P<{name}>[^/]+)")
        seen.add(name)
        last = match.end()
    parts.append(re.escape(pattern[last:]))
    return re.compile("".join(parts))


def _fill(pattern: str, wildcards: Mapping[str, str]) -> str | None:
    names = {match.group(1) for match in _WILDCARD.finditer(pattern)}
    if not names <= set(wildcards):
        return None
    return _WILDCARD.sub(lambda match: wildcards[match.group(1)], pattern)


def report_targets(root: Path, patterns: Mapping[str, Sequence[str]] | None = None) -> Targets:
    """The existing report files under ``root`` (relative paths, sorted), split by whether every report file of
    the same job exists (``present``) or not (``incomplete``: ``snakemake --report`` would fail on them)."""
    patterns = reported_patterns(root) if patterns is None else patterns
    existing = sorted(str(path.relative_to(root)) for top in {pattern.split("/")[0]
                                                              for rule in patterns.values() for pattern in rule}
                      if (root / top).is_dir() for path in (root / top).rglob("*") if path.is_file())
    present, incomplete = set(), set()
    for rule_patterns in patterns.values():
        for pattern in rule_patterns:
            regex = _pattern_regex(pattern)
            for name in existing:
                match = regex.fullmatch(name)
                if match is None:
                    continue
                siblings = [_fill(other, match.groupdict()) for other in rule_patterns]
                complete = all(sibling is None or (root / sibling).is_file() for sibling in siblings)
                (present if complete else incomplete).add(name)
    return Targets(tuple(sorted(present)), tuple(sorted(incomplete - present)))


def report_command(report: Path, targets: Sequence[str]) -> list[str]:
    """The Snakemake command that writes ``report`` (``.html``, or ``.zip``) for ``targets``."""
    return ["snakemake", "--report", str(report), *targets]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m neuroneval.snakemake_report",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("report", nargs="?", type=Path, default=DEFAULT_REPORT,
                        help=f"the report to write, .html or .zip (default: {DEFAULT_REPORT})")
    arguments = parser.parse_args(argv)
    targets = report_targets(Path.cwd())
    if targets.incomplete:
        print(f"left out (another output of their job is missing): {', '.join(targets.incomplete)}",
              file=sys.stderr)
    if not targets.present:
        sys.exit("nothing to report: no result declared with report() exists yet (run `make run` first)")
    print(f"reporting {len(targets.present)} files", file=sys.stderr)
    sys.exit(subprocess.run(report_command(arguments.report, targets.present)).returncode)


if __name__ == "__main__":
    main()
