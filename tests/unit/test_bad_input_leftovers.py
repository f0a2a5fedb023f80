"""#36, defect class 6: smaller holes.

A number Snakemake's ``--config`` passed as text, an alias bomb under an unknown key, a manifest config
edited after publication, ``compare --under`` a path in neither build, a file an interrupted write left,
a truncated run.

Each case here failed on the code before its fix (the closing note of #36 shows it); a case that needs a
finished build lives beside it:
tests/workflow/test_dzoa_workflow.py: stray entries at the top of a published snapshot.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_compare import _build
from test_config import SCHEMA, minimal, one_line_error
from test_runs import provenance, trace

from dpdl.check import leftover_problems
from dpdl.cli import main
from dpdl.errors import ArtifactError
from dpdl.paths import PUBLISHED
from dpdl.publishing.problems import published_problems
from dpdl.runs import execute, read_run, write_run
from dpdl.validation import set_dotted


def test_a_number_given_as_text_names_snakemakes_config_option() -> None:
    """#36, case 6: ``--config 'wddp={"seeds": 3}'`` reaches the config as ``{"seeds": "3"}``; the message says why."""
    message = one_line_error(set_dotted(minimal(), "wddp.seeds", "3"))
    assert (
        "wddp.seeds: '3' is not of type 'integer' (text that reads as a number: quoted in a config file"
        in message
    )
    assert "Snakemake's --config passes as text" in message  # both ways a number arrives as text (issue 61)
    assert "Snakemake" not in one_line_error(set_dotted(minimal(), "wddp.aggregation", "loud"))


def test_an_alias_bomb_is_rejected_without_expanding_it(tmp_path: Path) -> None:
    """#36, case 6: nine levels of ten aliases (1e9 values once expanded) under an unknown key.

    The aliases are counted without expanding them, so the error comes at once; walking the expanded tree would not
    end within the timeout.
    """
    lines = ["studies: [wddp]", "bomb:", "  l0: &l0 [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"]
    lines += [f"  l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, 9)]
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("\n".join(lines) + "\n")
    code = f"from dpdl.config import load_config; load_config({str(bomb)!r}, {str(SCHEMA)!r})"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    # refused for its aliases before its keys are checked (issue 61 item 7)
    assert "ConfigError: " in done.stderr and "YAML aliases (*name) expand it to" in done.stderr


def test_a_manifest_config_edited_after_publication_is_named(at_root: Path, tmp_path: Path) -> None:
    """#36, case 6: a manifest's config is compared with its configfile at the commit it records."""
    from dpdl.publishing.merged import write_merged

    copy = tmp_path / "published"  # dzoa's snapshot alone, its merged files written from it
    shutil.copytree(PUBLISHED / "dzoa", copy / "dzoa")
    write_merged(copy)
    manifest = json.loads((copy / "dzoa" / "MANIFEST.json").read_text())
    commit = manifest["code"]["commit"][:12]
    manifest["config"]["dzoa"]["outer_iterations"] = 20  # config/paper.yaml sets 200 at that commit
    manifest["config"]["dzoa"]["epsilons"] = [0.15, 0.9]
    (copy / "dzoa" / "MANIFEST.json").write_text(json.dumps(manifest))
    problems = published_problems(copy)
    assert problems[:2] == [
        f"{copy / 'dzoa' / 'MANIFEST.json'}: config dzoa.{key} is {edited}, but config/paper.yaml at {commit} sets "
        f"{committed}; publish again with `dpdl publish`"
        for key, edited, committed in (("epsilons", [0.15, 0.9], [0.15, 0.95]), ("outer_iterations", 20, 200))
    ]
    # and its claims are not judged again under a config its schema refuses (issue 61 item 3)
    assert len(problems) == 3 and problems[2].startswith(
        f"{copy / 'dzoa'}: its claims cannot be judged again (Config"
    )


def test_an_under_path_in_neither_build_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """#36, case 6: a typo in --under compared nothing and exited 0."""
    a = _build(tmp_path / "a", trace=np.arange(3.0), seconds=1.0, table="x,y\n1,2\n")
    b = _build(tmp_path / "b", trace=np.arange(3.0), seconds=1.0, table="x,y\n1,2\n")
    assert main(["compare", str(a), str(b), "--under", "results", "resluts"]) == 1
    assert "--under resluts: in neither build" in capsys.readouterr().err
    assert main(["compare", str(a), str(b), "--under", "results"]) == 0


def test_a_file_left_by_an_interrupted_write_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kill -9 inside ``save_npz`` left ``seed0.npz.part-<random>`` that nothing removed or reported."""
    monkeypatch.chdir(tmp_path)
    left = Path("results/wddp/runs/kdd/seed0.npz.part-1a2b3c")
    left.parent.mkdir(parents=True)
    left.write_bytes(b"PK")
    assert leftover_problems() == [
        f"{left}: left by an interrupted write; delete it (the build writes the file again)"
    ]


def test_a_truncated_run_is_named_with_its_fix(tmp_path: Path) -> None:
    """#36, case 6: a run cut short (a full disk, a copy interrupted) says what to do, not only what is wrong."""
    path = tmp_path / "seed0.npz"
    write_run(path, execute(trace, provenance(seed=0), iterations=3))
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    message = (
        f"{path}: not an .npz archive (not a zip file; truncated, or another format); delete it and rerun: "
    )
    with pytest.raises(ArtifactError, match=re.escape(message + "Snakemake writes a missing file again")):
        read_run(path)
