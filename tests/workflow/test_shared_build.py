"""The helpers that keep the shared tiny build read-only to tests (tests/workflow/conftest.py), on a small stand-in
folder: a copy keeps every file's size and time, and the session-end fingerprint sees each kind of change."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from tests.workflow.conftest import WATCHED, build_state, copy_of_build, params_overlay


def stand_in_build(directory: Path) -> Path:
    """A folder shaped like a build: params, a result, a Snakemake record and log, code, a link, old times."""
    (directory / "results").mkdir(parents=True)
    (directory / ".snakemake/metadata").mkdir(parents=True)
    (directory / ".snakemake/log").mkdir(parents=True)
    (directory / "params.yaml").write_text("meta:\n  seed: 0\n")
    (directory / "results/table4.csv").write_text("metric,a\nauc,0.5\n")
    (directory / ".snakemake/metadata/cmVzdWx0cw==").write_text("{}")
    (directory / ".snakemake/log/run.log").write_text("log")
    (directory / "workflow").mkdir()
    (directory / "workflow/step.py").write_text("pass")
    (directory / "results/latest.csv").symlink_to("table4.csv")
    for number, path in enumerate(sorted(p for p in directory.rglob("*") if p.is_file() and not p.is_symlink())):
        os.utime(path, ns=(1_000_000_000 * (number + 1), 1_000_000_000 * (number + 1)))
    return directory


def test_a_copy_keeps_sizes_times_and_links(tmp_path: Path) -> None:
    build = stand_in_build(tmp_path / "build")
    copy = copy_of_build(build, tmp_path / "copy")
    assert build_state(copy) == build_state(build)
    assert sorted(build_state(build)) == [".snakemake/metadata/cmVzdWx0cw==", "params.yaml", "results/table4.csv"]
    assert (copy / "results/latest.csv").is_symlink() and os.readlink(copy / "results/latest.csv") == "table4.csv"


def test_the_fingerprint_sees_edits_touches_additions_and_removals(tmp_path: Path) -> None:
    build = stand_in_build(tmp_path / "build")
    before = build_state(build)
    (build / "results/table4.csv").touch()
    (build / "results/extra.csv").write_text("x")
    (build / ".snakemake/metadata/cmVzdWx0cw==").unlink()
    (build / ".snakemake/log/run.log").write_text("a longer log")  # Snakemake's own logs are not watched,
    (build / "workflow/step.py").touch()  # nor the workflow's code (tests that edit it work on copies too)
    after = build_state(build)
    changed = sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))
    assert changed == [".snakemake/metadata/cmVzdWx0cw==", "results/extra.csv", "results/table4.csv"]
    assert "results/" in WATCHED and not any(name.startswith(".snakemake/log") for name in WATCHED)


def test_a_params_overlay_is_written_outside_the_build(tmp_path: Path) -> None:
    build = stand_in_build(tmp_path / "build")
    before = build_state(build)
    arguments = params_overlay(tmp_path, {"meta": {"seed": 1}})
    assert arguments[0] == "--configfile" and not Path(arguments[1]).is_relative_to(build)
    assert yaml.safe_load(Path(arguments[1]).read_text()) == {"meta": {"seed": 1}}
    assert build_state(build) == before
