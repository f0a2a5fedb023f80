"""The prepared datasets: which raw files each needs, how it is built, and its card.

A prepared dataset is named ``<study>/<dataset>`` (``wddp/kdd``) and written as
``data/processed/<study>/<dataset>.npz`` (arrays, no pickle) beside a JSON card (rows, features,
classes, class balance, samples per agent, the raw inputs' pins, the preprocessing options, and
``npz_sha256``, the hash of the ``.npz``). A job that reads the arrays gets the card from
:func:`verified_card`, which refuses arrays that are not the ones the card describes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import dpdl
from dpdl.data import adult, bank, breast_cancer, credit_card, femnist, kdd, lasso, mnist
from dpdl.data.fetch import RemoteFile, fetch, file_digest
from dpdl.data.partition import equal_shards, size_summary
from dpdl.errors import ArtifactError, ConfigError, DataUnavailableError
from dpdl.io import read_json, sha256_file
from dpdl.validation import get_dotted, require_exact_keys

STUDY_DATASETS = {
    "dvp_pvp": ("adult",),
    "wddp": ("adult", "kdd", "bank", "breast_cancer", "credit_card"),  # config: wddp.datasets selects
    "dp_iadmm": ("mnist", "femnist"),
    "dzoa": ("lasso",),
}
PREPARED = tuple(f"{study}/{dataset}" for study, datasets in STUDY_DATASETS.items() for dataset in datasets)
_LASSO = (
    "trials",
    "seed",
    "agents",
    "samples_per_agent",
    "features",
    "noise_variance",
    "y_from",
    "col_norm",
    "row_norm",
)
OPTION_SOURCES = {  # each option of a prepared dataset: the config key it comes from (dotted)
    "dvp_pvp/adult": {key: f"dvp_pvp.{key}" for key in ("agents", "partition_seed", "row_norm")},
    "wddp/adult": {},
    "wddp/kdd": {key: f"data.kdd.{key}" for key in ("sample_size", "train_size", "seed")},
    "wddp/bank": {},  # split seed and fraction fixed (dpdl.data.tabular.SPLIT_SEED, TEST_FRACTION)
    "wddp/breast_cancer": {},
    "wddp/credit_card": {},
    "dp_iadmm/mnist": {"agents": "dp_iadmm.mnist_agents"},
    # and "missing_files" when some cannot be obtained (not a config key)
    "dp_iadmm/femnist": {"shards": "data.femnist.shards", "missing_shards": "data.femnist.missing_shards"},
    "dzoa/lasso": {key: f"data.lasso.{key}" for key in _LASSO},
}
OPTION_KEYS = {name: set(sources) for name, sources in OPTION_SOURCES.items()}


# wddp's datasets without an official split: a module each (FILES, a reader, prepare_wddp).
TABULAR = {"bank": bank, "breast_cancer": breast_cancer, "credit_card": credit_card}


def prepared_names(config: dict) -> list[str]:
    """The prepared datasets the enabled studies of ``config`` need, in data-flow order (a study whose section
    has a ``datasets`` key, wddp, needs those only)."""
    names = []
    for name in PREPARED:
        study, dataset = name.split("/")
        selected = (config.get(study) or {}).get("datasets")
        if study in config["studies"] and (selected is None or dataset in selected):
            names.append(name)
    return names


def options(name: str, config: dict) -> dict:
    """The configuration values that determine prepared dataset ``name`` (its rule's params)."""
    if name not in OPTION_SOURCES:
        raise ConfigError(f"unknown prepared dataset {name!r}; expected one of {', '.join(PREPARED)}")
    opts = {key: get_dotted(config, dotted) for key, dotted in OPTION_SOURCES[name].items()}
    if name == "dp_iadmm/femnist":
        opts["shards"] = list(range(femnist.N_SHARDS)) if opts["shards"] == "all" else sorted(opts["shards"])
    return opts


def raw_files(name: str, opts: dict) -> list[RemoteFile]:
    """The raw files prepared dataset ``name`` is built from (FEMNIST: the selected shards)."""
    dataset = name.split("/")[1]
    if dataset == "femnist":
        return [femnist.FILES[split, k] for split in ("train", "test") for k in opts["shards"]]
    modules = {"adult": adult, "kdd": kdd, "mnist": mnist, **TABULAR}
    return [] if dataset == "lasso" else list(modules[dataset].FILES)


def check_arrays(npz: Path, card: dict, card_path: Path) -> None:
    """Raise :class:`ArtifactError` unless ``npz`` hashes to the ``npz_sha256`` of its card (one streaming read)."""
    found, recorded = sha256_file(npz), card.get("npz_sha256")
    if found != recorded:
        raise ArtifactError(
            f"{npz} has sha256 {found}, but its card {card_path} records npz_sha256 {recorded}: these are not "
            f"the arrays the card describes; delete {npz} and rebuild it: snakemake --cores 1 {npz}"
        )


def verified_card(card_path: Path, npz: Path) -> dict:
    """The card of prepared dataset ``npz``, after checking that ``npz`` is the file it describes.

    Jobs record the card's ``npz_sha256`` as their ``dataset_sha256``; this is what makes it true.
    """
    card = read_json(card_path)
    if not isinstance(card, dict) or "npz_sha256" not in card:
        raise ArtifactError(f"{card_path}: not a prepared dataset's card (no npz_sha256); rebuild it with snakemake")
    check_arrays(Path(npz), card, Path(card_path))
    return card


def check_options(name: str, opts: dict) -> None:
    """Raise :class:`ConfigError` unless ``opts`` has exactly the option keys of ``name``."""
    if name not in OPTION_KEYS:
        raise ConfigError(f"unknown prepared dataset {name!r}; expected one of {', '.join(PREPARED)}")
    keys = set(OPTION_KEYS[name])
    if name == "dp_iadmm/femnist" and "missing_files" in opts:
        keys.add("missing_files")
    require_exact_keys(opts, keys, f"options for {name}", f"expected exactly {sorted(keys)}")


def prepare(name: str, opts: dict, *, cache: Path, mirror: Path | None) -> tuple[dict[str, np.ndarray], dict]:
    """Fetch the raw files of ``name`` (verified) and build its arrays and card (without the npz hash)."""
    check_options(name, opts)
    dataset = name.split("/")[1]
    if dataset == "femnist":
        return _prepare_femnist(opts, cache=cache, mirror=mirror)
    paths = [fetch(remote, cache, mirror) for remote in raw_files(name, opts)]
    inputs = [_raw_record(remote, path) for remote, path in zip(raw_files(name, opts), paths, strict=True)]
    if name == "dvp_pvp/adult":
        arrays = adult.prepare_dvp_pvp(
            adult.read_adult(paths[0]), adult.read_adult(paths[1]), row_norm=opts["row_norm"]
        )
        rng = np.random.default_rng(opts["partition_seed"])
        shards = equal_shards(len(arrays["y"]), opts["agents"], rng=rng)
        stats = _stats(arrays["X"], arrays["y"], None, [len(s) for s in shards])
        notes = [
            "all 45,222 complete rows are training data (G19 paper-faithful); from_test marks adult.test rows",
            f"partition: seeded shuffle (partition_seed {opts['partition_seed']}), {opts['agents']} equal shards, "
            f"remainder of {len(arrays['y']) - sum(len(s) for s in shards)} rows dropped (G12)",
        ]
    elif name == "wddp/adult":
        arrays = adult.prepare_wddp(adult.read_adult(paths[0]), adult.read_adult(paths[1]))
        stats = _stats(arrays["X_train"], arrays["y_train"], arrays["y_test"], None)
        notes = ["official split adult.data / adult.test; clients are drawn per experiment (m = 2..32)"]
    elif name == "wddp/kdd":
        features, labels = kdd.read_kdd(paths[0])
        arrays = kdd.prepare_wddp(
            features,
            labels,
            sample_size=opts["sample_size"],
            train_size=opts["train_size"],
            rng=np.random.default_rng(opts["seed"]),
        )
        stats = _stats(arrays["X_train"], arrays["y_train"], arrays["y_test"], None)
        notes = [
            f"source file: {len(labels):,} rows, {int((labels == kdd.NORMAL).sum()):,} normal",
            "clients are drawn per experiment (m = 2..32)",
        ]
    elif name in ("wddp/bank", "wddp/breast_cancer", "wddp/credit_card"):
        arrays, notes = _prepare_tabular(dataset, paths[0])
        stats = _stats(arrays["X_train"], arrays["y_train"], arrays["y_test"], None)
    elif name == "dp_iadmm/mnist":
        arrays = mnist.prepare(*paths)
        shards = equal_shards(len(arrays["y_train"]), opts["agents"])
        stats = _stats(arrays["X_train"], arrays["y_train"], arrays["y_test"], [len(s) for s in shards])
        notes = [
            "pixels stored as uint8; features are X / pixel_divisor",
            "agents: contiguous equal split in file order",
        ]
    else:  # dzoa/lasso (check_options rejected every other name)
        arrays = lasso.generate(**opts)
        n_trials, n_rows, n_features = arrays["X"].shape
        stats = {
            "rows": n_rows,
            "rows_train": n_rows,
            "rows_test": 0,
            "features": n_features,
            "classes": None,
            "class_balance": None,
            "agents": opts["agents"],
            "samples_per_agent": size_summary(np.full(opts["agents"], opts["samples_per_agent"])),
        }
        notes = [f"{n_trials} trials stacked on the first axis; regression, no classes"]
    return arrays, _card(name, opts, stats, inputs, notes, arrays)


def _prepare_tabular(dataset: str, path: Path) -> tuple[dict[str, np.ndarray], list[str]]:
    """wddp's Bank, Breast Cancer or Credit Card: parsed, prepared (stratified 80/20, ||x|| = 1), and their notes."""
    from dpdl.data.tabular import SPLIT_SEED, TEST_FRACTION

    split = (
        f"stratified {1 - TEST_FRACTION:.0%} / {TEST_FRACTION:.0%} train / test split, seed {SPLIT_SEED}; "
        "clients are drawn per experiment (m = 2..32)"
    )
    if dataset == "breast_cancer":
        frame = breast_cancer.read_biopsy(path)
        arrays = breast_cancer.prepare_wddp(frame)
        counts = breast_cancer.published_counts(frame)
        median = frame[breast_cancer.MISSING].iloc[arrays["train_rows"]].median()
        zero = int((np.linalg.norm(arrays["X_train"], axis=1) == 0).sum())
        notes = [
            f"source file: {counts['rows']} rows, {counts['benign']} benign, {counts['malignant']} malignant, "
            f"{counts['missing']} missing Bare Nuclei (V6) values (published: {breast_cancer.ROWS}, "
            f"{breast_cancer.BENIGN}, {breast_cancer.MALIGNANT}, {breast_cancer.N_MISSING})",
            f"missing V6 filled with its training median {median:g}; ID dropped; malignant = 1",
            f"{zero} training rows have every feature at its training minimum: they stay 0 (||x|| = 0 <= 1)",
            split,
        ]
    elif dataset == "bank":
        frame = bank.read_bank(path)
        arrays = bank.prepare_wddp(frame)
        notes = [f"source file: {len(frame):,} rows, {int((frame['y'] == 'yes').sum()):,} with y = yes (= 1)", split]
    else:
        frame = credit_card.read_creditcard(path)
        arrays = credit_card.prepare_wddp(frame)
        notes = [
            f"source file: {len(frame):,} rows, {int((frame['Class'] == 1).sum())} frauds (Class = 1); the sample: "
            f"every fraud and as many normal transactions drawn with seed {SPLIT_SEED} ({len(arrays['sample_rows'])} "
            "rows, sample_rows)",
            split,
        ]
    return arrays, notes


def _prepare_femnist(opts: dict, *, cache: Path, mirror: Path | None) -> tuple[dict[str, np.ndarray], dict]:
    """FEMNIST from every selected shard except ``missing_files`` (those the workflow found unobtainable)."""
    missing = opts.get("missing_files", [])
    if missing and opts["missing_shards"] == "fail":
        raise ConfigError(f"FEMNIST: missing_shards is 'fail', yet missing_files lists {missing}")
    found: dict[str, dict[int, Path]] = {"train": {}, "test": {}}
    for split in ("train", "test"):
        for shard in opts["shards"]:
            remote = femnist.FILES[split, shard]
            if remote.path not in missing:
                found[split][shard] = fetch(remote, cache, mirror)
    for split in ("train", "test"):
        if not found[split]:
            raise DataUnavailableError(f"FEMNIST: none of the selected {split} shards can be obtained: {missing}")
    arrays = femnist.prepare(found["train"], found["test"])
    sizes = np.diff(arrays["offsets_train"])
    stats = _stats(arrays["X_train"], arrays["y_train"], arrays["y_test"], sizes)
    stats["writers_test"] = len(arrays["writers_test"])
    stats["shards_train"] = sorted(found["train"])
    stats["shards_test"] = sorted(found["test"])
    stats["missing_files"] = missing
    inputs = [_raw_record(femnist.FILES[split, k]) for split in ("train", "test") for k in sorted(found[split])]
    notes = ["one LEAF writer is one agent; pixels inverted (1 - x) and stored as uint8; features are X / 255"]
    if missing:
        notes.append(
            f"{len(missing)} selected shard files were unavailable and are left out: "
            f"{len(found['train'])} of {len(opts['shards'])} train shards, {len(found['test'])} of "
            f"{len(opts['shards'])} test shards; paper-scale FEMNIST numbers need all 36"
        )
    return arrays, _card("dp_iadmm/femnist", opts, stats, inputs, notes, arrays)


def _stats(x_train: np.ndarray, y_train: np.ndarray, y_test: np.ndarray | None, agent_sizes) -> dict:
    labels, counts = np.unique(y_train, return_counts=True)
    return {
        "rows": len(y_train) + (0 if y_test is None else len(y_test)),
        "rows_train": len(y_train),
        "rows_test": 0 if y_test is None else len(y_test),
        "features": int(x_train.shape[1]),
        "classes": int(len(labels)),
        "class_balance": {
            str(label): round(float(c) / len(y_train), 6) for label, c in zip(labels, counts, strict=True)
        },
        "agents": None if agent_sizes is None else len(agent_sizes),
        "samples_per_agent": None if agent_sizes is None else size_summary(np.asarray(agent_sizes)),
    }


def _raw_record(remote: RemoteFile, path: Path | None = None) -> dict:
    """The pin of a raw input; for a file checked by its content (no pin), the sha256 of the copy used."""
    if remote.pin is not None:
        return {"path": remote.path, "algorithm": remote.pin.algorithm, "digest": remote.pin.digest}
    return {"path": remote.path, "algorithm": "sha256", "digest": file_digest(path, "sha256"), "pinned": False}


def _card(name: str, opts: dict, stats: dict, inputs: list[dict], notes: list[str], arrays: dict) -> dict:
    study, dataset = name.split("/")
    return {
        "name": name,
        "study": study,
        "dataset": dataset,
        **stats,
        "raw_inputs": inputs,
        "options": opts,
        "notes": notes,
        "arrays": {key: {"shape": list(a.shape), "dtype": str(a.dtype)} for key, a in sorted(arrays.items())},
        "dpdl_version": dpdl.__version__,
    }
