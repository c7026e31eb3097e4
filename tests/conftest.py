"""Test-session wiring shared by every test package."""

from __future__ import annotations

from typing import Any

import pytest

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
