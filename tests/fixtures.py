"""Generators of small raw files in the real formats (adult.data/.test, KDD gz, MNIST idx, LEAF JSON).

The generators write files exactly as the canonical sources lay them out, with their quirks
(adult.test's first line and trailing dots, idx headers, LEAF's white background = 1.0), so the
parsers and the pipeline are tested on the formats they will meet. Nothing here touches the
network or ``../shared``.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import numpy as np

ADULT_ROWS = [
    "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 2174, 0, 40, United-States, <=50K",
    "50, Self-emp-not-inc, 83311, Bachelors, 13, Married-civ-spouse, Exec-managerial, Husband, White, Male, 0, 0, 13, United-States, <=50K",
    "38, Private, 215646, HS-grad, 9, Divorced, Handlers-cleaners, Not-in-family, White, Male, 0, 0, 40, United-States, <=50K",
    "53, Private, 234721, 11th, 7, Married-civ-spouse, Handlers-cleaners, Husband, Black, Male, 0, 0, 40, United-States, <=50K",
    "28, Private, 338409, Bachelors, 13, Married-civ-spouse, Prof-specialty, Wife, Black, Female, 0, 0, 40, Cuba, <=50K",
    "37, Private, 284582, Masters, 14, Married-civ-spouse, Exec-managerial, Wife, White, Female, 0, 0, 40, United-States, >50K",
    "49, Private, 160187, 9th, 5, Married-spouse-absent, Other-service, Not-in-family, Black, Female, 0, 0, 16, Jamaica, <=50K",
    "52, Self-emp-not-inc, 209642, HS-grad, 9, Married-civ-spouse, Exec-managerial, Husband, White, Male, 0, 0, 45, United-States, >50K",
    "31, Private, 45781, Masters, 14, Never-married, Prof-specialty, Not-in-family, White, Female, 14084, 0, 50, United-States, >50K",
    "42, Private, 159449, Bachelors, 13, Married-civ-spouse, Exec-managerial, Husband, White, Male, 5178, 0, 40, United-States, >50K",
    "54, ?, 180211, Some-college, 10, Married-civ-spouse, ?, Husband, Asian-Pac-Islander, Male, 0, 0, 60, South, >50K",
    "30, State-gov, 141297, Bachelors, 13, Married-civ-spouse, Prof-specialty, Husband, Asian-Pac-Islander, Male, 0, 0, 40, India, >50K",
]  # fmt: skip
KDD_SERVICES = ("http", "smtp", "ftp_data", "private")
KDD_FLAGS = ("SF", "S0", "REJ")
KDD_LABELS = ("normal.", "smurf.", "neptune.", "back.")


def write_adult(folder: Path, n_train: int = 10) -> tuple[Path, Path]:
    """adult.data (first ``n_train`` rows, one with ``?``) and adult.test (the rest, with its quirks)."""
    folder.mkdir(parents=True, exist_ok=True)
    train, test = folder / "adult.data", folder / "adult.test"
    train.write_text("\n".join(ADULT_ROWS[:n_train]) + "\n\n", encoding="ascii")
    test_rows = [row + "." for row in ADULT_ROWS[n_train:]] + [ADULT_ROWS[0] + "."]
    test.write_text("|1x3 Cross validator\n" + "\n".join(test_rows) + "\n\n", encoding="ascii")
    return train, test


def write_kdd(path: Path, rows: int = 60, seed: int = 0) -> Path:
    """A gzip CSV with KDD Cup 99's 41 features (3 categorical) and labels ending in '.'."""
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(rows):
        numeric = rng.integers(0, 100, size=38)
        label = KDD_LABELS[i % len(KDD_LABELS)]
        fields = [str(numeric[0]), ["tcp", "udp", "icmp"][i % 3], KDD_SERVICES[i % 4], KDD_FLAGS[i % 3]]
        fields += [str(v) for v in numeric[1:]] + [label]
        lines.append(",".join(fields))
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="ascii") as stream:
        stream.write("\n".join(lines) + "\n")
    return path


def idx_bytes(array: np.ndarray) -> bytes:
    """An unsigned-byte idx file: magic 0x08 0x0N, big-endian dimensions, then the bytes."""
    header = bytes([0, 0, 0x08, array.ndim]) + b"".join(int(n).to_bytes(4, "big") for n in array.shape)
    return header + np.ascontiguousarray(array, dtype=np.uint8).tobytes()


def write_mnist(folder: Path, n_train: int = 40, n_test: int = 10, seed: int = 0) -> dict[str, Path]:
    """The four un-gzipped idx files with random images and labels 0..9."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    arrays = {
        "train-images-idx3-ubyte": rng.integers(0, 256, size=(n_train, 28, 28)),
        "train-labels-idx1-ubyte": np.arange(n_train) % 10,
        "t10k-images-idx3-ubyte": rng.integers(0, 256, size=(n_test, 28, 28)),
        "t10k-labels-idx1-ubyte": np.arange(n_test) % 10,
    }
    paths = {}
    for name, array in arrays.items():
        paths[name] = folder / name
        paths[name].write_bytes(idx_bytes(array))
    return paths


def leaf_shard(writers: dict[str, int], seed: int = 0) -> dict:
    """A LEAF JSON shard: pixels k/255 with background 1.0, labels 0..61."""
    rng = np.random.default_rng(seed)
    user_data = {}
    for user, count in writers.items():
        ink = rng.integers(0, 256, size=(count, 784))
        user_data[user] = {"x": (1.0 - ink / 255.0).tolist(), "y": rng.integers(0, 62, size=count).tolist()}
    return {"users": list(writers), "num_samples": list(writers.values()), "user_data": user_data}


def write_femnist(folder: Path, shards: dict[int, dict[str, int]]) -> None:
    """Train and test shards (``femnist/{train,test}/all_data_<k>_...json``) for the given writers."""
    from dpdl.data.femnist import shard_name

    for split in ("train", "test"):
        (folder / split).mkdir(parents=True, exist_ok=True)
        for shard, writers in shards.items():
            sizes = writers if split == "train" else {w: max(1, n // 4) for w, n in writers.items()}
            text = json.dumps(leaf_shard(sizes, seed=shard + (0 if split == "train" else 100)))
            (folder / split / shard_name(split, shard)).write_text(text, encoding="utf-8")


def write_raw_mirror(root: Path) -> Path:
    """A complete small mirror in the canonical layout (``<dataset>/<file>``), FEMNIST shards 0 and 1."""
    write_adult(root / "adult")
    write_kdd(root / "kdd" / "kddcup.data_10_percent.gz")
    write_mnist(root / "mnist")
    write_femnist(root / "femnist", {0: {"f0000_01": 6, "f0001_02": 3}, 1: {"f0002_03": 5}})
    return root


def network_tests_enabled() -> bool:
    """Real-network tests run only with DPDL_NETWORK_TESTS=1."""
    return os.environ.get("DPDL_NETWORK_TESTS") == "1"
