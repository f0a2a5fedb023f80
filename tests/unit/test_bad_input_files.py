"""#36, defect class 5: file-system errors escape as tracebacks.

A folder or an unreadable file where a file is expected, a self-referencing YAML alias, a deleted merged
scorecard: each is one line naming the path. (A folder given to ``snakemake --configfile`` fails inside
Snakemake's own command line, before the workflow runs; dpdl cannot reach it.)

Each case here failed on the code before its fix (the closing note of #36 shows it).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_cli_bad_input import assert_one_clear_line
from test_config import SCHEMA

from dpdl.config import load_config
from dpdl.errors import ConfigError
from dpdl.paths import PUBLISHED
from dpdl.publishing.problems import published_problems


def test_a_folder_as_config_file_is_one_line(tmp_path: Path) -> None:
    """#36, case 5: a folder (or an unreadable file) is named, not an IsADirectoryError traceback."""
    with pytest.raises(
        ConfigError, match=r"^config file .* cannot be read \(Is a directory\); give a readable YAML"
    ):
        load_config(tmp_path, SCHEMA)


def test_an_alias_that_holds_itself_is_one_line(tmp_path: Path) -> None:
    """#36, case 5: ``epsilons: &r [0.15, *r]`` was 990 lines of RecursionError."""
    looped = tmp_path / "looped.yaml"
    looped.write_text("studies: [wddp]\nwddp:\n  epsilons: &r [0.15, *r]\n")
    with pytest.raises(
        ConfigError, match=r"looped\.yaml: wddp\.epsilons\[1\] is an alias of the list or mapping"
    ):
        load_config(looped, SCHEMA)


def test_a_folder_as_configfile_of_a_command_is_one_line(prepared, capsys, stderr_logging) -> None:
    """``dpdl status`` (as ``fetch``, ``availability`` and ``check``) given a folder as --configfile."""
    assert "cannot be read (Is a directory)" in assert_one_clear_line(
        ["status", "--configfile", prepared["folder"]], capsys
    )


def test_a_deleted_merged_scorecard_is_named_not_a_traceback(at_root: Path, tmp_path: Path) -> None:
    """#36, case 5: a snapshot without its scorecard.csv was a 35-line traceback in ``dpdl check``."""
    from dpdl.publishing.merged import write_merged

    copy = tmp_path / "published"  # wddp's snapshot alone, its merged files written from it
    shutil.copytree(PUBLISHED / "wddp", copy / "wddp")
    write_merged(copy)
    (copy / "scorecard.csv").unlink()
    assert published_problems(copy) == [
        f"{copy / 'scorecard.csv'}: missing or not what its study folders give; rewrite it with `dpdl publish`"
    ]
