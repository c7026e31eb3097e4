"""DVC spine: `dvc repro` builds, a second repro is a no-op, push/pull round-trips, Snakemake then has nothing to do."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from tests.workflow.conftest import run_tool

TRACKED = ("data", "results")



def content_hashes(workspace: Path) -> dict[str, str]:
    hashes = {}
    for top in TRACKED:
        for path in sorted((workspace / top).rglob("*")):
            if path.is_file() and path.name != ".gitignore":
                hashes[str(path.relative_to(workspace))] = hashlib.md5(path.read_bytes()).hexdigest()
    return hashes


def test_repro_push_pull_round_trip(built_workspace: Path, tmp_path: Path) -> None:
    """On a copy of the tiny build (timestamps and Snakemake metadata kept), ``dvc repro`` runs every stage's
    Snakemake target — already current and, as outputs persist, left in place, so nothing is rebuilt — and
    records and caches every declared output; a missing or undeclared output fails here (the pull must restore
    every file). The build from scratch is the shared tiny run."""
    workspace = tmp_path / "repo"
    shutil.copytree(built_workspace, workspace, symlinks=True)
    remote = tmp_path / "remote"
    run_tool(["git", "init", "-q"], workspace)
    run_tool(["dvc", "init", "-q"], workspace)
    run_tool(["dvc", "config", "core.analytics", "false"], workspace)
    run_tool(["dvc", "remote", "add", "-d", "test", str(remote)], workspace)

    first = run_tool(["dvc", "repro"], workspace)
    log = first.stdout + first.stderr
    # outputs persist, so each stage's Snakemake finds the copied build current and rebuilds nothing
    assert log.count("Running stage") == 9 and log.count("Nothing to be done") == 9, log
    second = run_tool(["dvc", "repro"], workspace)
    assert "Running stage" not in second.stdout, second.stdout
    status = run_tool(["dvc", "status"], workspace)
    assert "up to date" in status.stdout.lower(), status.stdout

    run_tool(["dvc", "push"], workspace)
    before = content_hashes(workspace)
    assert any(name.startswith("data/models/") for name in before)

    for name in (*TRACKED, ".snakemake"):
        shutil.rmtree(workspace / name)
    shutil.rmtree(workspace / ".dvc" / "cache")
    run_tool(["dvc", "pull"], workspace)
    assert content_hashes(workspace) == before
    # dvc restores files in no DAG order; `snakemake --touch` (what `make pull` runs) orders the timestamps
    # without running anything, and must not change a byte.
    run_tool(["snakemake", "--touch", "--cores", "1", "results/table4.csv"], workspace)
    assert content_hashes(workspace) == before

    dry = run_tool(["snakemake", "-n", "results/table4.csv"], workspace)
    assert "Nothing to be done" in dry.stdout + dry.stderr, dry.stdout + dry.stderr
