"""Rows of the engine's random streams, drawn for any subset of rows without drawing the others.

Each random quantity of a call (reference-mode tie noise, top-and-random keys) is row ``r`` of a virtual
matrix ``numpy.random.default_rng([seed, stream]).random((rows, width))``: the uniform doubles number
``r·width … (r+1)·width − 1`` of that PCG64 stream. :func:`stream_rows` jumps to each run of consecutive
wanted rows with ``bit_generator.advance`` (one double is one 64-bit draw), so the values of a unit or concept
never depend on which other rows a block, chunk or call asks for, and drawing a block costs only that block.
"""

from __future__ import annotations

import numpy as np


def stream_rows(seed: int, stream: int, rows: np.ndarray, width: int, *, dtype: type = np.float64,
                block_elements: int = 2**22) -> np.ndarray:
    """Rows ``rows`` (any order, no repeats needed) of the (∞, ``width``) U[0, 1) matrix of ``[seed, stream]``.

    Returns an array (len(rows), width) of ``dtype`` (the float64 draws cast, as float32 noise always was).
    Draws are generated ``block_elements`` at a time, so the temporary never exceeds that many doubles.
    """
    rows = np.asarray(rows, dtype=np.int64)
    out = np.empty((rows.size, width), dtype=dtype)
    if rows.size == 0 or width == 0:
        return out
    order = np.argsort(rows, kind="stable")
    ordered = rows[order]
    run_starts = np.flatnonzero(np.diff(ordered, prepend=ordered[0] - 2) != 1)
    run_stops = np.append(run_starts[1:], ordered.size)
    block = max(1, block_elements // width)
    for first, stop in zip(run_starts.tolist(), run_stops.tolist(), strict=True):
        generator = np.random.default_rng([seed, stream])
        generator.bit_generator.advance(int(ordered[first]) * width)
        position = first
        while position < stop:
            count = min(block, stop - position)
            draws = generator.random((count, width))
            out[order[position:position + count]] = draws
            position += count
    return out
