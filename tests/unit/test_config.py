"""The config schema: every shipped config is valid; bad values are rejected with the key named."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
import yaml

from dpdl import schemas
from dpdl.config import load_config, merge_over, validate_config
from dpdl.errors import ConfigError
from dpdl.validation import set_dotted

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = schemas.CONFIG
CONFIGS = sorted((ROOT / "config").glob("*.yaml"))


def minimal() -> dict:
    return yaml.safe_load((ROOT / "config" / "ci.yaml").read_text())


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_shipped_configs_are_valid(path: Path) -> None:
    config = load_config(path, SCHEMA)
    assert config["data"]["lasso"]["agents"] == 5  # defaults filled in


def key_paths(tree: dict, prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """Every key path of a nested mapping, leaves and inner keys alike."""
    paths = set()
    for key, value in tree.items():
        paths.add(prefix + (key,))
        if isinstance(value, dict):
            paths |= key_paths(value, prefix + (key,))
    return paths


def test_paper_config_sets_every_key_of_the_default_config() -> None:
    # Snakemake merges --configfile config/paper.yaml over config/config.yaml key by key, so a key
    # paper.yaml leaves out keeps config.yaml's reduced value, not the schema's paper-scale default.
    default, paper = (
        yaml.safe_load((ROOT / "config" / name).read_text()) for name in ("config.yaml", "paper.yaml")
    )
    assert key_paths(default) - key_paths(paper) == set()


@pytest.mark.parametrize(
    ("base", "update"),
    [
        ({"a": {"b": 1, "c": [1, 2]}, "d": 3}, {"a": {"c": [5]}, "e": {"f": 1}}),
        ({"a": {"b": {"c": 1, "d": 2}}}, {"a": {"b": {"d": 3}, "x": None}}),
        ({"a": 1}, {"a": {"b": 2}}),
        ({"a": {"b": 2}}, {"a": 1}),
    ],
)
def test_merge_is_snakemakes(base: dict, update: dict) -> None:
    from snakemake.utils import update_config

    expected = copy.deepcopy(base)
    update_config(expected, copy.deepcopy(update))
    assert merge_over(base, update) == expected


def test_a_key_the_file_leaves_out_is_config_yamls_as_the_build_takes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 61 item 1: the build merges --configfile over config/config.yaml; every dpdl command
    # reads the same, not the file alone with the schema's defaults
    (tmp_path / "config").mkdir()
    base = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    base["dp_iadmm"]["optimum_iterations"] = 77
    (tmp_path / "config" / "config.yaml").write_text(yaml.safe_dump(base))
    (tmp_path / "config" / "mine.yaml").write_text("wddp: {iterations: 40}\n")
    monkeypatch.chdir(tmp_path)
    config = load_config("config/mine.yaml", SCHEMA)
    assert config["dp_iadmm"]["optimum_iterations"] == 77 and config["wddp"]["iterations"] == 40
    assert config["dzoa"] == validate_config(base, SCHEMA)["dzoa"]
    assert load_config("config/config.yaml", SCHEMA)["dp_iadmm"]["optimum_iterations"] == 77


def test_defaults_fill_a_sparse_config() -> None:
    config = validate_config(
        {"studies": ["dzoa"], "data": {}, "dvp_pvp": {}, "wddp": {}, "dp_iadmm": {}, "dzoa": {}}, SCHEMA
    )
    assert config["data"]["kdd"] == {"sample_size": 70000, "train_size": 50000, "seed": 0}
    assert config["data"]["femnist"] == {"shards": "all", "missing_shards": "use_available"}
    assert config["wddp"]["delta"] == 0.001


BAD = {
    "negative_epsilon": (
        ("wddp", "epsilons"),
        [0.1, -1.0],
        r"wddp\.epsilons\[1\]: -1\.0 is less than or equal to the minimum of 0",
    ),
    "zero_epsilon": (
        ("dp_iadmm", "epsilons"),
        [0],
        r"dp_iadmm\.epsilons\[0\]: 0 is less than or equal to the minimum of 0",
    ),
    "delta_one": (("wddp", "delta"), 1.0, r"wddp\.delta: 1\.0 is greater than or equal to the maximum of 1"),
    "delta_zero": (("wddp", "delta"), 0, r"wddp\.delta: 0 is less than or equal to the minimum of 0"),
    "empty_grid": (("dvp_pvp", "alphas"), [], r"dvp_pvp\.alphas: \[\] should be non-empty"),
    "wrong_type": (("wddp", "seeds"), "ten", r"wddp\.seeds: 'ten' is not of type 'integer'"),
    "unknown_key": (
        ("wddp", "epsilon"),
        [0.1],
        r"wddp: Additional properties are not allowed \('epsilon' was unexpected\)",
    ),
    "bad_switch": (("data", "lasso", "row_norm"), "l2", r"data\.lasso\.row_norm: 'l2' is not one of"),
    "bad_shard": (("data", "femnist", "shards"), [36], r"data\.femnist\.shards"),
    "no_studies": (("studies",), [], r"studies: \[\] should be non-empty"),
    "unknown_study": (("studies",), ["dpsgd"], r"studies\[0\]: 'dpsgd' is not one of"),
    "bad_delta_in_list": (
        ("dzoa", "deltas"),
        [1e-3, 1.5],
        r"dzoa\.deltas\[1\]: 1\.5 is greater than or equal to the maximum of 1",
    ),
}


@pytest.mark.parametrize(("keys", "value", "message"), BAD.values(), ids=BAD.keys())
def test_bad_values_are_rejected_with_their_key(keys: tuple[str, ...], value: object, message: str) -> None:
    config = minimal()
    target = config
    for key in keys[:-1]:
        target = target.setdefault(key, {})
    target[keys[-1]] = value
    with pytest.raises(ConfigError, match=message):
        validate_config(config, SCHEMA)


def test_kdd_train_size_must_leave_a_test_set() -> None:
    config = minimal()
    config["data"]["kdd"] = {"sample_size": 100, "train_size": 100, "seed": 0}
    with pytest.raises(
        ConfigError, match=r"data\.kdd\.train_size \(100\) must be smaller than data\.kdd\.sample_size"
    ):
        validate_config(config, SCHEMA)


def test_validation_does_not_modify_its_input() -> None:
    config = minimal()
    before = copy.deepcopy(config)
    validate_config(config, SCHEMA)
    assert config == before


def test_missing_or_malformed_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file .*nope.yaml not found"):
        load_config(tmp_path / "nope.yaml", SCHEMA)
    broken = tmp_path / "broken.yaml"
    broken.write_text("studies: [dzoa\n")
    with pytest.raises(ConfigError, match="broken.yaml line 2: not valid YAML"):
        load_config(broken, SCHEMA)


def changed(changes: dict) -> dict:
    """The ci config with each dotted key of ``changes`` set to its value."""
    config = minimal()
    for key, value in changes.items():
        set_dotted(config, key, value)
    return config


def one_line_error(config: dict) -> str:
    """The message of the ConfigError ``config`` raises; it is one line."""
    with pytest.raises(ConfigError) as caught:
        validate_config(config, SCHEMA)
    message = str(caught.value)
    assert "\n" not in message, message
    return message


@pytest.mark.parametrize(
    ("key", "value", "shown"),
    [
        ("wddp.epsilons", [float("nan")], r"wddp\.epsilons\[0\]: nan"),
        ("wddp.epsilons", [0.1, float("inf")], r"wddp\.epsilons\[1\]: inf"),
        ("wddp.delta", float("nan"), r"wddp\.delta: nan"),
        ("dzoa.rho", float("-inf"), r"dzoa\.rho: -inf"),
        ("data.lasso.noise_variance", float("inf"), r"data\.lasso\.noise_variance: inf"),
    ],
)
def test_non_finite_numbers_are_rejected_with_their_key(key: str, value: object, shown: str) -> None:
    assert re.search(shown + " is not a finite number", one_line_error(set_dotted(minimal(), key, value)))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "studies: [dzoa]\nreadings: false\nstudies: [wddp]\n",
            r"line 3: duplicate key 'studies' \(first on line 1\)",
        ),
        (
            "wddp:\n  seeds: 2\n  iterations: 40\n  seeds: 3\n",
            r"line 4: duplicate key 'seeds' \(first on line 2\)",
        ),
        ("data:\n  kdd: {seed: 0, seed: 1}\n", r"line 2: duplicate key 'seed' \(first on line 2\)"),
    ],
)
def test_duplicate_keys_are_rejected_with_key_and_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "dup.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=rf"{re.escape(str(path))} {message}"):
        load_config(path, SCHEMA)
    with pytest.raises(ConfigError, match=message):  # the workflow passes the files Snakemake merged
        validate_config(minimal(), SCHEMA, files=[ROOT / "config" / "ci.yaml", path])


def test_a_yaml_syntax_error_is_one_line_with_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("studies: [dzoa]\nwddp:\n  epsilons: [0.1\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path, SCHEMA)
    assert re.match(rf"{re.escape(str(path))} line \d+: .*expected ',' or '\]'", str(caught.value))
    assert "\n" not in str(caught.value)


def test_every_error_is_reported_at_once_on_one_line() -> None:
    config = minimal()
    config["wddp"]["delta"] = 2
    config["dzoa"]["epsilons"] = [-1]
    message = one_line_error(config)
    assert "wddp.delta: 2 is greater than or equal to the maximum of 1" in message
    assert "dzoa.epsilons[0]: -1 is less than or equal to the minimum of 0" in message


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("wddp.seeds", 100_000_000, r"wddp\.seeds: 100000000 is greater than the maximum of 1000"),
        (
            "dzoa.outer_iterations",
            10**12,
            r"dzoa\.outer_iterations: 1000000000000 is greater than the maximum",
        ),
        (
            "dp_iadmm.long_iterations",
            10**8,
            r"dp_iadmm\.long_iterations: 100000000 is greater than the maximum",
        ),
        (
            "dp_iadmm.mnist_agents",
            100_000,
            r"dp_iadmm\.mnist_agents: 100000 is greater than the maximum of 60000",
        ),
        ("data.lasso.trials", 10**6, r"data\.lasso\.trials: 1000000 is greater than the maximum of 1000"),
        ("wddp.seeds", 2.0, r"wddp\.seeds: 2\.0 is not of type 'integer'"),
    ],
)
def test_counts_are_bounded_integers(key: str, value: object, message: str) -> None:
    assert re.search(message, one_line_error(set_dotted(minimal(), key, value)))


RELATIONS = {
    "trace_points": (
        {"wddp.trace_points": 41},
        r"wddp\.trace_points \(41\) must not exceed wddp\.iterations \(40\)",
    ),
    "log_every": (
        {"dp_iadmm.log_every": 11},
        r"dp_iadmm\.log_every \(11\) must not exceed dp_iadmm\.iterations \(10\)",
    ),
    "long_log_every": (
        {"dp_iadmm.long_log_every": 11},
        r"dp_iadmm\.long_log_every \(11\) must not exceed dp_iadmm\.long_iterations \(10\)",
    ),
    "long_horizon": (
        {"dp_iadmm.long_iterations": 5, "dp_iadmm.long_log_every": 1},
        r"dp_iadmm\.long_iterations \(5\) must not be below dp_iadmm\.iterations \(10\)",
    ),
    "dzoa_epsilon_total": (
        {"dzoa.epsilon_totals": [100]},
        r"dzoa\.epsilon_totals: 100 gives a per-iteration epsilon of 7\.3\d* at delta 0\.001",
    ),
    "dzoa_trials": (
        {"dzoa.tuning_trials": 4},
        r"dzoa\.tuning_trials \(4\) must be smaller than data\.lasso\.trials \(4\)",
    ),
    "dzoa_topology": (
        {"data.lasso.agents": 3},
        r"dzoa\.topology: topology 'ring_chord' needs at least 4 agents; got 3 \(the agents are data\.lasso\.agents\)",
    ),
    "dvp_pvp_tradeoff": (
        {"dvp_pvp.tradeoff_iterations": [2, 16]},
        r"dvp_pvp\.tradeoff_iterations \[16\] exceed",
    ),
    "dvp_pvp_mer": (
        {"dvp_pvp.mer_iteration": 16},
        r"dvp_pvp\.mer_iteration \(16\) exceeds dvp_pvp\.iterations",
    ),
}


@pytest.mark.parametrize(("changes", "message"), RELATIONS.values(), ids=RELATIONS.keys())
def test_inconsistent_keys_are_rejected_before_anything_runs(changes: dict, message: str) -> None:
    assert re.search(message, one_line_error(changed(changes)))


def test_relations_of_a_disabled_study_are_not_checked() -> None:
    config = set_dotted(minimal(), "dzoa.tuning_trials", 4)  # no evaluation trial left, but dzoa is off
    config["studies"] = ["wddp"]
    validate_config(config, SCHEMA)


@pytest.mark.parametrize(
    ("text", "reads_as"), [("wddp: {seeds: 010}\n", "8"), ("wddp: {iterations: '1'}\nx: 1:30\n", "90")]
)
def test_integers_yaml_would_read_in_another_base_are_refused(
    tmp_path: Path, text: str, reads_as: str
) -> None:
    # issue 61 item 7: `seeds: 010` was read as 8 (YAML 1.1 octal), by Snakemake and dpdl alike
    path = tmp_path / "octal.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=rf"octal.yaml line \d: \S+ reads as {reads_as} in YAML"):
        load_config(path, SCHEMA)


def test_plain_integers_and_hex_still_read(tmp_path: Path) -> None:
    path = tmp_path / "plain.yaml"
    path.write_text("wddp: {seeds: 10, iterations: 1_000}\n")
    config = load_config(path, SCHEMA)
    assert config["wddp"]["seeds"] == 10 and config["wddp"]["iterations"] == 1000


def test_a_yte_template_is_refused_by_the_build_and_every_command(tmp_path: Path) -> None:
    # issue 61 item 7: Snakemake rendered it as a template while dpdl's commands read it as written
    path = tmp_path / "yte.yaml"
    path.write_text('__use_yte__: true\nwddp:\n  "?if true":\n    seeds: 3\n')
    for read in (lambda: load_config(path, SCHEMA), lambda: validate_config(minimal(), SCHEMA, files=[path])):
        with pytest.raises(ConfigError, match="yte.yaml: __use_yte__ makes Snakemake render the file"):
            read()
