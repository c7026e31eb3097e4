"""Run pytest at this process's nice value across sessions too (the test command of ``tools/mutants.py``).

Linux with ``CONFIG_SCHED_AUTOGROUP`` (``/proc/sys/kernel/sched_autogroup_enabled`` = 1, as on the development
machines) shares the CPU between *sessions* first and applies a process's nice value only inside its session.
Cosmic Ray starts every test run in a new session (``start_new_session=True``, so that a timeout kills its whole
group), so a ``nice -n 19`` mutation run still took one of two cores from work beside it (measured: a from-scratch
``make run`` beside one got 102 % CPU, about one core, and took 846 s). This wrapper gives its new session the
nice value the process inherited (``/proc/self/autogroup``; raising it needs no privilege), then replaces itself
with ``python -m pytest`` and the arguments it was given. Where there is no autogroup file, or it cannot be
written, pytest runs as it is.

    python tools/niced_pytest.py -x -q tests/metrics/test_binarize_rules.py
"""

from __future__ import annotations

import os
import sys

AUTOGROUP = "/proc/self/autogroup"


def share_nice_with_session(path: str = AUTOGROUP) -> bool:
    """Set this session's autogroup nice to the process's own nice value when that is higher than 0; True when
    written. Errors (no file, not permitted) leave the scheduling as it is."""
    nice = os.nice(0)
    if nice <= 0:
        return False
    try:
        with open(path, "w") as autogroup:
            autogroup.write(str(nice))
    except OSError:
        return False
    return True


def main() -> None:
    share_nice_with_session()
    os.execv(sys.executable, [sys.executable, "-m", "pytest", *sys.argv[1:]])


if __name__ == "__main__":
    main()
