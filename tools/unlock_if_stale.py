"""Clear the lock that an interrupted Snakemake run leaves behind, before the Makefile starts Snakemake again.

Usage (the Makefile does this before every target that runs Snakemake)::

    python tools/unlock_if_stale.py [--allow-running] [--directory DIR] SNAKEMAKE [ARG ...]

While it runs, Snakemake keeps lock files in ``.snakemake/locks`` and removes them when it ends. A run that is
killed (Ctrl-C twice, ``kill -9``, a closed terminal, a power loss) leaves them there, and the next run stops
with a ``LockException``. This script looks for lock files and for a live Snakemake process whose working
directory is DIR (default: the current directory):

- no lock files: nothing to do;
- lock files and no such process: it says that a previous run was interrupted and runs
  ``SNAKEMAKE [ARG ...] --unlock`` in DIR;
- lock files and such a process: it names the process and exits with status 1, leaving the lock alone, so a
  second run cannot write the same files as the first. With ``--allow-running`` (dry runs, which only read)
  it says so and exits with status 0.

A "Snakemake process" is one started as ``snakemake`` (the console script, directly or through its
interpreter), as ``python -m snakemake``, or a job script Snakemake runs from ``.snakemake/scripts/``.
Processes are read from ``/proc`` on Linux (processes of other users whose working directory cannot be read
are skipped); elsewhere from ``ps``, which does not tell the working directory, so any Snakemake process then
counts as running here. Standard library only.
"""

from __future__ import annotations

import argparse
import itertools
import os
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

LOCK_DIR = Path(".snakemake") / "locks"
JOB_SCRIPTS = "/.snakemake/scripts/"


class Process(NamedTuple):
    """A running process: id, parent id, command line, and working directory (``None`` when unknown)."""

    pid: int
    ppid: int
    argv: tuple[str, ...]
    cwd: Path | None


def lock_files(workdir: Path) -> list[Path]:
    """The lock files Snakemake left in ``workdir/.snakemake/locks`` (``<n>.input.lock``, ``<n>.output.lock``)."""
    lock_dir = workdir / LOCK_DIR
    if not lock_dir.is_dir():
        return []
    return sorted(path for path in lock_dir.glob("*.lock") if path.is_file())


def is_snakemake(argv: Sequence[str]) -> bool:
    """Whether a command line is Snakemake itself or one of the job scripts it runs."""
    if any(os.path.basename(word) == "snakemake" for word in argv[:2]):
        return True
    if any(first == "-m" and second == "snakemake" for first, second in itertools.pairwise(argv)):
        return True
    return any(JOB_SCRIPTS in word for word in argv)


def ancestors(pid: int, processes: Iterable[Process]) -> set[int]:
    """``pid`` and the ids of its parents, grandparents, … (the shell and ``make`` that started this script)."""
    parent_of = {process.pid: process.ppid for process in processes}
    chain = {pid}
    while pid in parent_of and parent_of[pid] not in chain and parent_of[pid] > 0:
        pid = parent_of[pid]
        chain.add(pid)
    return chain


def snakemake_processes(workdir: Path, processes: Sequence[Process], *, own_pid: int | None = None) -> list[Process]:
    """The Snakemake processes working in ``workdir`` (or in an unknown directory), this script's own chain left out."""
    own_chain = ancestors(os.getpid() if own_pid is None else own_pid, processes)
    here = workdir.resolve()
    return [process for process in processes
            if process.pid not in own_chain and is_snakemake(process.argv)
            and (process.cwd is None or process.cwd == here)]


def _proc_processes(proc: Path) -> list[Process]:
    processes = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = tuple(word.decode(errors="replace")
                         for word in (entry / "cmdline").read_bytes().split(b"\0") if word)
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cwd = Path(os.readlink(entry / "cwd")).resolve()
        except (OSError, ValueError, IndexError):  # ended meanwhile, or another user's process
            continue
        if argv:
            processes.append(Process(int(entry.name), ppid, argv, cwd))
    return processes


def _ps_processes() -> list[Process]:
    listing = subprocess.run(["ps", "-A", "-o", "pid=", "-o", "ppid=", "-o", "args="],
                             capture_output=True, text=True, check=True).stdout
    processes = []
    for line in listing.splitlines():
        fields = line.split(None, 2)
        if len(fields) == 3:
            processes.append(Process(int(fields[0]), int(fields[1]), tuple(fields[2].split()), None))
    return processes


def running_processes(proc: Path = Path("/proc")) -> list[Process]:
    """Every process this user can see, from ``/proc`` where it exists, else from ``ps``."""
    if (proc / "self" / "cmdline").exists():
        return _proc_processes(proc)
    return _ps_processes()


def _describe(process: Process) -> str:
    command = " ".join(process.argv)
    where = f" in {process.cwd}" if process.cwd is not None else " (working directory unknown)"
    return f"pid {process.pid}{where}: {command[:160]}"


def unlock_if_stale(workdir: Path, processes: Sequence[Process], unlock: Callable[[Path], int], *,
                    allow_running: bool = False, report: Callable[[str], None] = print,
                    own_pid: int | None = None) -> int:
    """Remove a stale Snakemake lock in ``workdir`` with ``unlock`` and return the exit status for ``make``.

    ``processes`` are the running processes (:func:`running_processes`); ``unlock(workdir)`` runs
    ``snakemake --unlock`` and returns its exit status. Returns 0 when Snakemake may start, 1 when a Snakemake
    process is running in ``workdir`` (0 with ``allow_running``), or the failed unlock's status.
    """
    locks = lock_files(workdir)
    if not locks:
        return 0
    live = snakemake_processes(workdir, processes, own_pid=own_pid)
    if live:
        listing = "\n".join(f"  {_describe(process)}" for process in live)
        if allow_running:
            report(f"Note: Snakemake is running in {workdir.resolve()}; its lock is left in place:\n{listing}")
            return 0
        report(f"Snakemake is already running in {workdir.resolve()}:\n{listing}\n"
               f"Wait for it to finish, or stop it (kill <pid>) and run make again; its lock in {LOCK_DIR} "
               "is left in place so that two runs never write the same files.")
        return 1
    names = ", ".join(path.name for path in locks)
    report(f"A previous Snakemake run in {workdir.resolve()} was interrupted and left its lock in {LOCK_DIR} "
           f"({names}); no Snakemake process is running here, so unlocking (snakemake --unlock).")
    status = unlock(workdir)
    if status != 0:
        report(f"snakemake --unlock failed with status {status}; remove {workdir / LOCK_DIR} by hand once you are "
               "sure no Snakemake process uses this directory.")
    return status


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--allow-running", action="store_true",
                        help="only report a Snakemake process running here (for dry runs), never fail")
    parser.add_argument("--directory", type=Path, default=Path("."), help="the workflow's directory")
    parser.add_argument("snakemake", nargs=argparse.REMAINDER,
                        help="the Snakemake command (and options) whose --unlock clears the lock")
    args = parser.parse_args(argv)
    if not args.snakemake:
        parser.error("give the Snakemake command, e.g. .venv/bin/snakemake")

    def unlock(workdir: Path) -> int:
        return subprocess.run([*args.snakemake, "--unlock"], cwd=workdir).returncode

    return unlock_if_stale(args.directory, running_processes(), unlock, allow_running=args.allow_running)


if __name__ == "__main__":
    sys.exit(main())
