"""The config schema: every shipped config is valid; bad values are rejected with the key named."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from dpdl.config import load_config, validate_config
from dpdl.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"
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
    default, paper = (yaml.safe_load((ROOT / "config" / name).read_text()) for name in ("config.yaml", "paper.yaml"))
    assert key_paths(default) - key_paths(paper) == set()


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


def test_every_error_is_reported_at_once() -> None:
    config = minimal()
    config["wddp"]["delta"] = 2
    config["dzoa"]["epsilons"] = [-1]
    with pytest.raises(ConfigError) as caught:
        validate_config(config, SCHEMA)
    assert "wddp.delta" in str(caught.value) and "dzoa.epsilons[0]" in str(caught.value)


def test_kdd_train_size_must_leave_a_test_set() -> None:
    config = minimal()
    config["data"]["kdd"] = {"sample_size": 100, "train_size": 100, "seed": 0}
    with pytest.raises(ConfigError, match=r"data\.kdd\.train_size \(100\) must be smaller than data\.kdd\.sample_size"):
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
    with pytest.raises(ConfigError, match="is not valid YAML"):
        load_config(broken, SCHEMA)
