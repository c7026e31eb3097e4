"""The offline guard of conftest.py is in force: a connection attempt fails the test instead of downloading."""

import os
import socket

import pytest


def test_network_connections_are_refused() -> None:
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    with pytest.raises(AssertionError, match="network connection"):
        socket.create_connection(("huggingface.co", 443), timeout=1)
    with socket.socket() as raw, pytest.raises(AssertionError, match="network connection"):
        raw.connect(("127.0.0.1", 9))
