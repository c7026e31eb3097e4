"""neuroneval.process_pool: calls run inline or in spawned single-threaded workers give the same results."""

from __future__ import annotations

import math
import os

from neuroneval.process_pool import THREAD_VARIABLES, completed_calls, main_file_hidden, single_threaded_children


def test_inline_and_pooled_calls_give_every_result_once() -> None:
    calls = [(value,) for value in range(6)]
    inline = list(completed_calls(math.factorial, calls, 1))
    assert inline == [(index, math.factorial(index)) for index in range(6)]
    assert sorted(completed_calls(math.factorial, calls, 2)) == inline


def test_workarounds_restore_the_parent_process() -> None:
    before = {name: os.environ.get(name) for name in THREAD_VARIABLES}
    with single_threaded_children():
        assert all(os.environ[name] == "1" for name in THREAD_VARIABLES)
    assert {name: os.environ.get(name) for name in THREAD_VARIABLES} == before
    import __main__

    path = getattr(__main__, "__file__", None)
    with main_file_hidden():
        assert not hasattr(__main__, "__file__")
    assert getattr(__main__, "__file__", None) == path
