"""Fuzzing the config validation with mutations of config/ci.yaml.

Every mutation is either rejected by :func:`dpdl.config.load_config` with a ConfigError of one line
that names the key (or the file and line), or listed in ``VALID`` with the reason it is fine. A
few mutations also go through a real ``snakemake -n`` in a copy of the project, to show that the
user sees that one line, no traceback, and no planned job.
"""

from __future__ import annotations

import copy
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dpdl import schemas
from dpdl.config import load_config
from dpdl.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = schemas.CONFIG
CI_TEXT = (ROOT / "config" / "ci.yaml").read_text(encoding="utf-8")
CI = yaml.safe_load(CI_TEXT)
NAN, INF = float("nan"), float("inf")


def with_values(**values: object) -> str:
    """config/ci.yaml with dotted keys (``__`` for ``.``) set to values, as YAML text."""
    config = copy.deepcopy(CI)
    for dotted, value in values.items():
        *parents, last = dotted.split("__")
        target = config
        for key in parents:
            target = target.setdefault(key, {})
        target[last] = value
    return yaml.safe_dump(config, sort_keys=False)


def without(*path: str) -> str:
    """config/ci.yaml without one key, as YAML text."""
    config = copy.deepcopy(CI)
    target = config
    for key in path[:-1]:
        target = target[key]
    del target[path[-1]]
    return yaml.safe_dump(config, sort_keys=False)


def edited(old: str, new: str) -> str:
    """config/ci.yaml's own text with the first ``old`` replaced by ``new``."""
    assert old in CI_TEXT, old
    return CI_TEXT.replace(old, new, 1)


def key(dotted: str) -> str:
    """The regex of an error about ``dotted`` (``a.b[0]`` as the messages write it)."""
    return "^(invalid configuration: )?" + re.escape(dotted) + r"(\[\d+\])?: "


# Generated: every key of a family with every bad value of the family, each rejected naming the key.
POSITIVE_NUMBERS = (
    "wddp.delta",
    "dzoa.rho",
    "dp_iadmm.outp_plus_factor",
    "data.lasso.noise_variance",
    "dvp_pvp.rho_selection.alpha",
    "wddp.eq3_constant",
)
NOT_POSITIVE = {
    "nan": NAN,
    "inf": INF,
    "minus_inf": -INF,
    "zero": 0,
    "negative": -1.5,
    "text": "0.1",
    "list": [0.1],
}
COUNTS = ("wddp.seeds", "dvp_pvp.iterations", "dp_iadmm.long_seeds", "dzoa.directions", "data.lasso.trials")
NOT_COUNTS = {
    "zero": 0,
    "negative": -3,
    "fraction": 2.5,
    "float": 2.0,
    "text": "3",
    "bool": True,
    "huge": 10**9,
}
GRIDS = ("wddp.epsilons", "dzoa.epsilons", "dp_iadmm.curve_epsilons", "dvp_pvp.alphas", "dzoa.deltas")
NOT_GRIDS = {
    "empty": [],
    "nan": [NAN],
    "inf": [0.001, INF],
    "negative": [-0.1],
    "repeated": [0.005, 0.005],
    "scalar": 0.1,
}
GENERATED = {
    f"{name}-{dotted}": (with_values(**{dotted.replace(".", "__"): value}), key(dotted))
    for keys, values in ((POSITIVE_NUMBERS, NOT_POSITIVE), (COUNTS, NOT_COUNTS), (GRIDS, NOT_GRIDS))
    for dotted in keys
    for name, value in values.items()
}

# Written by hand: the mutation and the regex its one-line error must match.
WRITTEN = {
    # unknown, missing and misshapen keys
    "unknown_top_key": (with_values(typo=1), r"\(top level\): Additional properties .*'typo' was unexpected"),
    "unknown_study_key": (
        with_values(wddp__epsilon=[0.1]),
        r"wddp: Additional properties .*'epsilon' was unexpected",
    ),
    "unknown_data_key": (
        with_values(data__kdd__rows=10),
        r"data\.kdd: Additional properties .*'rows' was unexpected",
    ),
    "unknown_nested_key": (with_values(dvp_pvp__rho={"dvp": 1, "x": 2}), r"dvp_pvp\.rho: "),
    "section_not_a_mapping": (with_values(wddp=5), key("wddp") + "5 is not of type 'object'"),
    "studies_not_a_list": (with_values(studies="dzoa"), key("studies") + "'dzoa' is not of type 'array'"),
    "unknown_study": (with_values(studies=["dpsgd"]), key("studies") + "'dpsgd' is not one of"),
    "no_study": (with_values(studies=[]), key("studies") + r"\[\] should be non-empty"),
    "readings_not_boolean": (with_values(readings="yes"), key("readings") + "'yes' is not of type 'boolean'"),
    "list_file": ("- 1\n- 2\n", r"mutated\.yaml: a config file holds a mapping of keys .*not a list"),
    "bad_switch": (with_values(wddp__aggregation="both"), key("wddp.aggregation") + "'both' is not one of"),
    "bad_lasso_step": (
        with_values(data__lasso__row_norm="l2"),
        key("data.lasso.row_norm") + "'l2' is not one of",
    ),
    "null_mirror_type": (
        with_values(data__mirror=5),
        key("data.mirror") + "5 is not of type 'string', 'null'",
    ),
    # out of range
    "delta_one": (
        with_values(wddp__delta=1.0),
        key("wddp.delta") + "1.0 is greater than or equal to the maximum",
    ),
    "dzoa_delta_above_tail_bound": (with_values(dzoa__deltas=[0.05]), key("dzoa.deltas") + "0.05 is greater"),
    "dzoa_epsilon_above_one": (with_values(dzoa__epsilons=[1.5]), key("dzoa.epsilons") + "1.5 is greater"),
    "shard_36": (with_values(data__femnist__shards=[36]), key("data.femnist.shards")),
    "kdd_sample_above_file": (with_values(data__kdd__sample_size=500000), key("data.kdd.sample_size")),
    "unevenness_51": (with_values(wddp__unevenness=[51]), key("wddp.unevenness") + "51 is greater"),
    "dvp_pvp_26_agents": (with_values(dvp_pvp__agents=26), key("dvp_pvp.agents") + "26 is greater"),
    "more_agents_than_mnist_rows": (with_values(dp_iadmm__mnist_agents=100000), key("dp_iadmm.mnist_agents")),
    "outer_iterations_1e12": (with_values(dzoa__outer_iterations=10**12), key("dzoa.outer_iterations")),
    "hundred_million_seeds": (
        with_values(wddp__seeds=100_000_000),
        key("wddp.seeds") + "100000000 is greater",
    ),
    "tuning_folds_one": (
        with_values(wddp__tuning__folds=1),
        key("wddp.tuning.folds") + "1 is less than the minimum",
    ),
    "rho_exponent_below_grid": (
        with_values(dvp_pvp__rho_selection__exponents=[-16]),
        key("dvp_pvp.rho_selection.exponents") + "-16 is less than the minimum",
    ),
    "nan_in_mapping": (
        with_values(dvp_pvp__c_r={"nonprivate": 1750, "dvp": NAN, "pvp": 146}),
        key("dvp_pvp.c_r.dvp"),
    ),
    # inconsistent keys
    "trace_points_above_iterations": (
        with_values(wddp__trace_points=41),
        r"^wddp\.trace_points \(41\) must not exceed",
    ),
    "log_every_above_iterations": (
        with_values(dp_iadmm__log_every=11),
        r"^dp_iadmm\.log_every \(11\) must not",
    ),
    "long_log_every_above": (with_values(dp_iadmm__long_log_every=11), r"^dp_iadmm\.long_log_every \(11\)"),
    "long_horizon_short": (
        with_values(dp_iadmm__long_iterations=5, dp_iadmm__long_log_every=1),
        r"^dp_iadmm\.long_iterations \(5\) must not be below",
    ),
    "dzoa_total_epsilon_100": (with_values(dzoa__epsilon_totals=[100]), r"^dzoa\.epsilon_totals: 100 gives"),
    "dzoa_short_run_total": (with_values(dzoa__outer_iterations=10), r"^dzoa\.epsilon_totals: 6 gives"),
    "dzoa_no_evaluation_trial": (
        with_values(dzoa__tuning_trials=4),
        r"^dzoa\.tuning_trials \(4\) must be smaller",
    ),
    "dzoa_too_few_agents": (with_values(data__lasso__agents=3), r"^dzoa\.topology: .*data\.lasso\.agents"),
    "dzoa_label_clash": (
        with_values(dzoa__epsilons=[0.15, 0.1500000001]),
        r"^dzoa grid points .* share the label",
    ),
    "dvp_pvp_late_tradeoff": (
        with_values(dvp_pvp__tradeoff_iterations=[2, 16]),
        r"^dvp_pvp\.tradeoff_iterations",
    ),
    "dvp_pvp_late_mer": (with_values(dvp_pvp__mer_iteration=16), r"^dvp_pvp\.mer_iteration \(16\) exceeds"),
    "kdd_no_test_rows": (
        with_values(data__kdd__train_size=70000),
        r"^data\.kdd\.train_size \(70000\) must be smaller",
    ),
    # repeated keys (Snakemake's loader, like PyYAML's, would keep the last silently)
    "duplicate_top_key": (
        CI_TEXT + "readings: true\n",
        r"line 57: duplicate key 'readings' \(first on line 4\)",
    ),
    "duplicate_section": (
        CI_TEXT + "wddp:\n  seeds: 3\n",
        r"line 57: duplicate key 'wddp' \(first on line 24\)",
    ),
    "duplicate_nested_key": (
        edited("  iterations: 40\n", "  iterations: 40\n  iterations: 400\n"),
        "'iterations'",
    ),
    "duplicate_flow_key": (
        edited("seed: 0}", "seed: 0, seed: 1}"),
        r"line 9: duplicate key 'seed' \(first on line 9\)",
    ),
    # YAML syntax errors
    "unclosed_list": (
        edited("epsilons: [0.01, 0.25]", "epsilons: [0.01, 0.25"),
        r"line \d+: not valid YAML: ",
    ),
    "unclosed_quote": (edited("mirror: null", 'mirror: "../shared'), r"line \d+: not valid YAML: "),
    "tab_indent": (edited("  delta: 0.001\n", "\tdelta: 0.001\n"), r"line 26: not valid YAML: .*'\\t'"),
    "deeper_indent": (edited("  delta: 0.001\n", "    delta: 0.001\n"), r"line 26: not valid YAML: "),
    "two_colons": (edited("  seeds: 2\n", "  seeds: 2: 3\n"), r"line 17: not valid YAML: "),
    "bell_character": (edited("seed: 0}", "seed: 0\x07}"), r"not valid YAML: unacceptable character"),
}
REJECTED = GENERATED | WRITTEN

# Mutations that are valid, each with the reason.
VALID = {
    "zero_init_std": (
        with_values(wddp__init_std=0),
        "theta_0 = 0 is a legitimate start (the minimum is inclusive)",
    ),
    "trace_every_round": (with_values(wddp__trace_points=40), "trace_points = iterations logs every round"),
    "seeds_at_bound": (with_values(wddp__seeds=1000), "the bound itself is allowed"),
    "large_epsilon": (
        with_values(wddp__epsilons=[0.01, 1000]),
        "a nearly non-private point of a privacy curve",
    ),
    "log_every_is_horizon": (with_values(dp_iadmm__log_every=10), "the trace holds t = 1 and T only"),
    "dzoa_total_at_limit": (
        with_values(dzoa__epsilon_totals=[13.5]),
        "13.5 / 13.58 gives a per-iteration 0.994",
    ),
    "disabled_study": (
        with_values(studies=["wddp"], dzoa__tuning_trials=4),
        "dzoa is off: its runs are never planned, so its relations are not checked (its schema still is)",
    ),
    "omitted_key": (
        without("dzoa", "inner_iterations"),
        "an omitted key takes config/config.yaml's value (the schema's default where that leaves it out too)",
    ),
    "missing_section": (
        without("wddp"),
        "a section the file leaves out is config/config.yaml's (Snakemake's merge)",
    ),
    "empty_file": ("", "an empty file leaves config/config.yaml as it is, as a build with it does"),
    "merge_key": (
        edited("dvp_pvp:\n", "dvp_pvp:\n  <<: {agents: 5, seeds: 3}\n"),
        "a YAML merge key's values are meant to be overridden; it is not a repeated key",
    ),
    "few_femnist_shards": (with_values(data__femnist__shards=[0, 35]), "any of LEAF's shards 0..35"),
}


def check(tmp_path: Path, text: str) -> dict:
    path = tmp_path / "mutated.yaml"
    path.write_text(text, encoding="utf-8")
    return load_config(path, SCHEMA)


@pytest.mark.parametrize(("text", "expected"), REJECTED.values(), ids=REJECTED.keys())
def test_a_bad_mutation_is_rejected_with_one_line_naming_its_key(
    tmp_path: Path, text: str, expected: str
) -> None:
    with pytest.raises(ConfigError) as caught:  # any other exception fails the test with its traceback
        check(tmp_path, text)
    message = str(caught.value)
    assert "\n" not in message and re.search(
        expected, message.removeprefix(f"{tmp_path / 'mutated.yaml'} ")
    ), message


@pytest.mark.parametrize(("text", "reason"), VALID.values(), ids=VALID.keys())
def test_a_valid_mutation_is_accepted(tmp_path: Path, text: str, reason: str) -> None:
    assert check(tmp_path, text)["studies"]


def test_the_table_is_large_enough() -> None:
    assert len(REJECTED) + len(VALID) >= 60


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the project for Snakemake (its own src first on the path)."""
    work = tmp_path_factory.mktemp("config_fuzz") / "project"
    work.mkdir()
    for name in ("Snakefile", "environment.yml", "pyproject.toml"):
        shutil.copy(ROOT / name, work / name)
    for name in ("workflow", "config", "src"):
        shutil.copytree(ROOT / name, work / name, ignore=shutil.ignore_patterns("__pycache__"))
    (work / "profiles").symlink_to("workflow/profiles")
    return work


END_TO_END = {
    "nan": (
        with_values(wddp__epsilons=[NAN]),
        r"ConfigError: wddp\.epsilons\[0\]: nan is not a finite number",
    ),
    "duplicate": (
        "wddp:\n  seeds: 2\n  seeds: 3\n",
        r"ConfigError: \S*config/bad\.yaml line 3: duplicate key 'seeds'",
    ),
}


@pytest.mark.parametrize(("text", "line"), END_TO_END.values(), ids=END_TO_END.keys())
def test_snakemake_prints_the_one_line_and_plans_nothing(project: Path, text: str, line: str) -> None:
    (project / "config" / "bad.yaml").write_text(text, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(project / "src")}
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--configfile", "config/bad.yaml"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    errors = [row for row in (done.stdout + done.stderr).splitlines() if "Error" in row or "File " in row]
    assert len(errors) == 1 and re.match(line, errors[0]), done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "Job stats" not in done.stdout
