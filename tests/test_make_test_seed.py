"""``make test`` draws one random-order seed and uses it everywhere: the line it prints, the command that repeats
the run, and pytest-randomly's ``--randomly-seed`` (docs/testing.md). A recursively expanded ``SEED ?= $(shell …)``
drew a new number at each use, so the printed seed did not repeat the run."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _dry_run(*arguments: str) -> str:
    """The commands ``make test`` would run (``make -n``: nothing is executed but the Makefile's ``$(shell)``)."""
    if shutil.which("make") is None:
        pytest.fail("GNU make is needed to read the Makefile's test target")
    return subprocess.run(["make", "-n", "test", *arguments], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout


def test_the_printed_seed_is_the_seed_pytest_runs_with():
    commands = _dry_run()
    printed = re.search(r"random order, seed (\d+) \(make test SEED=(\d+) repeats it\)", commands)
    used = re.search(r"--randomly-seed=(\d+)", commands)
    assert printed and used, commands
    assert printed.group(1) == printed.group(2) == used.group(1)


def test_a_given_seed_is_used_unchanged():
    commands = _dry_run("SEED=424242")
    assert "seed 424242 (make test SEED=424242 repeats it)" in commands
    assert "--randomly-seed=424242" in commands
