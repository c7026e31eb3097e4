"""Fault injection (marker ``faults``, left out of ``make test``; ``make test-faults`` runs it): the tiny build of
``make run``'s target is killed at several points — SIGTERM and SIGKILL, to Snakemake's main process alone (its
running jobs then finish as orphans) or to its whole process group — and after each kill the command ``make run``
runs (``tools/unlock_if_stale.py``, then the same ``snakemake`` command line, no extra flag) resumes the build.
The final build is byte-identical to an uninterrupted one (``tools/compare_builds.py``), leftover temporaries
included: none may remain.

``NEURONEVAL_FAULT_TARGETS`` (space-separated) overrides the target, ``results/table4.csv``.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.workflow.conftest import BIN, ROOT, make_workspace, tiny_params

pytestmark = [pytest.mark.faults, pytest.mark.slow]

#: The target and the snakemake command line of the Makefile's `run` (CORES=all).
TARGETS = os.environ.get("NEURONEVAL_FAULT_TARGETS", "results/table4.csv").split()
SNAKEMAKE = ["snakemake", "--cores", "all"]
#: (signal, whole process group?, jobs finished in this run before the kill): one kill per row, in this order.
KILLS = [(signal.SIGTERM, False, 2), (signal.SIGKILL, False, 3), (signal.SIGKILL, True, 3),
         (signal.SIGTERM, True, 4), (signal.SIGKILL, True, 6), (signal.SIGKILL, False, 8)]
#: Model cards and LM reports record training wall time; every other file must match byte for byte.
TIMED = ["data/models/*.json", "data/models/*/training_report.json", "data/digits/models/*.json"]


def environment(workspace: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(workspace / "src"),
            "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def make_run(workspace: Path, log: Path) -> subprocess.Popen:
    """``make run`` without the install step: unlock a stale lock, then Snakemake; in a new process group."""
    command = (f"{BIN / 'python'} {ROOT / 'tools/unlock_if_stale.py'} {BIN / 'snakemake'} && "
               + " ".join([str(BIN / SNAKEMAKE[0]), *SNAKEMAKE[1:], *TARGETS]))
    with open(log, "w") as handle:
        return subprocess.Popen(["bash", "-c", command], cwd=workspace,
                                env=environment(workspace), stdout=handle, stderr=subprocess.STDOUT,
                                start_new_session=True)


def finished_jobs(log: Path) -> int:
    return len(re.findall(r"^Finished job", log.read_text(errors="replace"), re.MULTILINE))


def snakemake_pid(shell: subprocess.Popen) -> int | None:
    """Snakemake's main process: the ``make run`` shell itself if it exec'd Snakemake, else its Snakemake child."""
    try:
        children = Path(f"/proc/{shell.pid}/task/{shell.pid}/children").read_text().split()
    except OSError:
        children = []
    for pid in [shell.pid, *map(int, children)]:
        try:
            command = Path(f"/proc/{pid}/cmdline").read_text()
        except OSError:
            continue
        if "snakemake" in command and "unlock_if_stale" not in command and "bash" not in command.split("\0")[0]:
            return pid
    return None


def group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def wait_for_group(group: int, timeout: float = 1800) -> None:
    """Wait until every process of ``group`` (orphaned jobs included) has ended, as a user waits for them."""
    deadline = time.monotonic() + timeout
    while group_alive(group):
        if time.monotonic() > deadline:
            os.killpg(group, signal.SIGKILL)
            raise AssertionError(f"process group {group} still alive after {timeout} s")
        time.sleep(1)


def test_make_run_recovers_from_kills_to_an_identical_build(tmp_path: Path) -> None:
    started = time.monotonic()
    params = tiny_params()
    reference = make_workspace(tmp_path / "reference", params)
    faulted = make_workspace(tmp_path / "faulted", params)
    shell = make_run(reference, tmp_path / "reference.log")
    assert shell.wait() == 0, (tmp_path / "reference.log").read_text()[-6000:]
    reference_seconds = time.monotonic() - started
    record = []
    for number, (kill_signal, whole_group, after_jobs) in enumerate(KILLS):
        log = tmp_path / f"faulted-{number}.log"
        shell = make_run(faulted, log)
        while shell.poll() is None and not (finished_jobs(log) >= after_jobs
                                             and any((faulted / ".snakemake/incomplete").glob("*"))):
            time.sleep(0.2)
        assert shell.poll() is None, f"run {number} ended before its kill point:\n{log.read_text()[-6000:]}"
        if whole_group:
            os.killpg(shell.pid, kill_signal)
        else:
            main = snakemake_pid(shell)
            assert main is not None, log.read_text()[-3000:]
            os.kill(main, kill_signal)
        shell.wait()
        wait_for_group(shell.pid)
        record.append(f"{kill_signal.name} {'group' if whole_group else 'main'} after {finished_jobs(log)} jobs")
    log = tmp_path / "faulted-final.log"
    shell = make_run(faulted, log)
    assert shell.wait() == 0, f"make run did not recover after {record}:\n{log.read_text()[-8000:]}"
    text = "".join(path.read_text(errors="replace") for path in sorted(tmp_path.glob("faulted-*.log")))
    assert "IncompleteFilesException" not in text and "LockException" not in text
    comparison = subprocess.run([sys.executable, str(ROOT / "tools/compare_builds.py"), str(reference),
                                 str(faulted), "--ignore", *TIMED], capture_output=True, text=True)
    print(f"\nkills: {record}\n{comparison.stdout.strip().splitlines()[-1]}\nreference build "
          f"{reference_seconds:.0f} s, whole test {time.monotonic() - started:.0f} s")
    assert comparison.returncode == 0, comparison.stdout[-6000:]
