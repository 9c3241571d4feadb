"""The per-file time budget: where the alarm may land and where it must wait (indexgen.extract.runtime)."""

from __future__ import annotations

import time

import pytest
from indexgen.extract.runtime import OverBudget, available, shielded, time_budget

pytestmark = pytest.mark.skipif(not available(), reason="the budget needs SIGALRM in the main thread")


def test_expiry_inside_a_shield_is_raised_when_the_shield_is_left():
    reached_end_of_shield = False
    with pytest.raises(OverBudget):
        with time_budget(0.001):
            with shielded():
                time.sleep(0.05)  # the alarm interrupts the sleep; the handler must not raise
                reached_end_of_shield = True
    assert reached_end_of_shield


def test_shield_outside_a_budget_does_nothing():
    with shielded():
        time.sleep(0.002)


class _SlowFinalizer:
    def __del__(self):
        end = time.monotonic() + 0.05
        while time.monotonic() < end:  # the alarm lands here, where a raise is swallowed
            pass


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_raise_swallowed_by_a_finalizer_is_retried():
    with pytest.raises(OverBudget):
        with time_budget(0.001):
            _SlowFinalizer()  # dropped at once: __del__ runs while the budget expires
            for _ in range(2000):  # about 2 s of ordinary code for the retried alarm to land in
                time.sleep(0.001)
            pytest.fail("the budget expired inside a finalizer and never fired again")
