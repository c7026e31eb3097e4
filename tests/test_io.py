"""The table contract of docs/design.md §2.1: every bad input is a clear error, nothing half-written is left."""

import os
import stat
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from neuroneval import io


def activation_frame(n: int = 6, units: int = 3, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    values = rng.normal(size=(n, units)).astype(np.float32)
    return pd.DataFrame({"input_id": np.arange(n, dtype=np.int64), **{str(k): values[:, k] for k in range(units)}})


def concept_frame(n: int = 6) -> pd.DataFrame:
    return pd.DataFrame({"input_id": np.arange(n), "dog": np.linspace(0, 1, n), "cat": np.zeros(n)})


def test_activation_round_trip_keeps_values_metadata_and_order(tmp_path: Path) -> None:
    frame = activation_frame().iloc[::-1]
    path = io.write_activation_table(tmp_path / "acts.parquet", frame, metadata={"model": "m", "layer": "fc"})
    loaded, metadata = io.read_activation_table(path)
    assert loaded["input_id"].tolist() == list(range(6))
    assert loaded["input_id"].dtype == np.int64
    assert all(loaded[column].dtype == np.float32 for column in ["0", "1", "2"])
    np.testing.assert_array_equal(io.value_matrix(loaded), activation_frame()[["0", "1", "2"]].to_numpy())
    assert metadata["model"] == "m" and metadata["layer"] == "fc" and metadata["kind"] == "activation"
    assert metadata["neuroneval_version"]


def test_directory_of_shards_reads_as_one_table(tmp_path: Path) -> None:
    frame = activation_frame(n=10)
    shard_dir = tmp_path / "acts"
    io.write_activation_table(shard_dir / "part-0.parquet", frame.iloc[:5], metadata={"model": "m"})
    io.write_activation_table(shard_dir / "part-1.parquet", frame.iloc[5:], metadata={"model": "m"})
    loaded, metadata = io.read_activation_table(shard_dir)
    assert loaded["input_id"].tolist() == list(range(10))
    assert metadata["model"] == "m"


def test_shards_with_different_schemas_are_rejected(tmp_path: Path) -> None:
    shard_dir = tmp_path / "acts"
    io.write_activation_table(shard_dir / "a.parquet", activation_frame(units=3), metadata={})
    io.write_activation_table(shard_dir / "b.parquet", activation_frame(units=2), metadata={})
    with pytest.raises(io.TableError, match=r"b\.parquet: schema differs"):
        io.read_activation_table(shard_dir)


@pytest.mark.parametrize("bad_value", [np.nan, np.inf, -np.inf])
def test_non_finite_values_name_column_and_row(tmp_path: Path, bad_value: float) -> None:
    frame = activation_frame()
    frame.loc[3, "1"] = bad_value
    target = tmp_path / "acts.parquet"
    with pytest.raises(io.TableError, match=r"acts\.parquet.*column '1'.*input_id 3"):
        io.write_activation_table(target, frame, metadata={})
    assert list(tmp_path.iterdir()) == []


def test_non_finite_values_in_a_foreign_file_are_caught_on_read(tmp_path: Path) -> None:
    frame = activation_frame()
    frame.loc[2, "0"] = np.nan
    target = tmp_path / "foreign.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), target)
    with pytest.raises(io.TableError, match=r"foreign\.parquet: column '0'.*input_id 2"):
        io.read_activation_table(target)


def test_duplicate_ids_are_named(tmp_path: Path) -> None:
    frame = activation_frame()
    frame.loc[4, "input_id"] = 1
    with pytest.raises(io.TableError, match=r"duplicate input_id 1 at rows \[1, 4\]"):
        io.write_activation_table(tmp_path / "acts.parquet", frame, metadata={})


def test_missing_id_column_and_wrong_id_dtype(tmp_path: Path) -> None:
    frame = activation_frame()
    with pytest.raises(io.TableError, match="missing column 'input_id'"):
        io.write_activation_table(tmp_path / "a.parquet", frame.drop(columns="input_id"), metadata={})
    frame["input_id"] = frame["input_id"].astype(float)
    with pytest.raises(io.TableError, match="'input_id' must be integer"):
        io.write_activation_table(tmp_path / "a.parquet", frame, metadata={})


def test_non_numeric_column_is_named(tmp_path: Path) -> None:
    frame = activation_frame()
    frame["2"] = ["x"] * len(frame)
    with pytest.raises(io.TableError, match=r"column '2' must be numeric"):
        io.write_activation_table(tmp_path / "a.parquet", frame, metadata={})


def test_empty_tables_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(io.TableError, match="no rows"):
        io.write_activation_table(tmp_path / "a.parquet", activation_frame().iloc[:0], metadata={})
    with pytest.raises(io.TableError, match="no activation columns"):
        io.write_activation_table(tmp_path / "a.parquet", activation_frame()[["input_id"]], metadata={})


def test_concept_values_must_lie_in_unit_interval(tmp_path: Path) -> None:
    frame = concept_frame()
    frame.loc[5, "cat"] = 1.5
    with pytest.raises(io.TableError, match=r"concept column 'cat' has value 1.5 outside \[0, 1\] at input_id 5"):
        io.write_concept_table(tmp_path / "c.parquet", frame, metadata={"source": "labels"})


def test_reading_the_wrong_kind_is_an_error(tmp_path: Path) -> None:
    path = io.write_concept_table(tmp_path / "c.parquet", concept_frame(), metadata={"source": "labels"})
    with pytest.raises(io.TableError, match="holds a concept table, expected a activation table"):
        io.read_activation_table(path)


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty"])
def test_corrupt_files_name_the_file(tmp_path: Path, damage: str) -> None:
    path = io.write_activation_table(tmp_path / "acts.parquet", activation_frame(), metadata={})
    content = path.read_bytes()
    replacement = {"truncate": content[: len(content) // 2], "garbage": b"not parquet at all", "empty": b""}
    path.write_bytes(replacement[damage])
    with pytest.raises(io.TableError, match=r"acts\.parquet: not a readable Parquet file"):
        io.read_activation_table(path)


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(io.TableError, match=r"nowhere\.parquet: no such concept table"):
        io.read_concept_table(tmp_path / "nowhere.parquet")


def test_mismatched_ids_between_tables_are_reported_from_both_sides() -> None:
    first = io.validate_table(activation_frame(n=5), source="acts")
    second = io.validate_table(concept_frame(n=6).iloc[1:], source="concepts", kind="concept")
    with pytest.raises(io.TableError, match=r"1 ids only in acts \(first: 0\); 1 ids only in concepts \(first: 5\)"):
        io.check_matching_ids(first, second, first_source="acts", second_source="concepts")
    io.check_matching_ids(first, first, first_source="acts", second_source="acts")


def test_failed_write_keeps_previous_version_and_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "acts.parquet"
    io.write_activation_table(target, activation_frame(), metadata={"version": 1})
    bad = activation_frame(seed=1)
    bad.loc[0, "0"] = np.nan
    with pytest.raises(io.TableError):
        io.write_activation_table(target, bad, metadata={"version": 2})
    _, metadata = io.read_activation_table(target)
    assert metadata["version"] == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["acts.parquet"]


def test_atomic_path_cleans_up_when_the_block_raises(tmp_path: Path) -> None:
    target = tmp_path / "out.csv"
    with pytest.raises(RuntimeError), io.atomic_path(target) as tmp_file:
        tmp_file.write_text("partial")
        raise RuntimeError("interrupted")
    assert list(tmp_path.iterdir()) == []


def test_csv_writes_are_byte_identical(tmp_path: Path) -> None:
    frame = pd.DataFrame({"metric": ["auc", "iou"], "value": [1 / 3, 2 / 3]})
    first = io.write_csv(tmp_path / "a.csv", frame).read_bytes()
    second = io.write_csv(tmp_path / "b.csv", frame).read_bytes()
    assert first == second == b"metric,value\nauc,0.333333\niou,0.666667\n"


def test_a_float64_value_that_overflows_float32_is_rejected_on_read_and_write(tmp_path: Path) -> None:
    """1e300 is finite as float64 but inf as the float32 the table stores: named with file, column and row."""
    frame = activation_frame().astype({"1": np.float64})
    frame.loc[4, "1"] = 1e300
    foreign = tmp_path / "foreign.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), foreign)
    expected = r"foreign\.parquet: column '1' has value 1e\+300 at input_id 4 \(row 4\), which overflows float32"
    with pytest.raises(io.TableError, match=expected):
        io.read_activation_table(foreign)
    with pytest.raises(io.TableError, match=r"column '1' has value 1e\+300 at input_id 4 \(row 4\)"):
        io.write_activation_table(tmp_path / "acts.parquet", frame, metadata={})


def test_rows_are_named_by_position_in_the_file_and_by_input_id(tmp_path: Path) -> None:
    frame = concept_frame().iloc[::-1].reset_index(drop=True)  # input_id 5 … 0
    frame.loc[1, "dog"] = -0.25  # input_id 4
    with pytest.raises(io.TableError, match=r"concept column 'dog' has value -0\.25 outside \[0, 1\] at input_id 4 "
                                            r"\(row 1\)"):
        io.validate_table(frame, source="c.parquet", kind="concept")


def test_validated_values_are_one_float32_block(tmp_path: Path) -> None:
    frame = activation_frame(n=7, units=4).iloc[::-1]
    loaded = io.validate_table(frame, source="acts")
    matrix = io.value_matrix(loaded)
    assert matrix.dtype == np.float32 and matrix.shape == (7, 4)
    np.testing.assert_array_equal(matrix, activation_frame(n=7, units=4)[["0", "1", "2", "3"]].to_numpy())
    assert np.shares_memory(matrix, io.value_matrix(loaded))  # no copy per call


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_atomic_writes_get_the_modes_of_a_plain_open(tmp_path: Path, umask: int) -> None:
    previous = os.umask(umask)
    try:
        written = [io.write_csv(tmp_path / "r.csv", pd.DataFrame({"a": [1]})),
                   io.write_json(tmp_path / "r.json", {"a": 1}),
                   io.write_activation_table(tmp_path / "a.parquet", activation_frame(), metadata={})]
        with io.atomic_path(tmp_path / "raw.txt") as tmp:
            tmp.write_text("x")
        written.append(tmp_path / "raw.txt")
        with open(tmp_path / "plain.txt", "w") as handle:
            handle.write("x")
    finally:
        os.umask(previous)
    plain = (tmp_path / "plain.txt").stat().st_mode & 0o777
    assert plain == 0o666 & ~umask
    assert {path.name: path.stat().st_mode & 0o777 for path in written} == {path.name: plain for path in written}


def test_write_torch_gives_the_same_bytes_for_the_same_payload(tmp_path: Path) -> None:
    """torch.save to a path names the archive's folder after that (temporary) file; write_torch does not."""
    import hashlib
    import zipfile

    import torch

    payload = {"state_dict": {"weight": torch.arange(6.0).reshape(2, 3)}, "names": ["a", "b"]}
    first = io.write_torch(tmp_path / "one.pt", payload)
    second = io.write_torch(tmp_path / "two.pt", payload)
    assert hashlib.sha256(first.read_bytes()).digest() == hashlib.sha256(second.read_bytes()).digest()
    assert all(name.startswith("archive/") for name in zipfile.ZipFile(first).namelist())
    loaded = torch.load(first, weights_only=True)
    assert torch.equal(loaded["state_dict"]["weight"], payload["state_dict"]["weight"])
    assert loaded["names"] == ["a", "b"]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["one.pt", "two.pt"]  # no temporary left behind


def test_swap_directory_replaces_a_folder_whole_with_plain_modes(tmp_path) -> None:
    target = tmp_path / "out"
    old = io.staging_directory(target)
    (old / "stale.txt").write_text("old")
    assert io.swap_directory(old, target) == target
    new = io.staging_directory(target)
    (new / "sub").mkdir()
    (new / "sub" / "model.bin").write_bytes(b"new")
    os.chmod(new / "sub" / "model.bin", 0o600)
    io.swap_directory(new, target)
    umask = io.current_umask()
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*")) == ["sub", "sub/model.bin"]
    assert {(p.is_dir(), stat.S_IMODE(p.stat().st_mode)) for p in [target, *target.rglob("*")]} == {
        (True, 0o777 & ~umask), (False, 0o666 & ~umask)}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
