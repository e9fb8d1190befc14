import numpy as np
import pandas as pd
import pytest


@pytest.fixture
def small_pair():
    """A 30-record original file and a noisy masked copy (3 attributes)."""
    rng = np.random.default_rng(7)
    original = pd.DataFrame(rng.normal(size=(30, 3)) * [1, 10, 100], columns=["a", "b", "c"])
    masked = original + rng.normal(scale=0.3, size=original.shape) * [1, 10, 100]
    return original, masked
