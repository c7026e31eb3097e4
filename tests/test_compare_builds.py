"""tools/compare_builds.py: the byte-for-byte comparison of two builds that refactorings are checked with."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("compare_builds", ROOT / "tools" / "compare_builds.py")
tool = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = tool  # dataclasses look their module up while the class is built
spec.loader.exec_module(tool)


def _write(root: Path, files: dict[str, bytes]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)


def test_compare_names_each_outcome_and_honours_ignores(tmp_path: Path) -> None:
    before, after = tmp_path / "before", tmp_path / "after"
    _write(before, {"results/a.csv": b"1\n", "results/b.csv": b"2\n", "data/old.parquet": b"x",
                    "results/fig.png": b"p1", "logs/run.log": b"t1"})
    _write(after, {"results/a.csv": b"1\n", "results/b.csv": b"3\n", "data/new.parquet": b"y",
                   "results/fig.png": b"p2", "logs/run.log": b"t2"})
    result = tool.compare_builds(before, after)
    assert result.identical == ["results/a.csv"]
    assert result.different == ["results/b.csv", "results/fig.png"]
    assert (result.only_before, result.only_after) == (["data/old.parquet"], ["data/new.parquet"])
    assert not result.same and result.summary() == "identical 1, different 2, only in before 1, only in after 1"
    ignored = tool.compare_builds(before, after, ignore=["results/*.png", "data/*", "results/b.csv"])
    assert ignored.same and ignored.identical == ["results/a.csv"]
    assert tool.file_hashes(before, ["results"])["results/a.csv"] == hashlib.sha256(b"1\n").hexdigest()


def test_command_line_exit_status(tmp_path: Path, capsys) -> None:
    _write(tmp_path / "one", {"results/a.csv": b"1"})
    _write(tmp_path / "two", {"results/a.csv": b"1"})
    assert tool.main([str(tmp_path / "one"), str(tmp_path / "two")]) == 0
    _write(tmp_path / "two", {"results/a.csv": b"2"})
    assert tool.main([str(tmp_path / "one"), str(tmp_path / "two")]) == 1
    assert "different: results/a.csv" in capsys.readouterr().out
