"""The agents' data of DP-IADMM in padded chunks, and what is computed from it directly.

Agents are sorted by size and grouped into a few blocks padded with zero rows (one block, a view
of the data, when all agents have the same size, as on MNIST) and cut into chunks of a few agents
whose elementwise work stays in cache; the two matrix products per chunk are batched over its
agents and skip the features that are zero in every row of the chunk (pixels no writer of the
chunk touched: half of FEMNIST's per chunk, 12% of MNIST's), which contribute nothing to them.
Everything is float32 with the replica axis B (the seeds of a job, which share the data) before
the class axis. From a chunk come the loss gradient of (37), the sensitivity (20) and the
objective (1); :mod:`dpdl.algorithms.dp_iadmm` runs the algorithms on it. Equation numbers are
Ryu & Kim's (arXiv 2106.06127).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpdl.models import softmax
from dpdl.privacy.dp_iadmm import objp_sensitivity

DTYPE = np.float32
# Blocking of unequal agents: a block costs about as much fixed overhead (numpy calls) as this
# many padded rows of matrix products; the partition minimises padded rows + this per block.
BLOCK_OVERHEAD_ROWS = 64
# The iteration works through the agents chunk by chunk so that the elementwise updates of a
# chunk stay in the core's cache (2 MB L2 here): a chunk holds about this many bytes of the
# J x B x K state (at least one agent); a step touches about five such arrays.
CHUNK_BYTES = 1 << 20


@dataclass(frozen=True)
class AgentChunk:
    """Agents ``start`` to ``stop`` (in size order) padded to a common number of rows m.

    ``features`` (g, m, J_c) float32 with zero padding rows holds only the chunk's ``columns``: the
    indices of the J_c features that are nonzero in some row of the chunk, or ``slice(None)`` when
    all J are (then ``features`` is a view of its block). Every dropped feature is zero in every row,
    so x w = x[columns] w[columns] and the gradient's other rows are zero. ``labels`` (g, m) (0 on
    padding), ``onehot`` (g, 1, K, m) float32 (class-major like ``softmax``'s per-example arrays;
    zero on padding), ``valid`` (g, m) bool and ``feature_l1`` (g, m) float64, the ||x_pi||_1 (0 on
    padding), are views into the arrays of a block of similar-size agents. ``feature_rows`` (J,) int
    gives each feature's row in ``features``' last axis (and in the chunk's loss gradients), or -1
    for a dropped feature.
    """

    start: int
    stop: int
    features: np.ndarray
    labels: np.ndarray
    onehot: np.ndarray
    valid: np.ndarray
    columns: np.ndarray | slice
    feature_l1: np.ndarray
    feature_rows: np.ndarray


@dataclass(frozen=True)
class FederatedData:
    """The agents' training data, in chunks of agents for batched matrix products.

    ``agent_ids[p]`` is the original index (writer, shard) of internal agent p; ``sizes`` are the
    I_p in internal order (ascending).
    """

    chunks: tuple[AgentChunk, ...]
    agent_ids: np.ndarray
    sizes: np.ndarray
    n_features: int
    n_classes: int

    @property
    def n_agents(self) -> int:
        """P."""
        return int(self.sizes.size)

    @property
    def n_total(self) -> int:
        """I = sum_p I_p."""
        return int(self.sizes.sum())


def size_blocks(sizes: np.ndarray, overhead_rows: int = BLOCK_OVERHEAD_ROWS) -> list[tuple[int, int]]:
    """Partition agents sorted by size into consecutive blocks that minimise padded work.

    Parameters
    ----------
    sizes : numpy.ndarray of int, shape (P,)
        Agent sizes in ascending order.
    overhead_rows : int
        Fixed cost of one block, in padded rows.

    Returns
    -------
    list of (start, stop)
        Blocks covering 0..P; block cost = (stop - start) * sizes[stop - 1] + overhead_rows, and
        the total cost is minimal (dynamic programming over the sorted sizes).
    """
    n = len(sizes)
    best = np.full(n + 1, np.inf)
    best[0] = 0.0
    cut = np.zeros(n + 1, dtype=int)
    for stop in range(1, n + 1):
        starts = np.arange(stop)
        costs = best[:stop] + (stop - starts) * float(sizes[stop - 1]) + overhead_rows
        cut[stop] = int(np.argmin(costs))
        best[stop] = costs[cut[stop]]
    blocks = []
    stop = n
    while stop > 0:
        blocks.append((int(cut[stop]), stop))
        stop = cut[stop]
    return blocks[::-1]


def checked_rows(
    features: np.ndarray, labels: np.ndarray, offsets: np.ndarray, n_classes: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The agents' rows as float32 features, int labels, int64 offsets and sizes I_p, after checking them.

    Arguments as in :func:`federated_data`; raises ``ValueError`` naming what is wrong.
    """
    features = np.asarray(features, dtype=DTYPE)
    labels = np.asarray(labels, dtype=np.intp)
    offsets = np.asarray(offsets, dtype=np.int64)
    sizes = np.diff(offsets)
    if offsets.ndim != 1 or sizes.size == 0 or offsets[0] != 0 or offsets[-1] != len(features):
        raise ValueError(f"offsets must run from 0 to the number of rows {len(features)}; got {offsets}")
    if np.any(sizes < 1):
        raise ValueError(f"every agent needs at least one row; agents {np.flatnonzero(sizes < 1)} have none")
    if labels.shape != (len(features),) or labels.min() < 0 or labels.max() >= n_classes:
        raise ValueError(f"labels must be {len(features)} class indices in 0..{n_classes - 1}")
    return features, labels, offsets, sizes


def federated_data(
    features: np.ndarray,
    labels: np.ndarray,
    offsets: np.ndarray,
    n_classes: int,
    *,
    replicas: int = 1,
    chunk_bytes: int = CHUNK_BYTES,
) -> FederatedData:
    """Group the agents' rows into padded float32 blocks and chunks.

    The blocks and chunks are the input of :func:`~dpdl.algorithms.dp_iadmm.run_iadmm`.

    Parameters
    ----------
    features : numpy.ndarray, shape (I, J)
        Training features, agents' rows contiguous; converted to float32 once (a float32 array
        is used without copying where a block needs no padding).
    labels : numpy.ndarray of int, shape (I,)
        Class indices in 0..n_classes-1.
    offsets : numpy.ndarray of int, shape (P + 1,)
        Agent p owns rows offsets[p]:offsets[p+1]; every agent needs at least one row.
    n_classes : int
        K.
    replicas : int
        B, the replicas the data will be run with (it sets the chunk size).
    chunk_bytes : int
        A chunk holds as many agents as fit their J x B x K float32 state in this many bytes (at
        least one). The chunking changes only the order of float32 sums over agents.

    Returns
    -------
    FederatedData
    """
    features, labels, offsets, sizes = checked_rows(features, labels, offsets, n_classes)
    order = np.argsort(sizes, kind="stable")
    sorted_sizes = sizes[order]
    per_chunk = max(1, chunk_bytes // (features.shape[1] * replicas * n_classes * np.dtype(DTYPE).itemsize))
    chunks = []
    for start, stop in size_blocks(sorted_sizes):
        agents = order[start:stop]
        width = int(sorted_sizes[stop - 1])
        first = offsets[agents[0]]
        if np.all(sizes[agents] == width) and np.array_equal(
            offsets[agents], first + width * np.arange(len(agents))
        ):
            rows = slice(first, first + width * len(agents))
            block_features = features[rows].reshape(len(agents), width, -1)  # a view: no padding needed
            block_labels = labels[rows].reshape(len(agents), width)
            valid = np.ones((len(agents), width), dtype=bool)
        else:
            block_features = np.zeros((len(agents), width, features.shape[1]), dtype=DTYPE)
            block_labels = np.zeros((len(agents), width), dtype=np.intp)
            valid = np.zeros((len(agents), width), dtype=bool)
            for row, agent in enumerate(agents):
                n = sizes[agent]
                block_features[row, :n] = features[offsets[agent] : offsets[agent + 1]]
                block_labels[row, :n] = labels[offsets[agent] : offsets[agent + 1]]
                valid[row, :n] = True
        onehot = softmax.one_hot(block_labels, n_classes, DTYPE) * valid[:, None, None, :]  # zero on padding
        block_l1 = np.abs(block_features).sum(axis=2, dtype=np.float64)
        for first_row in range(0, len(agents), per_chunk):
            part = slice(first_row, first_row + per_chunk)
            chunk_start = start + first_row
            chunk_stop = min(stop, chunk_start + per_chunk)
            chunk_features, columns = block_features[part], slice(None)
            used = np.flatnonzero(chunk_features.any(axis=(0, 1)))
            if len(used) < features.shape[1]:
                chunk_features, columns = np.ascontiguousarray(chunk_features[:, :, used]), used
            feature_rows = np.full(features.shape[1], -1, dtype=np.int64)
            feature_rows[used] = np.arange(len(used))
            chunks.append(
                AgentChunk(
                    chunk_start,
                    chunk_stop,
                    chunk_features,
                    block_labels[part],
                    onehot[part],
                    valid[part],
                    columns,
                    block_l1[part],
                    feature_rows,
                )
            )
    return FederatedData(tuple(chunks), order, sorted_sizes, features.shape[1], n_classes)


def chunk_loss_gradients(
    chunk: AgentChunk, z: np.ndarray, scale: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Return scale_p sum_i x_pi (h(z_p; x_pi) - y_pi)^T on the chunk's features, and the residual norms.

    Parameters
    ----------
    chunk : AgentChunk
    z : numpy.ndarray, shape (g, J, B, K)
        The chunk's local iterates.
    scale : numpy.ndarray, shape (g,)
        1/I (ObjP, ObjT: (2c), (37)) or 1/I_p (OutP, the agent-average loss).

    Returns
    -------
    tuple of numpy.ndarray
        The loss part of (37), shape (g, J_c, B, K), rows ``chunk.columns`` (every other feature's
        row is zero); and ||h(z_p; x_pi) - y_pi||_1 of every row (padding rows included), shape
        (g, B, m), for the sensitivity (20).
    """
    active_z = z[:, chunk.columns]  # the features dropped from the chunk add nothing to x z
    probs = softmax.probabilities(chunk.features, active_z)
    residual_norms = softmax.residual_l1(probs, chunk.labels)
    probs -= chunk.onehot  # h - y (zero-feature padding rows add nothing to the gradient)
    per_agent = scale.astype(DTYPE)[:, None, None, None]
    scale_residuals = probs.size < active_z.size  # scale the smaller of (h - y) and the product
    if scale_residuals:
        probs *= per_agent
    loss_gradient = softmax.gradient_sum(chunk.features, probs)  # rows of the chunk's nonzero features
    if not scale_residuals:
        loss_gradient *= per_agent
    return loss_gradient, residual_norms


def chunk_gradients(
    chunk: AgentChunk, z: np.ndarray, scale: np.ndarray, beta: float, n_agents: int, out: np.ndarray
) -> np.ndarray:
    """Write f'_p(z_p) = scale_p sum_i x_pi (h(z_p; x_pi) - y_pi)^T + (2 beta / P) z_p into ``out``.

    ``chunk``, ``z`` and ``scale`` as in :func:`chunk_loss_gradients`; ``beta`` and ``n_agents``
    (P) give the regulariser's term; ``out`` has z's shape (g, J, B, K). Returns the residual
    norms of :func:`chunk_loss_gradients`. (The runs fuse this sum into
    :func:`dpdl.algorithms.dp_iadmm_kernel.fused_step`.)
    """
    loss_gradient, residual_norms = chunk_loss_gradients(chunk, z, scale)
    np.multiply(z, np.float32(2.0 * beta / n_agents), out=out)
    out[:, chunk.columns] += loss_gradient  # (37): (1/I) sum x (h - y) + (2 beta / P) z
    return residual_norms


def chunk_sensitivities(data: FederatedData, chunk: AgentChunk, residual_norms: np.ndarray) -> np.ndarray:
    """Delta-bar_p^t of (20) for the chunk's agents and every replica, shape (g, B).

    ``residual_norms`` (g, B, m) are the ||h - y||_1 of :func:`chunk_gradients`, passed to (20) as
    one-column residuals; padding rows have ||x||_1 = 0 and add nothing.
    """
    # (20)
    return objp_sensitivity(chunk.feature_l1[:, None, :], residual_norms[..., None], n_total=data.n_total)
