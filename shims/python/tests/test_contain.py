"""contain=: what sup ends with the child."""

from __future__ import annotations

import os
import signal

import pytest

import sup

from conftest import cap, pid_gone, wait_until


def test_auto_contains_a_grandchild_that_left_the_group() -> None:
    # setsid: the grandchild leaves the child's process group
    r = cap(["sh", "-c", "setsid sleep 30 & echo $!"], contain="auto")
    grandchild = int(r.stdout)
    try:
        if r.json["contained"] == "cgroup":
            assert r.json["leftovers_ended"] >= 1 and r.json["contain_fallback"] is None
            assert wait_until(lambda: pid_gone(grandchild), 5.0)
        else:  # no writable cgroup v2 here: group mode, and why
            assert isinstance(r.json["contain_fallback"], str) and r.json["contain_fallback"]
            assert r.json["leftovers_ended"] is None
    finally:
        if not pid_gone(grandchild):
            os.kill(grandchild, signal.SIGKILL)


def test_group_is_the_default_and_cgroup_says_why_it_cannot() -> None:
    assert cap(["true"]).json["contained"] == "group"
    try:
        r = cap(["true"], contain="cgroup")
    except OSError as e:  # no writable cgroup v2 hierarchy here
        assert e.errno == 95 and "contain" in str(e)
    else:
        assert r.json["contained"] == "cgroup"
    with pytest.raises(sup.SpecError, match="^cgroup_parent"):
        cap(["true"], contain="cgroup", cgroup_parent="relative/path")


def test_require_sentinel_and_what_dies_with_the_host() -> None:
    # A sentinel runs for the tests' host: nothing is refused, and every
    # result says the whole tree would end with this process.
    r = cap(["true"], require_sentinel=True)
    assert r.json["host_death"] == "tree"
    assert cap(["true"]).json["host_death"] == "tree"
