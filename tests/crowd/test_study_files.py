"""Files of the simulated study: input tables are checked, per-unit error tables name what is wrong."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from neuroneval import io
from neuroneval.crowd import read_study_units, read_unit_errors
from tests.crowd.synthetic import planted_world


def _write_inputs(root, world, *, labels=None, pseudo_columns=None):
    ids = np.arange(len(world.activations))
    activations = pd.DataFrame(world.activations.astype(np.float32), columns=world.unit_ids).assign(input_id=ids)
    concepts = pd.DataFrame(world.labels if labels is None else labels, columns=world.concept_names)
    pseudo = pd.DataFrame(world.pseudo_labels, columns=world.concept_names)
    if pseudo_columns is not None:
        pseudo = pseudo[pseudo_columns]
    return (
        io.write_activation_table(root / "a.parquet", activations, metadata={"layer": "l"}),
        io.write_concept_table(root / "labels.parquet", concepts.assign(input_id=ids), metadata={"source": "labels"}),
        io.write_concept_table(root / "pseudo.parquet", pseudo.assign(input_id=ids), metadata={"source": "pseudo:x"}),
    )


def test_study_inputs_are_read_checked_and_explained(tmp_path):
    world = planted_world(n=2000, n_units=6, seed=3)
    options = {"concept_prefixes": [], "min_true_correlation": 0.1, "max_units": None}
    units = read_study_units(*_write_inputs(tmp_path, world), **options)
    assert set(units.unit_ids) <= set(world.unit_ids) and units.pseudo_labels is not None
    scores = world.labels * 0.5
    with pytest.raises(ValueError, match=r"labels\.parquet: ground-truth concept column\(s\) .* not binary"):
        read_study_units(*_write_inputs(tmp_path, world, labels=scores), **options)
    with pytest.raises(ValueError, match=r"pseudo\.parquet: pseudo-label table lacks concept column\(s\)"):
        read_study_units(*_write_inputs(tmp_path, world, pseudo_columns=world.concept_names[:3]), **options)


def test_unreadable_per_unit_tables_name_file_row_and_column(tmp_path):
    path = tmp_path / "units.csv"
    path.write_text("method,n_inputs,unit,relative_error\nuniform,10,u0,0.5\nuniform,10,u1,abc\n")
    with pytest.raises(ValueError, match=r"units\.csv, row 3, column relative_error: 'abc'"):
        read_unit_errors(path, "sampling")
    with pytest.raises(ValueError, match=r"units\.csv: missing column\(s\) \['n_raters', 'cost'\]"):
        read_unit_errors(path, "aggregation")
