"""Test-session wiring shared by every test package."""

from __future__ import annotations

import os
from typing import Any

import pytest

# Two xdist workers share two cores: OpenMP threads of torch (and of the tiny build's two-thread jobs) that wait
# must sleep, not spin, or they starve the other worker (4x slower training, docs/design.md §7). Set before any
# test imports torch; the builds the tests run inherit it.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

#: Fixture whose tests read the shared tiny build of the workflow, and the marker they get: ``-m "not tiny_build"``
#: leaves out every test that needs it (the build alone takes minutes on two cores).
TINY_BUILD_FIXTURE = "built_workspace"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test that uses the shared tiny build ``tiny_build`` (and ``slow``), wherever it is defined."""
    for item in items:
        if TINY_BUILD_FIXTURE in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.tiny_build)
            item.add_marker(pytest.mark.slow)


#: Directories whose test files run on one worker: tests/workflow shares one tiny build of the workflow
#: (``tests.workflow.conftest.built_workspace``), built once per worker that runs its tests.
SHARED_SCOPES = ("tests/workflow/",)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` with the files under :data:`SHARED_SCOPES` kept together on one worker."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class FileOrSharedScopeScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return next((scope for scope in SHARED_SCOPES if path.startswith(scope)), path)

    return FileOrSharedScopeScheduling(config, log)
