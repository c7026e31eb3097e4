"""tools/unlock_if_stale.py: a stale Snakemake lock is cleared, a live run's lock is left alone."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.workflow.conftest import make_workspace, tiny_params

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"


def _load_tool():
    spec = importlib.util.spec_from_file_location("unlock_if_stale", ROOT / "tools" / "unlock_if_stale.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


tool = _load_tool()


def fake_lock(workdir: Path) -> Path:
    """The files a killed Snakemake leaves: ``.snakemake/locks/0.input.lock`` and ``0.output.lock``."""
    lock_dir = workdir / ".snakemake" / "locks"
    lock_dir.mkdir(parents=True)
    (lock_dir / "0.input.lock").write_text(f"{workdir / 'data/worlds/vision/train'}\n")
    (lock_dir / "0.output.lock").write_text(f"{workdir / 'results/table4.csv'}\n")
    return lock_dir


class Recorder:
    """Stands in for ``snakemake --unlock``: records the call and removes the locks as Snakemake does."""

    def __init__(self, status: int = 0) -> None:
        self.calls: list[Path] = []
        self.status = status

    def __call__(self, workdir: Path) -> int:
        self.calls.append(workdir)
        if self.status == 0:
            for lock in (workdir / ".snakemake" / "locks").iterdir():
                lock.unlink()
        return self.status


def snakemake_process(pid: int, cwd: Path | None, *, ppid: int = 1) -> tool.Process:
    return tool.Process(pid, ppid, ("/venv/bin/python", "/venv/bin/snakemake", "--cores", "2"), cwd)


def test_no_lock_nothing_to_do(tmp_path: Path) -> None:
    unlock, messages = Recorder(), []
    (tmp_path / ".snakemake" / "locks").mkdir(parents=True)  # every Snakemake start creates the empty directory
    assert tool.unlock_if_stale(tmp_path, [], unlock, report=messages.append) == 0
    assert unlock.calls == [] and messages == []


def test_stale_lock_is_unlocked_with_a_message(tmp_path: Path) -> None:
    lock_dir = fake_lock(tmp_path)
    unlock, messages = Recorder(), []
    elsewhere = snakemake_process(11, tmp_path.parent)  # another checkout's run does not count
    assert tool.unlock_if_stale(tmp_path, [elsewhere], unlock, report=messages.append) == 0
    assert unlock.calls == [tmp_path]
    assert list(lock_dir.iterdir()) == []
    assert len(messages) == 1 and "was interrupted" in messages[0] and "unlocking" in messages[0]


def test_live_run_keeps_its_lock_and_stops_make(tmp_path: Path) -> None:
    lock_dir = fake_lock(tmp_path)
    unlock, messages = Recorder(), []
    live = snakemake_process(4242, tmp_path.resolve())
    assert tool.unlock_if_stale(tmp_path, [live], unlock, report=messages.append) == 1
    assert unlock.calls == []
    assert sorted(path.name for path in lock_dir.iterdir()) == ["0.input.lock", "0.output.lock"]
    assert "already running" in messages[0] and "pid 4242" in messages[0]


def test_dry_runs_only_note_a_live_run(tmp_path: Path) -> None:
    fake_lock(tmp_path)
    unlock, messages = Recorder(), []
    live = snakemake_process(4242, tmp_path.resolve())
    assert tool.unlock_if_stale(tmp_path, [live], unlock, allow_running=True, report=messages.append) == 0
    assert unlock.calls == [] and "pid 4242" in messages[0]


def test_unknown_working_directory_counts_as_here(tmp_path: Path) -> None:
    """Where only ``ps`` is available the directory is unknown: better to stop than to unlock a live run."""
    fake_lock(tmp_path)
    unlock = Recorder()
    assert tool.unlock_if_stale(tmp_path, [snakemake_process(7, None)], unlock, report=lambda _: None) == 1
    assert unlock.calls == []


def test_own_chain_is_not_a_live_run(tmp_path: Path) -> None:
    """The shell that runs this script (``sh -c '... snakemake'``) and make are its ancestors, not a run."""
    fake_lock(tmp_path)
    unlock = Recorder()
    shell = tool.Process(50, 40, ("/bin/sh", "-c", "python tools/unlock_if_stale.py .venv/bin/snakemake"),
                         tmp_path.resolve())
    make = tool.Process(40, 1, ("make", "run"), tmp_path.resolve())
    script = tool.Process(60, 50, ("python", "tools/unlock_if_stale.py", ".venv/bin/snakemake"), tmp_path.resolve())
    assert tool.unlock_if_stale(tmp_path, [make, shell, script], unlock, own_pid=60, report=lambda _: None) == 0
    assert unlock.calls == [tmp_path]


def test_failed_unlock_is_reported(tmp_path: Path) -> None:
    fake_lock(tmp_path)
    messages: list[str] = []
    assert tool.unlock_if_stale(tmp_path, [], Recorder(status=3), report=messages.append) == 3
    assert "failed with status 3" in messages[-1]


@pytest.mark.parametrize(("argv", "expected"), [
    (("/venv/bin/python", "/venv/bin/snakemake", "--cores", "2"), True),
    (("snakemake", "-n"), True),
    (("python3", "-m", "snakemake", "--unlock"), True),
    (("/venv/bin/python", "/repo/.snakemake/scripts/tmpab12.meta_setting.py"), True),
    (("/bin/sh", "-c", "cd x && snakemake"), False),
    (("vim", "Snakefile"), False),
    (("python", "tools/unlock_if_stale.py", ".venv/bin/snakemake"), False),
])
def test_what_counts_as_snakemake(argv: tuple[str, ...], expected: bool) -> None:
    assert tool.is_snakemake(argv) is expected


@pytest.mark.skipif(not Path("/proc/self/cwd").exists(), reason="needs Linux /proc")
def test_a_real_process_is_found_in_its_directory(tmp_path: Path) -> None:
    """A process started as ``…/snakemake`` in the directory is seen through /proc; in another it is not."""
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    (fake_bin / "snakemake").write_text("import time\ntime.sleep(60)\n")
    workdir = tmp_path / "work"
    workdir.mkdir()
    process = subprocess.Popen([sys.executable, str(fake_bin / "snakemake"), "--cores", "1"], cwd=workdir)
    try:
        deadline = time.monotonic() + 10
        while True:
            found = [p.pid for p in tool.snakemake_processes(workdir, tool.running_processes())]
            if process.pid in found or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert process.pid in found
        assert process.pid not in [p.pid for p in tool.snakemake_processes(tmp_path, tool.running_processes())]
    finally:
        process.kill()
        process.wait()


@pytest.mark.skipif(not SNAKEMAKE.exists(), reason="needs the venv's snakemake")
def test_real_snakemake_unlock_clears_a_fake_lock(tmp_path: Path) -> None:
    """End to end on a copy of the workflow: the script runs ``snakemake --unlock``, which removes the lock."""
    workspace = make_workspace(tmp_path / "workflow", tiny_params())
    lock_dir = fake_lock(workspace)
    environment = {**os.environ, "PATH": f"{SNAKEMAKE.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "unlock_if_stale.py"), str(SNAKEMAKE)],
                            cwd=workspace, env=environment, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "was interrupted" in result.stdout
    assert not tool.lock_files(workspace)
    assert not lock_dir.exists() or not any(lock_dir.iterdir())
