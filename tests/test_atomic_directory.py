"""``io.atomic_directory``: the target appears whole or not at all, and a failed rewrite keeps the old version."""

from pathlib import Path

import pytest

from neuroneval import io


class BlockFailed(RuntimeError):
    """Raised inside the block to stand for a writer that dies half-way."""


def leftovers(folder: Path) -> list[str]:
    return sorted(entry.name for entry in folder.iterdir())


def test_success_moves_the_filled_folder_onto_the_target_and_leaves_no_staging(tmp_path: Path) -> None:
    target = tmp_path / "world"
    with io.atomic_directory(target) as staging:
        assert staging.parent == tmp_path and staging != target and not target.exists()
        (staging / "split.txt").write_text("train")
    assert (target / "split.txt").read_text() == "train"
    assert leftovers(tmp_path) == ["world"]


def test_exception_inside_leaves_neither_the_target_nor_a_staging_folder(tmp_path: Path) -> None:
    target = tmp_path / "world"
    with pytest.raises(BlockFailed), io.atomic_directory(target) as staging:
        (staging / "half.txt").write_text("half")
        raise BlockFailed("writer died")
    assert leftovers(tmp_path) == []


def test_existing_target_survives_a_failed_rewrite_unchanged(tmp_path: Path) -> None:
    target = tmp_path / "world"
    with io.atomic_directory(target) as staging:
        (staging / "old.txt").write_text("old")
    with pytest.raises(BlockFailed), io.atomic_directory(target) as staging:
        (staging / "new.txt").write_text("new")
        raise BlockFailed("writer died")
    assert leftovers(target) == ["old.txt"] and (target / "old.txt").read_text() == "old"
    assert leftovers(tmp_path) == ["world"]


def test_successful_rewrite_replaces_the_old_version_entirely(tmp_path: Path) -> None:
    target = tmp_path / "world"
    with io.atomic_directory(target) as staging:
        (staging / "old.txt").write_text("old")
    with io.atomic_directory(target) as staging:
        assert leftovers(staging) == []
        (staging / "new.txt").write_text("new")
    assert leftovers(target) == ["new.txt"]
    assert leftovers(tmp_path) == ["world"]


def test_a_stale_staging_folder_from_a_killed_run_is_not_carried_into_the_target(tmp_path: Path) -> None:
    target = tmp_path / "world"
    with io.atomic_directory(target) as staging:
        pass
    stale = staging
    stale.mkdir()
    (stale / "stale.txt").write_text("from a killed run")
    with io.atomic_directory(target) as staging:
        (staging / "fresh.txt").write_text("fresh")
    assert leftovers(target) == ["fresh.txt"]
    assert leftovers(tmp_path) == ["world"]
