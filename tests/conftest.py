import os
import signal

import numpy as np
import pandas as pd
import pytest

# the tests of unreachable schedulers wait 1 s, not the 10 s a user gets (rlopt.processes)
os.environ.setdefault("RLOPT_DASK_CONNECT_TIMEOUT", "1s")

# Ctrl-C as Python's default handles it, however the test run was started: a shell runs a
# background job (`pytest &`, `nohup`) with SIGINT ignored, Python keeps an ignored SIGINT,
# and the tests of Ctrl-C (and the runs they start, which inherit it) then never see one
signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def small_pair():
    """A 30-record original file and a noisy masked copy (3 attributes)."""
    rng = np.random.default_rng(7)
    original = pd.DataFrame(rng.normal(size=(30, 3)) * [1, 10, 100], columns=["a", "b", "c"])
    masked = original + rng.normal(scale=0.3, size=original.shape) * [1, 10, 100]
    return original, masked


@pytest.fixture(autouse=True)
def _foreign_highs_scheduler():
    """With ``RLOPT_TEST_HIGHS_SCHEDULER=N``, HiGHS's process-wide scheduler is started at
    ``N`` threads before each test, as code outside rlopt (or HiGHS's default on an
    ``2N``-core machine) would: every solve of the test must still work."""
    threads = os.environ.get("RLOPT_TEST_HIGHS_SCHEDULER")
    if threads:
        import highspy

        highspy.Highs.resetGlobalScheduler(True)
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", int(threads))
        h.addVar(0.0, 1.0)
        h.changeColsIntegrality(1, np.array([0], dtype=np.int32), np.array([highspy.HighsVarType.kInteger]))
        assert h.run() == highspy.HighsStatus.kOk
    yield
