"""#36, defect class 3: a wrong mirror is not an error.

`data.mirror` or `DPDL_DATA_MIRROR` naming a missing folder or a file skipped datasets as "the mirror lacks
them"; a mirror that is set must be a folder.

Each case here failed on the code before its fix (the closing note of #36 shows it); a case that needs a
finished build lives beside it:
tests/unit/test_readings.py: a reading's nested build gets the mirror as an absolute path.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dpdl.data import fetch as fetch_module
from dpdl.data.fetch import MIRROR_ENV
from dpdl.errors import ConfigError


@pytest.mark.parametrize("where", ["missing", "file"])
def test_a_mirror_that_is_not_a_folder_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """A typo in the mirror reads as an error naming it, not as "the mirror lacks them" (#36, case 3)."""
    wrong = tmp_path / "typo"
    if where == "file":
        wrong.write_text("not a folder")
    with pytest.raises(ConfigError, match=r"^data\.mirror is '.*typo', which is not a folder"):
        fetch_module.mirror_from(wrong)
    monkeypatch.setenv(MIRROR_ENV, str(wrong))
    with pytest.raises(ConfigError, match=rf"^{MIRROR_ENV} is '.*typo', which is not a folder"):
        fetch_module.mirror_from(None)
