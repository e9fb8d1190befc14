"""One Status enum: every value the user guide documents, and the values the code writes are its members."""

import re
from pathlib import Path

from rlopt.status import Status

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide.md"


def test_the_guide_documents_every_status():
    section = GUIDE.read_text().split("**Statuses**", 1)[1].split("`--time-limit` covers", 1)[0]
    documented = set(re.findall(r"`([a-z_]+)`", section))
    assert {status.value for status in Status} <= documented


def test_a_status_is_its_string():
    assert Status.OPTIMAL == "optimal" and f"{Status.TIME_LIMIT}" == "time_limit"
    assert str(Status.INTERVAL) == "interval"
    assert Status.TIME_LIMIT.is_interval and not Status.OPTIMAL.is_interval
