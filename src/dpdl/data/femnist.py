"""FEMNIST, the LEAF 5% "small" non-IID sample that Ryu & Kim used: 36 train and 36 test shards.

The shards are the JSON files committed in the authors' repository (APPFL/DPFL-IADMM-Classification,
``Inputs/Femnist_{Train,Test}_small/``), pinned by git blob SHA-1 at one commit. One LEAF user
(writer) is one agent. LEAF stores white background as 1.0; the pixels are inverted (1 - x) so
that ink is 1, as in MNIST (iadmm.md section 5). Every pixel is a multiple of 1/255, so the
prepared arrays store ``255 * (1 - x)`` as uint8, exactly.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from dpdl.data.fetch import Pin, RemoteFile, Url
from dpdl.errors import DataFormatError

HOMEPAGE = "https://github.com/APPFL/DPFL-IADMM-Classification"
COMMIT = "4610458edaad176f5108199393f2bc18c93659e2"
RAW_BASE = f"https://raw.githubusercontent.com/APPFL/DPFL-IADMM-Classification/{COMMIT}/Inputs"
N_SHARDS = 36
N_PIXELS = 784
N_CLASSES = 62
PIXEL_DIVISOR = 255

# (split, shard, git blob SHA-1, bytes or None where unknown), from the authors' repository at COMMIT.
SHARDS = (
    ("test", 0, "e80adb32c8d2f03dca252dfcdcab3e6d0818bac8", 458184),
    ("test", 1, "2784d878c8ecada24e8efc0e4d77e5bb38061040", 468325),
    ("test", 2, "029134bc090858074b6c0b95eeadeda1da4c23f7", 458568),
    ("test", 3, "b36c667e1cd6119e42e82ef801f27cc836542e23", 451517),
    ("test", 4, "39552f79372d1ccbc9b3243870797857747132dd", 476201),
    ("test", 5, "73466b616a996311235f461b5f5f8342b0ee660f", 905738),
    ("test", 6, "b38a19e0b4eda78a7efdbe81e11b63c352d729d2", 901245),
    ("test", 7, "c7a13036054f818c23aef0a70fa9977fa10e834e", 928446),
    ("test", 8, "aca79ea17546780818725e011b3137fd78354501", 881053),
    ("test", 9, "2f2d65d37e0abed21243bc3434718e86138480bd", 920228),
    ("test", 10, "144ee8c6f4290bc57231deccaa834d5b435b72c9", 836581),
    ("test", 11, "dc5a5756c4ab52a9829adfb64133ff15e9181b82", 846308),
    ("test", 12, "26fa975689d2caf3d69dec0300c3fbcba519aa66", 880781),
    ("test", 13, "c876ce55a7405210145034149f67b60a4f337971", 873625),
    ("test", 14, "040450188affa38b6f4fa887c7c1557464963e55", 892113),
    ("test", 15, "b3ada69cb19579b2a68d8ad0007038be9ba87546", 470371),
    ("test", 16, "5c45126980e99eb890cac8e62696c71253679b00", 460029),
    ("test", 17, "2bb315741e65fcd1792099448a7ed0c22be0224a", 463102),
    ("test", 18, "699c0d927c76de140a59a91911f97662ea1b32bd", 471385),
    ("test", 19, "558e8b8ea617df0fe18cb4d247dc9245200243e7", 453270),
    ("test", 20, "405f9431775a89411562c43d920a590c000e278a", 409891),
    ("test", 21, "f1118298219936baabc4ebbbaeef935d1e6b0eba", 385185),
    ("test", 22, "208138bea0d4559b7b8f226fea5353d44d525d20", 389444),
    ("test", 23, "010f1d3653f8e97053937db09338ce0346f965e2", 401950),
    ("test", 24, "ba7c49ea78d1f3d5881261674a689af2832c45ff", 411912),
    ("test", 25, "80acbb7842d3880abb7996887d542145b179f77f", 412149),
    ("test", 26, "bf030c042c2314ba0553d0213afbc52ec7be2cea", 430853),
    ("test", 27, "f5137fee6c12b8508672a2a82f7306c9926dc8a3", 432668),
    ("test", 28, "0e8e158f0d9c35af13a3f6317331c2498efcea88", 450015),
    ("test", 29, "379f5eefe0c522b700cd27174ebf43ad30fd8993", 450808),
    ("test", 30, "39983838d8ef918f05f3fb939ad32b7690f2424c", 450487),
    ("test", 31, "4c26f25871723cb6944449080d40d5aa7838cf01", 706257),
    ("test", 32, "28db2d00767e77a6e505140a0259ab4bf98613e9", 719678),
    ("test", 33, "48007b26ab2d91fa96fbbdbd1cb09e36e8b6dfac", 728503),
    ("test", 34, "89e0fa5585ac733b291ba5b30afdb314c45d1755", 701409),
    ("test", 35, "1ded115b4ecbae679dab15b7af91288878db9b5c", 673031),
    ("train", 0, "9e7b7f5c5b302a379136cc06b35f6f519cbcef5d", 3973602),
    ("train", 1, "c373c4deeb52bf87d776012353914240abfe1d32", 4061000),
    ("train", 2, "dd57a8bb938f82f6f80b4b9439d2014a5c1535cb", 3976355),
    ("train", 3, "a7e810b6a926fadfc7f8788b5a28bb7917113954", 3919596),
    ("train", 4, "e55315f262704722236180cb0a4c30a4925a9935", 4135813),
    ("train", 5, "e7b8956c0072fe558e19d9b9a08185309fa6eb8c", None),
    ("train", 6, "3fb4901361266656173c7e0dc35df964deeadb20", None),
    ("train", 7, "2f0afd77a506e19cb32e65e90acb1fe773e363d2", None),
    ("train", 8, "77c3c2a05ad59075c049e1780af050f18c25ef83", None),
    ("train", 9, "f5b47dc34815b6431a5624e79c66364d43f82c96", None),
    ("train", 10, "d92adc0f160ebd91f4105b709286b78e8d58f358", None),
    ("train", 11, "af6f67490ad2e725b0d85c447adc9e3e9891fd8a", None),
    ("train", 12, "e30593baadb38e1b98169348b428a665836ed2ae", None),
    ("train", 13, "101088c52e4f73563a77be58499078bea270a9f2", None),
    ("train", 14, "2147f0e5049a88e437d74d1befc6f98c2bf6d9da", None),
    ("train", 15, "d90c94f2194c8745bcb4bc4afdcd149769f13cd5", 4132700),
    ("train", 16, "0a822f55845d5e1627c72a71c6ecbcb96073e5ac", 4133001),
    ("train", 17, "13e6c500f179efb5414ac0733f23ca753c9a86f6", 4019890),
    ("train", 18, "4441e366ad7ea1a98ccbc35a69d2af061589b9fa", 4148295),
    ("train", 19, "fd596f8568e069d74248948caaf70113531dba14", 4049884),
    ("train", 20, "94054bc709bd04677fbff244b613401fff913e45", 3541278),
    ("train", 21, "10d1ee7f552069b86a5082713c2df6102738030f", 3387859),
    ("train", 22, "42f984fc4d1dacb6e7275c0be1b2b00f6fa5fe71", 3372607),
    ("train", 23, "ea6a2ac860d1a81d326c5600359cfc94db66144a", 3563181),
    ("train", 24, "6a58dd9486bbce7298f48ac1cd7efeb4f278aa98", 3580194),
    ("train", 25, "8ef66fa0235f7318895bcbe864ed51d939e80616", 3567808),
    ("train", 26, "bf87a8c454147c46bf8b6a3c802da83ea544d43a", 3803728),
    ("train", 27, "d1bdd9667f26f90975867f54002bf21f4b8e7755", 3808747),
    ("train", 28, "f22d02740a65ec40434a45043e6a340e0c8dd0ef", 3922991),
    ("train", 29, "9d2063d8eb1d58336083ff9b50273f215202afec", 3920264),
    ("train", 30, "51fa72155f1dd2613aec8c46bd18821ab1c634d3", 3909869),
    ("train", 31, "3a1d8f2f7d392576aa98675e905db174c93d0e89", None),
    ("train", 32, "328f12684a98596e11d09dbe6a97631b1ec3cc89", None),
    ("train", 33, "5c5f940ea60d7279ee98780c37baafe1ed0f4c53", None),
    ("train", 34, "6f9c25dd421907662231163d66ab3ca91f06a60e", None),
    ("train", 35, "2d4f9477b7980858e1aee3469ef97341d87fdd5b", None),
)


def shard_name(split: str, shard: int) -> str:
    """The LEAF file name of one shard, e.g. ``all_data_0_niid_05_keep_0_train_9.json``."""
    return f"all_data_{shard}_niid_05_keep_0_{split}_9.json"


def _remote(split: str, shard: int, blob_sha1: str, size: int | None) -> RemoteFile:
    name = shard_name(split, shard)
    url = f"{RAW_BASE}/Femnist_{split.capitalize()}_small/{name}"
    return RemoteFile(f"femnist/{split}/{name}", Pin("git-blob-sha1", blob_sha1), size, (Url(url),), HOMEPAGE)


FILES = {(split, shard): _remote(split, shard, sha1, size) for split, shard, sha1, size in SHARDS}


def read_shard(path: Path) -> tuple[list[str], list[np.ndarray], list[np.ndarray]]:
    """Parse one LEAF JSON shard: writers in file order, their ink images (uint8, 784 wide) and labels."""
    try:
        shard = json.loads(Path(path).read_text(encoding="utf-8"))
        users, counts, user_data = shard["users"], shard["num_samples"], shard["user_data"]
    except (json.JSONDecodeError, KeyError, TypeError) as err:
        raise DataFormatError(
            f"{path}: not a LEAF shard with users/num_samples/user_data ({err!r})"
        ) from None
    if len(users) != len(counts):
        raise DataFormatError(f"{path}: {len(users)} users but {len(counts)} num_samples entries")
    images, labels = [], []
    for user, count in zip(users, counts, strict=True):
        if user not in user_data:
            raise DataFormatError(f"{path}: writer {user} is listed in users but has no user_data")
        x = np.asarray(user_data[user]["x"], dtype=np.float64)
        y = np.asarray(user_data[user]["y"], dtype=np.float64)
        if x.shape != (count, N_PIXELS) or y.shape != (count,):
            raise DataFormatError(
                f"{path}: writer {user} has x {x.shape} and y {y.shape}; num_samples says {count} x {N_PIXELS}"
            )
        if y.size and (y.min() < 0 or y.max() >= N_CLASSES or (y != np.round(y)).any()):
            raise DataFormatError(
                f"{path}: writer {user} has labels that are not integers in 0..{N_CLASSES - 1}"
            )
        ink = np.rint((1.0 - x) * PIXEL_DIVISOR)  # invert: LEAF's background 1.0 becomes 0
        off_grid = np.abs(ink - (1.0 - x) * PIXEL_DIVISOR).max(initial=0) > 1e-6
        if off_grid or ink.min(initial=0) < 0 or ink.max(initial=0) > PIXEL_DIVISOR:
            raise DataFormatError(
                f"{path}: writer {user} has pixels that are not multiples of 1/255 in [0, 1]"
            )
        images.append(ink.astype(np.uint8))
        labels.append(y.astype(np.uint8))
    return list(users), images, labels


def prepare(train_shards: dict[int, Path], test_shards: dict[int, Path]) -> dict[str, np.ndarray]:
    """Stack the given shards, writers in shard order; ``*_offsets`` delimit each writer's rows."""
    arrays: dict[str, np.ndarray] = {}
    for split, shards in (("train", train_shards), ("test", test_shards)):
        writers, images, labels = [], [], []
        for shard in sorted(shards):
            users, x, y = read_shard(shards[shard])
            writers += users
            images += x
            labels += y
        sizes = np.array([len(y) for y in labels], dtype=np.int64)
        arrays[f"X_{split}"] = np.concatenate(images) if images else np.zeros((0, N_PIXELS), np.uint8)
        arrays[f"y_{split}"] = np.concatenate(labels) if labels else np.zeros(0, np.uint8)
        arrays[f"writers_{split}"] = np.array(writers, dtype=str)
        arrays[f"offsets_{split}"] = np.concatenate([[0], np.cumsum(sizes)])
        arrays[f"shards_{split}"] = np.array(sorted(shards), dtype=np.int64)
    arrays["pixel_divisor"] = np.array(PIXEL_DIVISOR, dtype=np.int32)
    return arrays
