"""The prepared datasets: which raw files each needs, how it is built, and its card.

A prepared dataset is named ``<study>/<dataset>`` (``wddp/kdd``) and written as
``data/processed/<study>/<dataset>.npz`` (arrays, no pickle) beside a JSON card (rows, features,
classes, class balance, samples per agent, the raw inputs' pins, the preprocessing options, and
``npz_sha256``, the hash of the ``.npz``). A job that reads the arrays gets the card from
:func:`verified_card`, which refuses arrays that are not the ones the card describes.

Each study declares its prepared datasets as :class:`PreparedDataset` records (``PREPARED`` in its
``grid.py``); the registry (:func:`dpdl.studies.prepared_datasets`) gathers them, and every function here
takes the record, so this module lists no study and no dataset. A new prepared dataset is one record and one
``build`` function (here, beside its raw files' reader, or in the study's own package).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import dpdl
from dpdl.data import adult, bank, breast_cancer, credit_card, femnist, kdd, lasso, mnist
from dpdl.data.fetch import RemoteFile, fetch, file_digest
from dpdl.data.partition import equal_shards, size_summary
from dpdl.data.tabular import SPLIT_SEED, TEST_FRACTION
from dpdl.errors import ArtifactError, ConfigError, DataUnavailableError
from dpdl.io import read_json, sha256_file
from dpdl.validation import get_dotted, require_exact_keys

Built = tuple[dict[str, np.ndarray], dict, list[str]]  # arrays, the card's statistics, the card's notes


def no_files(opts: dict) -> list[RemoteFile]:
    """The raw files of a prepared dataset generated from its options alone: none."""
    return []


@dataclass(frozen=True)
class PreparedDataset:
    """One prepared dataset of a study, ``<study>/<dataset>``.

    It records where its options come from, its raw files and how it is built.

    ``options`` maps each option to the dotted config key it comes from; ``files`` gives the raw
    files for the options (read when called: the tests swap the pins); ``build`` makes the arrays,
    the card's statistics and its notes from the fetched files (in the order ``files`` gives them)
    and the options. A dataset built another way (FEMNIST: from the shards obtainable) gives
    ``prepare`` instead, which fetches and returns arrays and card; ``settle`` turns the config's
    values into the options the job takes (FEMNIST: ``"all"`` shards listed); ``optional`` names
    options the workflow adds beside the config's (FEMNIST: ``missing_files``).
    """

    study: str
    dataset: str
    build: Callable[[list[Path], dict], Built] | None = None
    options: Mapping[str, str] = field(default_factory=dict)
    files: Callable[[dict], list[RemoteFile]] = no_files
    prepare: Callable[..., tuple[dict[str, np.ndarray], dict]] | None = None
    settle: Callable[[dict], dict] | None = None
    optional: frozenset[str] = frozenset()

    @property
    def name(self) -> str:
        return f"{self.study}/{self.dataset}"


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
LASSO_OPTIONS = {key: f"data.lasso.{key}" for key in _LASSO}  # dzoa/lasso's options (and the audit's lasso)


def options(record: PreparedDataset, config: dict) -> dict:
    """The configuration values that determine prepared dataset ``record`` (its rule's params)."""
    opts = {key: get_dotted(config, dotted) for key, dotted in record.options.items()}
    return record.settle(opts) if record.settle else opts


def raw_files(record: PreparedDataset, opts: dict) -> list[RemoteFile]:
    """The raw files prepared dataset ``record`` is built from (FEMNIST: the selected shards)."""
    return list(record.files(opts))


def check_arrays(npz: Path, card: dict, card_path: Path) -> None:
    """Raise :class:`ArtifactError` unless ``npz`` hashes to the ``npz_sha256`` of its card.

    The file is hashed in one streaming read.
    """
    found, recorded = sha256_file(npz), card.get("npz_sha256")
    if found != recorded:
        raise ArtifactError(
            f"{npz} has sha256 {found}, but its card {card_path} records npz_sha256 {recorded}: "
            f"these are not the arrays the card describes; delete {npz} and rebuild it: "
            f"snakemake --cores 1 {npz}"
        )


def verified_card(card_path: Path, npz: Path) -> dict:
    """The card of prepared dataset ``npz``, after checking it and ``npz``.

    ``npz`` must be the file the card describes, and the card the one of the dataset its path names
    (:func:`card_problems`).

    Jobs record the card's ``npz_sha256`` as their ``dataset_sha256``; this is what makes it true.
    """
    card = read_json(card_path)
    if not isinstance(card, dict) or "npz_sha256" not in card:
        raise ArtifactError(
            f"{card_path}: not a prepared dataset's card (no npz_sha256); rebuild it with snakemake"
        )
    if problems := card_problems(card, Path(card_path)):
        raise ArtifactError(problems[0])
    check_arrays(Path(npz), card, Path(card_path))
    return card


def card_problems(
    card: dict, card_path: Path, record: PreparedDataset | None = None, config: dict | None = None
) -> list[str]:
    """How a card disagrees with where it lies and, given ``record`` and ``config``, with its options.

    The options it is judged against, given its dataset's ``record`` and ``config``, are those the
    config gives it.

    Its ``name`` must be its ``study``/``dataset`` and, at
    ``data/processed/<study>/<dataset>.json``, that ``<study>/<dataset>``; its ``options`` must be
    what :func:`options` gives for ``config``. A card copied from another dataset or edited by hand
    would otherwise pass for the one the path names (issue 61 item 7). One line each, with the fix.
    The caller looks ``record`` up in the registry (this layer is below the studies).
    """
    card_path, name = Path(card_path), card.get("name")
    fix = (
        f"delete {card_path} and {card_path.with_suffix('.npz')} and rebuild them: snakemake --cores 1 "
        + str(card_path.with_suffix(".npz"))
    )
    if "study" in card and "dataset" in card and name != f"{card['study']}/{card['dataset']}":
        return [
            f"{card_path}: name {name!r} is not its study/dataset {card['study']}/{card['dataset']}; {fix}"
        ]
    at = f"{card_path.parent.name}/{card_path.stem}"
    if name is not None and card_path.parent.parent.name == "processed" and name != at:
        return [
            f"{card_path}: names dataset {name!r}, but this path holds {at}'s card (copied or moved); {fix}"
        ]
    if record is None or config is None or name != record.name or not isinstance(card.get("options"), dict):
        return []
    expected, found = _plain(options(record, config)), _plain(card["options"])
    for key in sorted(set(expected) | (set(found) - record.optional)):
        ours, theirs = found.get(key, "(none)"), expected.get(key, "(none)")
        if ours != theirs:
            where = f"the config's {record.options[key]}" if key in record.options else "the config"
            return [
                f"{card_path}: option {key} is {ours} in the card but {theirs} in {where}: these arrays were "
                f"prepared for another config; {fix}"
            ]
    return []


def _plain(value: dict) -> dict:
    """``value`` as JSON gives it back (tuples as lists).

    That way a card read from disk compares with options made here.
    """
    return json.loads(json.dumps(value))


def check_options(record: PreparedDataset, opts: dict) -> None:
    """Raise :class:`ConfigError` unless ``opts`` has exactly the option keys of ``record``."""
    keys = set(record.options) | (record.optional & set(opts))
    require_exact_keys(opts, keys, f"options for {record.name}", f"expected exactly {sorted(keys)}")


def prepare(
    record: PreparedDataset, opts: dict, *, cache: Path, mirror: Path | None
) -> tuple[dict[str, np.ndarray], dict]:
    """Fetch the raw files of ``record`` (verified) and build its arrays and card (without the npz hash)."""
    check_options(record, opts)
    if record.prepare is not None:
        return record.prepare(opts, cache=cache, mirror=mirror)
    files = raw_files(record, opts)
    paths = [fetch(remote, cache, mirror) for remote in files]
    arrays, stats, notes = record.build(paths, opts)
    inputs = [raw_record(remote, path) for remote, path in zip(files, paths, strict=True)]
    return arrays, card(record.name, opts, stats, inputs, notes, arrays)


# The builds of the four studies' datasets (each study's PREPARED names its own).


def build_dvp_pvp_adult(paths: list[Path], opts: dict) -> Built:
    arrays = adult.prepare_dvp_pvp(
        adult.read_adult(paths[0]), adult.read_adult(paths[1]), row_norm=opts["row_norm"]
    )
    rng = np.random.default_rng(opts["partition_seed"])
    shards = equal_shards(len(arrays["y"]), opts["agents"], rng=rng)
    notes = [
        "all 45,222 complete rows are training data (G19 paper-faithful); from_test marks adult.test rows",
        f"partition: seeded shuffle (partition_seed {opts['partition_seed']}), "
        f"{opts['agents']} equal shards, "
        f"remainder of {len(arrays['y']) - sum(len(s) for s in shards)} rows dropped (G12)",
    ]
    return arrays, stats(arrays["X"], arrays["y"], None, [len(s) for s in shards]), notes


def build_wddp_adult(paths: list[Path], opts: dict) -> Built:
    arrays = adult.prepare_wddp(adult.read_adult(paths[0]), adult.read_adult(paths[1]))
    notes = ["official split adult.data / adult.test; clients are drawn per experiment (m = 2..32)"]
    return arrays, stats(arrays["X_train"], arrays["y_train"], arrays["y_test"], None), notes


def build_wddp_kdd(paths: list[Path], opts: dict) -> Built:
    features, labels = kdd.read_kdd(paths[0])
    arrays = kdd.prepare_wddp(
        features,
        labels,
        sample_size=opts["sample_size"],
        train_size=opts["train_size"],
        rng=np.random.default_rng(opts["seed"]),
    )
    notes = [
        f"source file: {len(labels):,} rows, {int((labels == kdd.NORMAL).sum()):,} normal",
        "clients are drawn per experiment (m = 2..32)",
    ]
    return arrays, stats(arrays["X_train"], arrays["y_train"], arrays["y_test"], None), notes


def _split_note() -> str:
    """The card's note on the split of wddp's Bank, Breast Cancer and Credit Card (no official split)."""
    return (
        f"stratified {1 - TEST_FRACTION:.0%} / {TEST_FRACTION:.0%} train / test split, seed {SPLIT_SEED}; "
        "clients are drawn per experiment (m = 2..32)"
    )


def build_wddp_bank(paths: list[Path], opts: dict) -> Built:
    """wddp's Bank: parsed, prepared (stratified 80/20, ||x|| = 1), and its notes."""
    frame = bank.read_bank(paths[0])
    arrays = bank.prepare_wddp(frame)
    notes = [
        f"source file: {len(frame):,} rows, {int((frame['y'] == 'yes').sum()):,} with y = yes (= 1)",
        _split_note(),
    ]
    return arrays, stats(arrays["X_train"], arrays["y_train"], arrays["y_test"], None), notes


def build_wddp_breast_cancer(paths: list[Path], opts: dict) -> Built:
    """wddp's Breast Cancer (MASS biopsy): parsed, prepared (stratified 80/20, ||x|| = 1), and its notes."""
    frame = breast_cancer.read_biopsy(paths[0])
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
        _split_note(),
    ]
    return arrays, stats(arrays["X_train"], arrays["y_train"], arrays["y_test"], None), notes


def build_wddp_credit_card(paths: list[Path], opts: dict) -> Built:
    """wddp's Credit Card Fraud: parsed, balanced sample, prepared, and its notes.

    Prepared means a stratified 80/20 split with ||x|| = 1.
    """
    frame = credit_card.read_creditcard(paths[0])
    arrays = credit_card.prepare_wddp(frame)
    notes = [
        f"source file: {len(frame):,} rows, {int((frame['Class'] == 1).sum())} frauds (Class = 1); "
        f"the sample: every fraud and as many normal transactions drawn with seed {SPLIT_SEED} "
        f"({len(arrays['sample_rows'])} rows, sample_rows)",
        _split_note(),
    ]
    return arrays, stats(arrays["X_train"], arrays["y_train"], arrays["y_test"], None), notes


def build_dp_iadmm_mnist(paths: list[Path], opts: dict) -> Built:
    arrays = mnist.prepare(*paths)
    shards = equal_shards(len(arrays["y_train"]), opts["agents"])
    notes = [
        "pixels stored as uint8; features are X / pixel_divisor",
        "agents: contiguous equal split in file order",
    ]
    return (
        arrays,
        stats(arrays["X_train"], arrays["y_train"], arrays["y_test"], [len(s) for s in shards]),
        notes,
    )


def build_dzoa_lasso(paths: list[Path], opts: dict) -> Built:
    arrays = lasso.generate(**opts)
    n_trials, n_rows, n_features = arrays["X"].shape
    found = {
        "rows": n_rows,
        "rows_train": n_rows,
        "rows_test": 0,
        "features": n_features,
        "classes": None,
        "class_balance": None,
        "agents": opts["agents"],
        "samples_per_agent": size_summary(np.full(opts["agents"], opts["samples_per_agent"])),
    }
    return arrays, found, [f"{n_trials} trials stacked on the first axis; regression, no classes"]


def adult_files(opts: dict) -> list[RemoteFile]:
    return list(adult.FILES)


def kdd_files(opts: dict) -> list[RemoteFile]:
    return list(kdd.FILES)


def bank_files(opts: dict) -> list[RemoteFile]:
    return list(bank.FILES)


def breast_cancer_files(opts: dict) -> list[RemoteFile]:
    return list(breast_cancer.FILES)


def credit_card_files(opts: dict) -> list[RemoteFile]:
    return list(credit_card.FILES)


def mnist_files(opts: dict) -> list[RemoteFile]:
    return list(mnist.FILES)


def femnist_files(opts: dict) -> list[RemoteFile]:
    """FEMNIST's raw files: the selected shards of both splits."""
    return [femnist.FILES[split, k] for split in ("train", "test") for k in opts["shards"]]


def settle_femnist(opts: dict) -> dict:
    """FEMNIST's shards as the job takes them: ``"all"`` listed, a list sorted."""
    return {
        **opts,
        "shards": list(range(femnist.N_SHARDS)) if opts["shards"] == "all" else sorted(opts["shards"]),
    }


def prepare_femnist(opts: dict, *, cache: Path, mirror: Path | None) -> tuple[dict[str, np.ndarray], dict]:
    """FEMNIST from every selected shard except ``missing_files``: arrays and card.

    ``missing_files`` are the shard files the workflow found unobtainable.
    """
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
            raise DataUnavailableError(
                f"FEMNIST: none of the selected {split} shards can be obtained: {missing}"
            )
    arrays = femnist.prepare(found["train"], found["test"])
    sizes = np.diff(arrays["offsets_train"])
    found_stats = stats(arrays["X_train"], arrays["y_train"], arrays["y_test"], sizes)
    found_stats["writers_test"] = len(arrays["writers_test"])
    found_stats["shards_train"] = sorted(found["train"])
    found_stats["shards_test"] = sorted(found["test"])
    found_stats["missing_files"] = missing
    inputs = [
        raw_record(femnist.FILES[split, k], found[split][k])
        for split in ("train", "test")
        for k in sorted(found[split])
    ]
    notes = [
        "one LEAF writer is one agent; pixels inverted (1 - x) and stored as uint8; features are X / 255"
    ]
    if missing:
        notes.append(
            f"{len(missing)} selected shard files were unavailable and are left out: "
            f"{len(found['train'])} of {len(opts['shards'])} train shards, {len(found['test'])} of "
            f"{len(opts['shards'])} test shards; paper-scale FEMNIST numbers need all 36"
        )
    return arrays, card("dp_iadmm/femnist", opts, found_stats, inputs, notes, arrays)


def stats(x_train: np.ndarray, y_train: np.ndarray, y_test: np.ndarray | None, agent_sizes) -> dict:
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


def raw_record(remote: RemoteFile, path: Path | None = None) -> dict:
    """The pin of a raw input.

    For a file checked by its content (no pin), the sha256 of the copy used (``path``).
    """
    if remote.pin is not None:
        return {"path": remote.path, "algorithm": remote.pin.algorithm, "digest": remote.pin.digest}
    if path is None:
        raise ValueError(f"{remote.path} is checked by its content: its record needs the copy used")
    return {
        "path": remote.path,
        "algorithm": "sha256",
        "digest": file_digest(path, "sha256"),
        "pinned": False,
    }


def card(name: str, opts: dict, stats: dict, inputs: list[dict], notes: list[str], arrays: dict) -> dict:
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
