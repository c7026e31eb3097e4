"""A DVC remote over SSH against a real OpenSSH server on 127.0.0.1: push a tiny build, clone the git repository,
``make pull``'s command, and every pulled file is byte-identical, with Snakemake's records, as in
tests/workflow/test_dvc.py's round trip through a local folder."""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from neuroneval.pipeline import share
from tests.workflow.conftest import ROOT, run_tool
from tests.workflow.test_dvc import GIT_IDENTITY, content_hashes

pytestmark = pytest.mark.cluster

SSHD = Path("/usr/sbin/sshd")
#: Stages the local build of Table 4 completes (`tables` also holds settings Table 4 does not read); pushed, pulled.
PUSHED = ["worlds", "models"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"sshd exited ({process.returncode}): {process.stderr.read()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"sshd did not listen on 127.0.0.1:{port} within {timeout:.0f} s")


@pytest.fixture
def ssh_server(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """OpenSSH's sshd on 127.0.0.1 on a free port, with a throw-away host key and a throw-away client key allowed
    to log in as root (the user running the tests); yields the port and the client's private key file."""
    if not SSHD.exists():
        pytest.skip(f"{SSHD} missing: `make test-cluster` installs Debian's openssh-server")
    if os.geteuid() != 0:
        pytest.skip("sshd runs as root here (it logs the test user in as root); run as root")
    if importlib.util.find_spec("dvc_ssh") is None:
        pytest.skip("dvc-ssh missing: pip install -c constraints.txt -e '.[ssh]' (make test-cluster does)")
    keys = tmp_path / "ssh"
    keys.mkdir(mode=0o700)
    for name in ("host_key", "client_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"neuroneval-test-{name}",
                        "-f", str(keys / name)], check=True)
    shutil.copy(keys / "client_key.pub", keys / "authorized_keys")
    port = free_port()
    config = keys / "sshd_config"
    config.write_text(
        f"ListenAddress 127.0.0.1\nPort {port}\nHostKey {keys / 'host_key'}\nPidFile {keys / 'sshd.pid'}\n"
        f"AuthorizedKeysFile {keys / 'authorized_keys'}\nPermitRootLogin prohibit-password\n"
        "PubkeyAuthentication yes\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
        "StrictModes no\nSubsystem sftp internal-sftp\nLogLevel VERBOSE\n")
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege-separation directory
    process = subprocess.Popen([str(SSHD), "-D", "-e", "-f", str(config)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    try:
        wait_for_port(port, process)
        yield port, keys / "client_key"
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_ssh_remote_push_clone_pull_round_trip(ssh_server: tuple[int, Path], local_build: Path,
                                               tmp_path: Path) -> None:
    port, keyfile = ssh_server
    storage = tmp_path / "ssh-storage"
    storage.mkdir()
    url = f"ssh://root@127.0.0.1:{port}{storage}"

    workspace = tmp_path / "repo"
    shutil.copytree(local_build, workspace, symlinks=True)
    shutil.copy2(ROOT / ".gitignore", workspace / ".gitignore")
    run_tool(["git", "init", "-q"], workspace)
    run_tool(["dvc", "init", "-q"], workspace)
    run_tool(["dvc", "config", "core.analytics", "false"], workspace)
    # the URL is shared through git; the key is each user's own (.dvc/config.local, not committed)
    run_tool(["dvc", "remote", "add", "-d", "sshtest", url], workspace)
    run_tool(["dvc", "remote", "modify", "--local", "sshtest", "keyfile", str(keyfile)], workspace)
    # the copied build is current: each stage's Snakemake finds nothing to do, DVC records and caches the outputs
    repro = run_tool(["dvc", "repro", *PUSHED], workspace)
    assert (repro.stdout + repro.stderr).count("Nothing to be done") == len(PUSHED), repro.stdout
    pushed = run_tool(["dvc", "push", *PUSHED], workspace)
    stored = [path for path in storage.rglob("*") if path.is_file()]
    assert stored, f"nothing arrived in {storage} over SSH: {pushed.stdout}"
    run_tool(["git", "add", "-A"], workspace)
    run_tool(["git", "commit", "-q", "-m", "tiny build"], workspace, env=GIT_IDENTITY)
    assert "keyfile" not in run_tool(["git", "show", "HEAD:.dvc/config"], workspace).stdout

    clone = tmp_path / "clone"
    run_tool(["git", "clone", "-q", str(workspace), str(clone)], tmp_path)
    assert not (clone / "data").exists() and not (clone / ".snakemake").exists()
    run_tool(["dvc", "remote", "modify", "--local", "sshtest", "keyfile", str(keyfile)], clone)
    pulled = run_tool(["python", "-m", "neuroneval.pipeline.share", "pull"], clone)
    assert f"pulled stages: {', '.join(PUSHED)}" in pulled.stdout, pulled.stdout

    stages = share.stages(workspace / "dvc.yaml")
    outputs = [output for stage in PUSHED for output in share.stage_outputs(stages[stage])]
    before = {name: digest for name, digest in content_hashes(workspace).items()
              if any(name == output or name.startswith(output.rstrip("/") + "/") for output in outputs)}
    after = content_hashes(clone)
    assert before and after == before
    targets = [target for stage in PUSHED for target in share.stage_targets(stages[stage])]
    assert "Nothing to be done" in run_tool(["snakemake", "-n", *targets], clone).stdout
    assert content_hashes(clone) == after  # pulling and touching changed no byte
    print(f"\nSSH remote {url}: {len(stored)} objects pushed; {len(after)} files pulled into a fresh clone, "
          f"md5 equal to the pushing tree's ({len(pulled.stdout.splitlines())} lines of pull report: "
          f"{pulled.stdout.splitlines()[0]})")
