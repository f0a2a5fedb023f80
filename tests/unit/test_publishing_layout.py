"""The snapshot's layout (dpdl.publishing.layout): which outputs of a finished build a study's folder holds."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_a_build_narrowed_to_the_stated_mnist_cells_is_publishable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """publish needs every output a config promises: config/paper_mnist_cells.yaml promises only its cells' (#22)."""
    from dpdl.config import load_config
    from dpdl.errors import DpdlError
    from dpdl.publishing.layout import study_outputs
    from dpdl.studies import study_module

    cells, paper = (load_config(ROOT / "config" / f"{name}.yaml") for name in ("paper_mnist_cells", "paper"))
    buildable = {"dp_iadmm/mnist"}  # FEMNIST lacks shards offline; paper.yaml's missing_shards: fail skips it
    monkeypatch.chdir(tmp_path)
    for path in study_module("dp_iadmm").targets(cells, buildable):  # a finished build of the cells config
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text("x\n")
    published = set(study_outputs("dp_iadmm", cells, buildable))
    assert {
        "claims.csv",
        "figures/fig2a.png",
        "aggregates/fig2a_seeds.csv",
        "tables/optimum.csv",
    } <= published
    assert not any(
        name.startswith(("figures/fig5", "tables/remark3", "aggregates/noiseless")) for name in published
    )
    with pytest.raises(
        DpdlError, match="the build is not finished"
    ):  # the whole paper grid is not built here
        study_outputs("dp_iadmm", paper, buildable)
