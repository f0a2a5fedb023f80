"""CI runs the README: the README's install line and its two commands are, word for word, the lines of
`.ci/run`'s README stage, which runs them in a clean copy without the data mirror, before the mirrored
build of the ci config, and is where CI runs the whole suite (the files that skip without JAX run again
where the extras are installed)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BEGIN, END = "# README: begin", "# README: end"


def command(line: str) -> str:
    """A shell line without its trailing comment and surrounding blanks."""
    return re.sub(r"\s+#.*$", "", line).strip()


def readme_lines(readme: str) -> list[str]:
    """The commands of the README's install block: its first ```bash block under "## Install"."""
    section = readme.split("\n## Install\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert block is not None, "the README's Install section has no ```bash block"
    return [command(line) for line in block.group(1).splitlines() if command(line)]


def ci_lines(ci: str) -> list[str]:
    """The commands of `.ci/run`'s README stage, between its markers, less CI's own checks (`# ci: ...`)."""
    assert ci.count(BEGIN) == ci.count(END) == 1, f".ci/run needs one '{BEGIN}' ... '{END}' stage"
    stage = ci.split(BEGIN, 1)[1].split(END, 1)[0]
    return [command(line) for line in stage.splitlines() if command(line) and "# ci:" not in line]


def test_ci_runs_the_readmes_install_line_and_two_commands_word_for_word() -> None:
    readme, ci = (ROOT / "README.md").read_text(), (ROOT / ".ci/run").read_text()
    lines = readme_lines(readme)
    assert lines == ci_lines(ci)
    install, main_job, tests = lines
    assert install.startswith("python3 -m venv ") and "export PATH=" in install  # uv ends up on PATH
    assert (main_job, tests) == ("uv run snakemake --cores 2", "uv run pytest")
    # the comparison catches a change on either side
    assert readme_lines(
        readme.replace("uv run snakemake --cores 2", "uv run snakemake --cores 8")
    ) != ci_lines(ci)
    assert ci_lines(ci.replace("uv run pytest\n", "uv run pytest -x\n")) != lines


def test_the_readme_stage_runs_without_the_mirror_before_the_mirrored_build_and_runs_the_whole_suite() -> (
    None
):
    ci = (ROOT / ".ci/run").read_text()
    before, stage = ci.split(BEGIN, 1)[0], ci.split(BEGIN, 1)[1].split(END, 1)[0]
    subshell = before[before.rindex("(\n") :]
    assert "unset DPDL_DATA_MIRROR" in subshell and 'export HOME="$readme/home"' in subshell
    assert ci.index(END) < ci.index("uv run snakemake --cores 2 --configfile config/ci.yaml")
    runs = [command(line) for line in ci.splitlines() if command(line).startswith("uv run pytest")]
    assert (
        "uv run pytest" in stage and runs[0] == "uv run pytest"
    )  # the whole suite once, in the README stage
    # then only the files that skip in the README's lean environment (no JAX), where the extras are installed
    assert runs[1:] == ["uv run pytest $(grep -rl 'importorskip(\"jax\")' tests | sort)"]
    assert "--all-extras" in ci[: ci.index(BEGIN)]
