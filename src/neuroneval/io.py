"""Reading and writing the project's tables (docs/design.md §2.1), validated and atomic.

Two Parquet table kinds share one layout: an ``input_id`` column (int64, unique, sorted) followed by one
float32 column per unit (activation tables) or per concept (concept tables, values in [0, 1]). Table-level
facts (model, layer, dataset, concept source, hierarchy, ...) travel as JSON in the Parquet key-value
metadata under the key ``neuroneval``. A table may also be a directory of Parquet shards with one schema;
the readers accept both.

Every reader validates what it returns and every writer validates what it is given; problems raise
:class:`TableError` naming the file and the offending column or row. Writers go through a temporary file in
the destination directory and an atomic rename, so a failed write never leaves a half-written table.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from neuroneval import __version__

ID_COLUMN = "input_id"
METADATA_KEY = b"neuroneval"
#: Names of the atomic writers' temporaries beside their target: ``.<name>.<random>.tmp`` files (:func:`atomic_path`)
#: and ``.<name>.partial`` folders (:func:`atomic_directory`). A write killed half-way leaves one behind: ``.dvcignore``
#: lists these globs, and the next write of the same target removes it.
TEMPORARY_SUFFIX = ".tmp"
STAGING_SUFFIX = ".partial"
TEMPORARY_GLOBS = (f".*{TEMPORARY_SUFFIX}", f".*{STAGING_SUFFIX}")


class TableError(ValueError):
    """A table on disk or in memory breaks the data contract; the message names file, column and row."""


def current_umask() -> int:
    """The process's file mode creation mask (read from /proc on Linux, else set and restored at once)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary sibling of ``path``; rename it onto ``path`` only if the block succeeds.

    The temporary file lives in the destination directory (so the rename is atomic on POSIX) and is removed
    if the block raises, leaving any previous version of ``path`` untouched. It gets the mode a plain
    ``open(path, "w")`` would give (``0o666`` less the umask, e.g. ``0o644`` under umask 022), not the
    private ``0o600`` of :func:`tempfile.mkstemp`, so every atomic write leaves normally readable files.
    Temporaries of ``path`` that an earlier, killed write left behind (``.<name>.<random>.tmp``) are removed first.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    prefix = f".{target.name}."
    for stale in target.parent.glob(f"{glob.escape(prefix)}*{TEMPORARY_SUFFIX}"):
        if "." not in stale.name[len(prefix):-len(TEMPORARY_SUFFIX)]:  # mkstemp's random part; not another target's
            stale.unlink(missing_ok=True)
    handle, tmp_name = tempfile.mkstemp(prefix=prefix, suffix=TEMPORARY_SUFFIX, dir=target.parent)
    try:
        os.fchmod(handle, 0o666 & ~current_umask())
    finally:
        os.close(handle)
    tmp_path = Path(tmp_name)
    try:
        yield tmp_path
        os.replace(tmp_path, target)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


@contextlib.contextmanager
def atomic_directory(path: str | os.PathLike) -> Iterator[Path]:
    """Yield an empty staging directory beside ``path``; it replaces ``path`` only if the block succeeds.

    A world split or model folder is never seen half-written: the block fills ``.<name>.partial``, which is
    renamed onto ``path`` (any previous version removed first) when the block returns, and deleted if it raises.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.with_name(f".{target.name}{STAGING_SUFFIX}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        yield staging
        shutil.rmtree(target, ignore_errors=True)
        os.replace(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def staging_directory(path: str | os.PathLike) -> Path:
    """A new, empty sibling directory of ``path`` (``.<name>.<random>.partial``, private while it is filled) to
    fill and then :func:`swap_directory` onto ``path``, which gives it the modes of any other output. The caller
    removes it if filling fails (``shutil.rmtree(staging, ignore_errors=True)``).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent))


def swap_directory(staging: str | os.PathLike, path: str | os.PathLike) -> Path:
    """Put the filled ``staging`` directory (:func:`staging_directory`) in place of ``path``.

    Every file and folder in ``staging`` first gets the mode a plain write would give (``0o666``/``0o777`` less the
    umask): libraries such as safetensors write private ``0o600`` files. An existing ``path`` is then renamed into
    a private sibling, ``staging`` is renamed onto ``path``, and only then is the old version deleted: readers see
    the old folder or the new one, never a mix of the two, and no file of the old version survives in the new
    one. Returns ``path``.
    """
    target, umask = Path(path), current_umask()
    for folder, _, files in os.walk(staging):
        os.chmod(folder, 0o777 & ~umask)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o666 & ~umask)
    if not (target.exists() or target.is_symlink()):
        os.replace(staging, target)
        return target
    retired = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
    try:
        os.replace(target, retired / target.name)
        os.replace(staging, target)
    finally:
        shutil.rmtree(retired, ignore_errors=True)
    return target


def validate_table(frame: pd.DataFrame, *, source: str, kind: str = "activation") -> pd.DataFrame:
    """Check ``frame`` against the table contract and return a normalised copy.

    Normalisation: ``input_id`` becomes int64, value columns float32 (one block, no further copy), rows sorted by
    ``input_id``. Values are checked by :func:`check_column` as they will be stored (float32).

    Parameters
    ----------
    frame
        ``input_id`` plus value columns.
    source
        Where the table came from (a file path or a description); quoted in every error.
    kind
        ``"activation"`` (any finite float) or ``"concept"`` (finite, within [0, 1]).

    Raises
    ------
    TableError
        Empty table, missing/non-integer/duplicate ids, non-string or duplicate column names, non-numeric
        value columns, NaN/inf values or values that overflow float32, concept values outside [0, 1].
    """
    value_columns = _check_header(frame, len(frame), source=source, kind=kind)
    return _assemble(frame[ID_COLUMN], value_columns, lambda names: frame[names], source=source, kind=kind)


#: Bytes of value columns (as float64) read and checked at a time: reading a table holds its float32 block plus
#: about this much.
COLUMN_BATCH_BYTES = 2**26


def _check_header(frame: pd.DataFrame, n_rows: int, *, source: str, kind: str) -> list[str]:
    """The value columns of a table whose columns are ``frame.columns`` and which has ``n_rows`` rows, or
    :class:`TableError` for a missing ``input_id``, no rows, no value column, non-string or duplicate names."""
    if kind not in ("activation", "concept"):
        raise ValueError(f"kind must be 'activation' or 'concept', got {kind!r}")
    if ID_COLUMN not in frame.columns:
        raise TableError(f"{source}: missing column {ID_COLUMN!r} (columns: {list(frame.columns)[:5]}...)")
    value_columns = [column for column in frame.columns if column != ID_COLUMN]
    if n_rows == 0:
        raise TableError(f"{source}: table has no rows")
    if not value_columns:
        raise TableError(f"{source}: table has no {kind} columns besides {ID_COLUMN!r}")
    bad_names = [column for column in frame.columns if not isinstance(column, str)]
    if bad_names:
        raise TableError(f"{source}: column names must be strings, got {bad_names[:3]!r}")
    if len(set(frame.columns)) != len(frame.columns):
        duplicated = frame.columns[frame.columns.duplicated()].tolist()
        raise TableError(f"{source}: duplicate column names {duplicated[:3]!r}")
    return value_columns


def _assemble(id_series: pd.Series, value_columns: list[str], read_columns: Callable[[list[str]], pd.DataFrame], *,
              source: str, kind: str) -> pd.DataFrame:
    """The normalised frame: ids checked and sorted, value columns checked (:func:`check_column`) and copied, a
    batch of :data:`COLUMN_BATCH_BYTES` at a time from ``read_columns(names)``, into one float32 block that the
    frame wraps without a copy."""
    if not pd.api.types.is_integer_dtype(id_series.dtype):
        raise TableError(f"{source}: column {ID_COLUMN!r} must be integer, got dtype {id_series.dtype}")
    ids = id_series.to_numpy(dtype=np.int64)
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    duplicate_at = np.flatnonzero(sorted_ids[1:] == sorted_ids[:-1])
    if duplicate_at.size:
        bad_id = int(sorted_ids[duplicate_at[0]])
        rows = np.flatnonzero(ids == bad_id)[:2].tolist()
        raise TableError(f"{source}: duplicate {ID_COLUMN} {bad_id} at rows {rows}")
    already_sorted = bool(np.all(ids[1:] > ids[:-1]))
    block = np.empty((len(value_columns), ids.size), dtype=np.float32)
    batch = max(1, COLUMN_BATCH_BYTES // (8 * ids.size))
    for first in range(0, len(value_columns), batch):
        names = value_columns[first:first + batch]
        part = read_columns(names)
        for position, column in enumerate(names, start=first):
            series = part[column]
            if not (pd.api.types.is_float_dtype(series.dtype) or pd.api.types.is_integer_dtype(series.dtype)
                    or pd.api.types.is_bool_dtype(series.dtype)):
                raise TableError(f"{source}: column {column!r} must be numeric (float32), got dtype {series.dtype}")
            raw = (series.to_numpy() if isinstance(series.dtype, np.dtype)
                   else series.to_numpy(dtype=np.float64, na_value=np.nan))
            stored = check_column(raw, source=source, column=column, kind=kind, ids=ids)
            block[position] = stored if already_sorted else stored[order]
        del part
    normalised = pd.DataFrame(block.T, columns=value_columns, copy=False)
    normalised.insert(0, ID_COLUMN, sorted_ids)
    return normalised


def check_column(values: np.ndarray, *, source: str, column: str, kind: str, ids: np.ndarray) -> np.ndarray:
    """One column as stored (float32, returned), or :class:`TableError` unless every value is valid as stored.

    A value is invalid when it is NaN or ±inf, when it is finite but overflows float32 (|x| > 3.4e38, e.g. a
    float64 1e300), or, in a concept table, when it lies outside [0, 1]. The message names the file, the column,
    the row (position in the file) and its ``input_id``, and is the same whoever reads the table (``neuroneval
    validate``, ``neuroneval score``, the workflow).
    """
    with np.errstate(over="ignore", invalid="ignore"):
        stored = values.astype(np.float32)
    finite = np.isfinite(stored)
    if not finite.all():
        row = int(np.flatnonzero(~finite)[0])
        where = f"at {ID_COLUMN} {int(ids[row])} (row {row})"
        if not np.isfinite(values[row]):
            raise TableError(f"{source}: column {column!r} has a non-finite value {values[row]} {where}")
        raise TableError(f"{source}: column {column!r} has value {values[row]} {where}, which overflows float32 "
                         f"(|x| > {float(np.finfo(np.float32).max):.7g})")
    if kind == "concept":
        outside = (values < 0) | (values > 1)
        if outside.any():
            row = int(np.flatnonzero(outside)[0])
            raise TableError(f"{source}: concept column {column!r} has value {values[row]} outside [0, 1] at "
                             f"{ID_COLUMN} {int(ids[row])} (row {row})")
    return stored


def _write_table(path: str | os.PathLike, frame: pd.DataFrame, metadata: Mapping[str, Any], kind: str) -> Path:
    target = Path(path)
    table_frame = validate_table(frame, source=f"{target} (being written)", kind=kind)
    full_metadata = {"kind": kind, "neuroneval_version": __version__, **metadata}
    arrow_table = pa.Table.from_pandas(table_frame, preserve_index=False)
    encoded = json.dumps(full_metadata, sort_keys=True, default=_json_default).encode()
    arrow_table = arrow_table.replace_schema_metadata({METADATA_KEY: encoded})
    with atomic_path(target) as tmp_path:
        pq.write_table(arrow_table, tmp_path, compression="zstd")
    return target


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"metadata value of type {type(value).__name__} is not JSON serialisable")


def _read_table(path: str | os.PathLike, kind: str) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Read a table file or directory of shards column batch by column batch (:func:`_assemble`), so that reading
    holds the result plus one batch, not several copies of the table."""
    source = Path(path)
    if not source.exists():
        raise TableError(f"{source}: no such {kind} table")
    files = sorted(source.glob("*.parquet")) if source.is_dir() else [source]
    if not files:
        raise TableError(f"{source}: directory holds no .parquet shards")
    shards: list[pq.ParquetFile] = []
    try:
        metadata: dict[str, Any] = {}
        for file in files:
            try:
                shards.append(pq.ParquetFile(file))
            except (pa.ArrowException, OSError) as error:
                raise TableError(f"{file}: not a readable Parquet file ({error})") from error
            schema = shards[-1].schema_arrow
            if len(shards) == 1:
                raw = (schema.metadata or {}).get(METADATA_KEY)
                if raw is not None:
                    try:
                        metadata = json.loads(raw)
                    except json.JSONDecodeError as error:
                        raise TableError(f"{file}: corrupt neuroneval metadata ({error})") from error
            elif not schema.remove_metadata().equals(shards[0].schema_arrow.remove_metadata()):
                raise TableError(f"{file}: schema differs from the first shard {files[0].name}")
        stored_kind = metadata.get("kind")
        if stored_kind is not None and stored_kind != kind:
            raise TableError(f"{source}: holds a {stored_kind} table, expected a {kind} table")

        def read_columns(names: list[str]) -> pd.DataFrame:
            frames = []
            for file, shard in zip(files, shards, strict=True):
                try:
                    table = shard.read(columns=names)
                except (pa.ArrowException, OSError) as error:
                    raise TableError(f"{file}: not a readable Parquet file ({error})") from error
                frames.append(table.to_pandas(split_blocks=True, self_destruct=True))
                del table
            return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)

        header = shards[0].schema_arrow.empty_table().to_pandas()
        n_rows = sum(shard.metadata.num_rows for shard in shards)
        value_columns = _check_header(header, n_rows, source=str(source), kind=kind)
        frame = _assemble(read_columns([ID_COLUMN])[ID_COLUMN], value_columns, read_columns, source=str(source),
                          kind=kind)
    finally:
        for shard in shards:
            shard.close()
    return frame, metadata


def write_activation_table(path: str | os.PathLike, frame: pd.DataFrame, *, metadata: Mapping[str, Any]) -> Path:
    """Validate and atomically write an activation table (``input_id`` + one float32 column per unit).

    ``metadata`` should name ``model``, ``layer``, ``dataset`` and ``pooling``; it is stored as JSON.
    """
    return _write_table(path, frame, metadata, "activation")


def read_activation_table(path: str | os.PathLike) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Read and validate an activation table (a Parquet file or a directory of shards)."""
    return _read_table(path, "activation")


def write_concept_table(path: str | os.PathLike, frame: pd.DataFrame, *, metadata: Mapping[str, Any]) -> Path:
    """Validate and atomically write a concept table (``input_id`` + one column per concept in [0, 1]).

    ``metadata`` should name ``source`` (``labels``, ``pseudo:<model>``, ``generative``), ``concepts`` and,
    where known, ``hierarchy`` (parent -> children).
    """
    return _write_table(path, frame, metadata, "concept")


def read_concept_table(path: str | os.PathLike) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Read and validate a concept table (a Parquet file or a directory of shards)."""
    return _read_table(path, "concept")


def check_matching_ids(first: pd.DataFrame, second: pd.DataFrame, *, first_source: str, second_source: str) -> None:
    """Raise :class:`TableError` unless both (validated, sorted) tables hold exactly the same ``input_id``s."""
    first_ids = first[ID_COLUMN].to_numpy()
    second_ids = second[ID_COLUMN].to_numpy()
    if first_ids.shape == second_ids.shape and np.array_equal(first_ids, second_ids):
        return
    only_first = np.setdiff1d(first_ids, second_ids)
    only_second = np.setdiff1d(second_ids, first_ids)
    details = []
    if only_first.size:
        details.append(f"{only_first.size} ids only in {first_source} (first: {int(only_first[0])})")
    if only_second.size:
        details.append(f"{only_second.size} ids only in {second_source} (first: {int(only_second[0])})")
    raise TableError(f"{ID_COLUMN} mismatch between {first_source} and {second_source}: " + "; ".join(details))


def value_matrix(frame: pd.DataFrame) -> np.ndarray:
    """The (n, K) float32 matrix of a validated table, without the ``input_id`` column."""
    return frame.drop(columns=[ID_COLUMN]).to_numpy(dtype=np.float32)


def write_csv(path: str | os.PathLike, frame: pd.DataFrame, *, float_format: str = "%.6g") -> Path:
    """Atomically write a result CSV with a fixed float format, so equal inputs give equal bytes."""
    target = Path(path)
    with atomic_path(target) as tmp_path:
        frame.to_csv(tmp_path, index=False, float_format=float_format, lineterminator="\n")
    return target


def write_json(path: str | os.PathLike, payload: Any) -> Path:
    """Atomically write sorted, indented JSON."""
    target = Path(path)
    with atomic_path(target) as tmp_path:
        tmp_path.write_text(json.dumps(payload, indent=2, sort_keys=True, default=_json_default) + "\n")
    return target


def write_torch(path: str | os.PathLike, payload: Any) -> Path:
    """Atomically ``torch.save`` a checkpoint, through a file handle: torch names the archive's inner folder
    after the file it writes to (here a random temporary name), and ``"archive"`` when given a handle, so the same
    payload gives the same bytes (and the same checksum downstream, e.g. CoSy's generator config hash)."""
    import torch

    target = Path(path)
    with atomic_path(target) as tmp_path, open(tmp_path, "wb") as handle:
        torch.save(payload, handle)
    return target


def write_text(path: str | os.PathLike, text: str) -> Path:
    """Atomically write a UTF-8 text file (a rendered report)."""
    target = Path(path)
    with atomic_path(target) as tmp_path:
        tmp_path.write_text(text, encoding="utf-8")
    return target
