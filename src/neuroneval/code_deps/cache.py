"""The step versions of a library tree, kept on disk between Snakemake invocations (:class:`StepVersionCache`).

Every Snakemake invocation parses the Snakefile, which computes :class:`~neuroneval.code_deps.workflow.StepVersions`
for each rule: the closure of every step over the whole library's syntax trees, seconds of CPU on each
``snakemake -n``. The versions are a function of the library's Python files, the entry script and the Python
version (:func:`ast.dump` may change between versions) alone, so they are stored under :func:`tree_key`, a digest of
exactly these, and read back while none of them changes. Any edit to any file of the library (even a comment) or of
the entry script gives another key, so a stored version is never served for code it was not computed from; the
next parse computes the versions afresh and stores them under the new key.

The store is one JSON file per key, ``<cache dir>/step_versions/<key>.json`` (``{"steps": {step: module},
"versions": {step: version}}``), in the user's cache directory (:func:`default_cache_dir`); the
:data:`KEEP` most recently written are kept. A missing, unreadable or malformed file is a miss, and a failed write
is ignored: the cache can only save time, never change a version.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

from neuroneval.code_deps.index import PACKAGE

#: Key files kept in the store (each a few kB): the newest, by modification time.
KEEP = 64
_FOLDER = "step_versions"


def default_cache_dir() -> Path | None:
    """``$XDG_CACHE_HOME/neuroneval``, or ``~/.cache/neuroneval`` where it is unset (the XDG base directory
    convention); None (no cache) where neither is set and the user has no home directory."""
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        try:
            base = str(Path.home() / ".cache")
        except RuntimeError:
            return None
    return Path(base) / PACKAGE


def library_files(root: Path) -> list[Path]:
    """Every Python file of the package under ``root`` (``root/neuroneval/**/*.py``, no ``__pycache__``), sorted:
    all that :class:`~neuroneval.code_deps.index.CodeIndex` can read of the library."""
    return sorted(path for path in (Path(root) / PACKAGE).rglob("*.py") if "__pycache__" not in path.parts)


def tree_key(root: Path, script: Path) -> str:
    """SHA-256 of the Python version, the entry script's name and bytes, and the path and bytes of each library
    file under ``root``: what the step versions computed from them depend on. Each part is length-prefixed, so
    no two different trees give the same byte stream."""
    digest = hashlib.sha256()

    def add(data: bytes) -> None:
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)

    add(sys.version.encode())
    script = Path(script)
    add(script.name.encode())
    add(script.read_bytes())
    root = Path(root)
    for path in library_files(root):
        add(path.relative_to(root).as_posix().encode())
        add(path.read_bytes())
    return digest.hexdigest()


class StepVersionCache:
    """The stored steps (step function → its module) and versions (step function → ``module:function@version``)
    of one library tree, ``path`` = ``<folder>/step_versions/<key>.json``; empty when nothing was stored."""

    def __init__(self, folder: Path, key: str) -> None:
        self.path = Path(folder) / _FOLDER / f"{key}.json"
        self.steps: dict[str, str] | None = None
        self.versions: dict[str, str] = {}
        try:
            stored = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return
        if _is_str_map(stored.get("steps") if isinstance(stored, dict) else None) and _is_str_map(
                stored.get("versions")):
            self.steps, self.versions = stored["steps"], stored["versions"]

    def store(self, steps: dict[str, str], versions: dict[str, str]) -> None:
        """Write ``steps`` and ``versions`` (atomically), then drop all but the :data:`KEEP` newest key files;
        a failed write (read-only or full disk, a concurrent writer) leaves the cache as it was."""
        from neuroneval.io import write_json

        try:
            write_json(self.path, {"steps": steps, "versions": versions})
            stored = sorted(self.path.parent.glob("*.json"), key=lambda path: path.stat().st_mtime, reverse=True)
            for old in stored[KEEP:]:
                old.unlink(missing_ok=True)
        except OSError:
            return
        self.steps, self.versions = dict(steps), dict(versions)


def _is_str_map(value: object) -> bool:
    return isinstance(value, dict) and all(isinstance(key, str) and isinstance(item, str)
                                           for key, item in value.items())
