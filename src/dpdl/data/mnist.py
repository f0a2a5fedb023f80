"""MNIST: the four idx files, their parser, and the prepared arrays (uint8 pixels, divide by 255).

Home page: http://yann.lecun.com/exdb/mnist/. The pins are of the un-gzipped idx files, because
the gzip bytes differ between mirrors.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dpdl.data.fetch import Pin, RemoteFile, Url
from dpdl.errors import DataFormatError

HOMEPAGE = "http://yann.lecun.com/exdb/mnist/"
MIRRORS = (
    "https://ossci-datasets.s3.amazonaws.com/mnist",
    "https://storage.googleapis.com/cvdf-datasets/mnist",
    "http://yann.lecun.com/exdb/mnist",
)


def _remote(name: str, sha256: str, size: int) -> RemoteFile:
    sources = tuple(Url(f"{base}/{name}.gz", gzip=True) for base in MIRRORS)
    return RemoteFile(f"mnist/{name}", Pin("sha256", sha256), size, sources, HOMEPAGE)


TRAIN_IMAGES = _remote(
    "train-images-idx3-ubyte", "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db", 47_040_016
)
TRAIN_LABELS = _remote(
    "train-labels-idx1-ubyte", "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5", 60_008
)
TEST_IMAGES = _remote(
    "t10k-images-idx3-ubyte", "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7", 7_840_016
)
TEST_LABELS = _remote(
    "t10k-labels-idx1-ubyte", "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2", 10_008
)
FILES = (TRAIN_IMAGES, TRAIN_LABELS, TEST_IMAGES, TEST_LABELS)

IDX_MAGIC = {0x0801: 1, 0x0803: 3}  # unsigned-byte labels (1-d) and images (3-d)
PIXEL_DIVISOR = 255


def read_idx(path: Path) -> np.ndarray:
    """Parse an idx file of unsigned bytes (magic 0x801 labels or 0x803 images, big-endian sizes)."""
    raw = Path(path).read_bytes()
    magic = int.from_bytes(raw[:4], "big") if len(raw) >= 4 else None
    if magic not in IDX_MAGIC:
        raise DataFormatError(
            f"{path}: not an unsigned-byte idx file (magic {magic!r}, expected 0x801 or 0x803)"
        )
    ndim = IDX_MAGIC[magic]
    if len(raw) < 4 + 4 * ndim:
        raise DataFormatError(f"{path}: truncated idx header ({len(raw)} bytes)")
    shape = tuple(int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    offset = 4 + 4 * ndim
    if len(raw) != offset + int(np.prod(shape)):
        raise DataFormatError(
            f"{path}: header says shape {shape} but the file has {len(raw) - offset} data bytes"
        )
    return np.frombuffer(raw, dtype=np.uint8, offset=offset).reshape(shape)


def prepare(
    train_images: Path, train_labels: Path, test_images: Path, test_labels: Path
) -> dict[str, np.ndarray]:
    """Flattened 784-pixel uint8 images in file order (x / 255 gives the paper's features) and labels."""
    arrays = {
        "X_train": read_idx(train_images),
        "y_train": read_idx(train_labels),
        "X_test": read_idx(test_images),
        "y_test": read_idx(test_labels),
    }
    for split in ("train", "test"):
        images, labels = arrays[f"X_{split}"], arrays[f"y_{split}"]
        if images.ndim != 3 or labels.ndim != 1 or len(images) != len(labels):
            raise DataFormatError(f"MNIST {split}: {images.shape} images do not match {labels.shape} labels")
        arrays[f"X_{split}"] = images.reshape(len(images), -1)
    arrays["pixel_divisor"] = np.array(PIXEL_DIVISOR, dtype=np.int32)
    return arrays
