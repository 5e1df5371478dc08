"""A rejection whose tests failed for want of a network says so: the tests ran without one, and their log shows
what a socket says then. Without such errors, or where the run had the host's network, nothing is added."""

from __future__ import annotations

import sys

import pytest

from repoanchor.evals.harness.env_spec import EnvSpec
from repoanchor.evals.harness.grading import run_command
from repoanchor.perturb.validation.isolation import NETWORK_NOTE, offline_hint, offline_unavailable


@pytest.mark.parametrize(
    ("log", "first", "count"),
    [
        ("E   OSError: [Errno 101] Network is unreachable\nFAILED t.py::test_get\n", "Network is unreachable", 1),
        (
            "urllib3.exceptions.NewConnectionError: Failed to establish a new connection: [Errno -3] Temporary "
            "failure in name resolution\n... [Errno -2] Name or service not known\n",
            "Temporary failure in name resolution",
            2,
        ),
        ("socket.gaierror: [Errno 11001] getaddrinfo failed\n", "getaddrinfo failed", 1),
        ("OSError: [Errno 113] No route to host\n" * 3, "No route to host", 3),
    ],
)
def test_network_errors_are_named_with_their_count(log, first, count):
    assert offline_hint(log) == (
        f"; its log shows {count} network error(s) (first: {first!r}): the tests ran without a network"
    )


@pytest.mark.parametrize(
    "log",
    [
        "FAILED t.py::test_sum - assert 3 == 4\n",
        "ConnectionRefusedError: [Errno 111] Connection refused\n",  # a local server's own failure
        f"{NETWORK_NOTE} (needs Linux)\nOSError: [Errno 101] Network is unreachable\n",  # the host's network was there
    ],
)
def test_other_failures_get_no_hint(log):
    assert offline_hint(log) == ""


@pytest.mark.skipif(offline_unavailable() is not None, reason="no private network namespace: the probe would leave")
def test_an_offline_run_of_a_test_that_needs_the_network_shows_the_hint(tmp_path):
    """A real offline run: connecting anywhere but loopback fails at once, in words the hint recognises."""
    probe = "import socket; socket.create_connection(('192.0.2.1', 80), timeout=5)"  # TEST-NET-1, never routed
    env = EnvSpec(provider="local", instance_id="probe", route="current")
    timed_out, log = run_command(f'{sys.executable} -c "{probe}"', tmp_path, env, timeout=60, offline=True)
    assert not timed_out
    assert "Network is unreachable" in log
    assert offline_hint(log).startswith("; its log shows 1 network error(s) (first: 'Network is unreachable')")
