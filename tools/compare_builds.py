"""Compare two builds of the workflow file by file: which outputs are byte-identical, which differ, which only one has.

Usage::

    python tools/compare_builds.py BEFORE AFTER [--dirs data results] [--ignore GLOB ...]

BEFORE and AFTER are workflow directories (each with ``data/`` and ``results/``). Every file under the given
directories is hashed (SHA-256); the report lists the differing and one-sided files, then a one-line summary
``identical N, different M, only in BEFORE a, only in AFTER b``. Exit status 0 when nothing differs outside the
ignored patterns, 1 otherwise. A refactoring that must not change results (issue 18) is checked by building the
tiny workflow at both commits and running this on the two directories. Standard library only.
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Comparison:
    """Relative paths (under the compared directories) by outcome."""

    identical: list[str] = field(default_factory=list)
    different: list[str] = field(default_factory=list)
    only_before: list[str] = field(default_factory=list)
    only_after: list[str] = field(default_factory=list)

    @property
    def same(self) -> bool:
        return not (self.different or self.only_before or self.only_after)

    def summary(self) -> str:
        return (f"identical {len(self.identical)}, different {len(self.different)}, only in before "
                f"{len(self.only_before)}, only in after {len(self.only_after)}")


def file_hashes(root: Path, directories: Iterable[str]) -> dict[str, str]:
    """SHA-256 of every file under ``root/<directory>``, keyed by its path relative to ``root``."""
    hashes = {}
    for directory in directories:
        for path in sorted((root / directory).rglob("*")):
            if path.is_file():
                hashes[path.relative_to(root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return hashes


def compare_builds(before: Path, after: Path, directories: Sequence[str] = ("data", "results"),
                   ignore: Sequence[str] = ()) -> Comparison:
    """Compare the files of two builds (paths matching a glob of ``ignore`` are left out)."""
    def kept(hashes: dict[str, str]) -> dict[str, str]:
        return {path: digest for path, digest in hashes.items()
                if not any(fnmatch.fnmatch(path, pattern) for pattern in ignore)}

    first, second = kept(file_hashes(before, directories)), kept(file_hashes(after, directories))
    result = Comparison()
    for path in sorted(set(first) | set(second)):
        if path not in second:
            result.only_before.append(path)
        elif path not in first:
            result.only_after.append(path)
        else:
            (result.identical if first[path] == second[path] else result.different).append(path)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--dirs", nargs="+", default=["data", "results"])
    parser.add_argument("--ignore", nargs="*", default=[], help="glob patterns of relative paths to leave out")
    arguments = parser.parse_args(argv)
    for root in (arguments.before, arguments.after):
        if not root.is_dir():
            parser.error(f"{root}: not a directory")
    result = compare_builds(arguments.before, arguments.after, arguments.dirs, arguments.ignore)
    for label, paths in (("different", result.different), ("only in before", result.only_before),
                         ("only in after", result.only_after)):
        for path in paths:
            print(f"{label}: {path}")
    print(result.summary())
    return 0 if result.same else 1


if __name__ == "__main__":
    sys.exit(main())
