"""The one progress bar of the library's long loops (training, activation recording, scoring, diffusion, draws).

A tqdm bar on stderr: a workflow job's stderr is its log (``neuroneval.pipeline.runner``), the ``neuroneval``
command's is the terminal. It appears only once the loop has run for :data:`DELAY_S` seconds, so quick calls
print nothing. On a terminal it redraws every :data:`TERMINAL_INTERVAL_S` seconds; into a log file every
:data:`LOG_INTERVAL_S` seconds, so an hour of training adds a few hundred lines, not tens of thousands, and the
bar's last state stays in the log. ``enabled=False`` prints nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

from tqdm import tqdm

#: Seconds a loop runs before its bar appears.
DELAY_S = 2.0
#: Seconds between redraws on a terminal.
TERMINAL_INTERVAL_S = 0.1
#: Seconds between redraws into a file (a job's log).
LOG_INTERVAL_S = 10.0


def progress_bar(iterable: Iterable[Any] | None = None, *, desc: str, total: float | None = None, unit: str = "it",
                 enabled: bool = True, leave: bool = True, unit_scale: bool = False) -> tqdm:
    """A tqdm bar over ``iterable`` (or ``total`` steps, advanced with ``update``) labelled ``desc``, on stderr."""
    stream = sys.stderr
    terminal = hasattr(stream, "isatty") and stream.isatty()
    return tqdm(iterable, total=total, desc=desc, unit=unit, unit_scale=unit_scale, disable=not enabled,
                delay=DELAY_S, mininterval=TERMINAL_INTERVAL_S if terminal else LOG_INTERVAL_S,
                leave=leave, file=stream, dynamic_ncols=terminal)
