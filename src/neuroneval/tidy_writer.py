"""Write a tidy table given in pieces (an iterator of DataFrames with the same columns), one piece at a time.

A result too large to hold as one tidy frame — 40 M (unit, concept) rows of repeated names — is written as its
pieces arrive (:func:`neuroneval.metrics.score_table_chunks`), to a temporary sibling renamed onto the target only
once every piece is written (:func:`neuroneval.io.atomic_path`). CSV: a header, then each piece's rows with a fixed
float format (equal inputs give equal bytes). Parquet (a ``.parquet`` target): one row group per piece; categorical
columns (``unit``, ``concept``, ``metric``) are stored dictionary-encoded and read back as categoricals.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from neuroneval.io import atomic_path

#: Suffix of a target written as Parquet (anything else is CSV).
PARQUET_SUFFIX = ".parquet"


def write_tidy(path: str | os.PathLike, pieces: Iterable[pd.DataFrame], *, float_format: str = "%.8g") -> int:
    """Write ``pieces`` atomically to ``path`` (Parquet if it ends in ``.parquet``, else CSV); returns the number of
    rows. Every piece must have the first piece's columns (``ValueError`` names the piece and its columns); with no
    piece nothing is written and it is a ``ValueError``."""
    target = Path(path)
    with atomic_path(target) as tmp_path:
        if target.suffix == PARQUET_SUFFIX:
            rows = _write_parquet(tmp_path, _checked(target, pieces))
        else:
            rows = _write_csv(tmp_path, _checked(target, pieces), float_format)
    return rows


def _checked(target: Path, pieces: Iterable[pd.DataFrame]) -> Iterator[pd.DataFrame]:
    """The pieces, each checked to have the first one's columns; ``ValueError`` when there is none."""
    columns: list[str] | None = None
    for number, piece in enumerate(pieces):
        if columns is None:
            columns = list(piece.columns)
        elif list(piece.columns) != columns:
            raise ValueError(f"{target}: piece {number} has columns {list(piece.columns)}, expected {columns}")
        yield piece
    if columns is None:
        raise ValueError(f"{target}: no rows to write")


def _write_csv(path: Path, pieces: Iterator[pd.DataFrame], float_format: str) -> int:
    rows = 0
    with open(path, "w", encoding="utf-8", newline="") as handle:
        for piece in pieces:
            piece.to_csv(handle, index=False, header=rows == 0, float_format=float_format, lineterminator="\n")
            rows += len(piece)
    return rows


def _write_parquet(path: Path, pieces: Iterator[pd.DataFrame]) -> int:
    rows, writer = 0, None
    try:
        for piece in pieces:
            table = pa.Table.from_pandas(piece, preserve_index=False, schema=None if writer is None else writer.schema)
            if writer is None:
                writer = pq.ParquetWriter(path, table.schema)
            writer.write_table(table)
            rows += len(piece)
    finally:
        if writer is not None:
            writer.close()
    return rows
