"""A write killed half-way (``kill -9`` inside :func:`neuroneval.io.atomic_path` or ``atomic_directory``) leaves a
temporary sibling that DVC ignores (``.dvcignore``) and that the next write of the same target removes."""

from __future__ import annotations

import fnmatch
import os
import subprocess
import sys
from pathlib import Path

from neuroneval import io
from tests.workflow.conftest import ROOT, run_tool

#: Writes ``<target>`` once completely, then starts writing it again and is killed (SIGKILL) inside the block.
KILLED_WRITE = """
import os, signal, sys
from neuroneval import io
target, kind = sys.argv[1], sys.argv[2]
if kind == "file":
    with io.atomic_path(target) as tmp:
        tmp.write_text("half")
        os.kill(os.getpid(), signal.SIGKILL)
with io.atomic_directory(target) as staging:
    (staging / "part.json").write_text("half")
    os.kill(os.getpid(), signal.SIGKILL)
"""


def killed_write(target: Path, kind: str) -> None:
    result = subprocess.run([sys.executable, "-c", KILLED_WRITE, str(target), kind], capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert result.returncode == -9, result.stderr


def leftovers(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if path.name.startswith("."))


def test_temporary_names_match_the_globs_dvc_ignores(tmp_path: Path) -> None:
    killed_write(tmp_path / "card.json", "file")
    killed_write(tmp_path / "lm_small", "directory")
    names = leftovers(tmp_path)
    assert len(names) == 2, names
    for name in names:
        assert sum(fnmatch.fnmatchcase(name, glob) for glob in io.TEMPORARY_GLOBS) == 1, name
    assert not fnmatch.fnmatchcase("card.json", io.TEMPORARY_GLOBS[0])
    dvcignore = {line.strip() for line in (ROOT / ".dvcignore").read_text().splitlines()}
    assert set(io.TEMPORARY_GLOBS) <= dvcignore


def test_the_next_write_removes_what_a_killed_write_left(tmp_path: Path) -> None:
    killed_write(tmp_path / "card.json", "file")
    killed_write(tmp_path / "lm_small", "directory")
    assert len(leftovers(tmp_path)) == 2
    io.write_json(tmp_path / "card.json", {"ok": True})
    with io.atomic_directory(tmp_path / "lm_small") as staging:
        (staging / "part.json").write_text("whole")
    assert leftovers(tmp_path) == []
    assert (tmp_path / "lm_small" / "part.json").read_text() == "whole"
    io.write_json(tmp_path / "card.json.bak", {"other": True})  # another target's temporaries are not touched
    killed_write(tmp_path / "card.json.bak", "file")
    io.write_json(tmp_path / "card.json", {"ok": False})
    assert len(leftovers(tmp_path)) == 1


def test_dvc_status_ignores_a_killed_write_in_a_tracked_folder(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "data" / "models").mkdir(parents=True)
    (repo / ".dvcignore").write_text((ROOT / ".dvcignore").read_text())
    run_tool(["git", "init", "-q"], repo)
    run_tool(["dvc", "init", "-q"], repo)
    run_tool(["dvc", "config", "core.analytics", "false"], repo)
    io.write_json(repo / "data/models/card.json", {"accuracy": 0.9})
    with io.atomic_directory(repo / "data/models/lm_small") as staging:
        (staging / "config.json").write_text("{}")
    run_tool(["dvc", "add", "-q", "data/models"], repo)
    killed_write(repo / "data/models/card.json", "file")
    killed_write(repo / "data/models/lm_small", "directory")
    assert len(leftovers(repo / "data/models")) == 2
    status = run_tool(["dvc", "status", "data/models.dvc"], repo)
    assert "up to date" in status.stdout, status.stdout
