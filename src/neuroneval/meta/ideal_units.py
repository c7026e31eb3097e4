"""A setting's ideal units read from the build's files: the units of the identifiability ceiling
(``results/ceiling.csv``) and of the explanation benchmark's ceiling rows (:mod:`neuroneval.explain.ideal`).

In a deterministic world the ideal unit of a unit with truth concepts ``T`` is the union of their ground-truth labels,
``a*(x) = max_{t∈T} c_t(x)`` (:func:`neuroneval.meta.ceiling.ideal_units_from_labels`); in a stochastic one the
generator's probability tables ``P(c_T | x)`` (:func:`neuroneval.settings.ideal_activation_paths`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from neuroneval.meta.ceiling import ideal_units_from_labels
from neuroneval.settings import SettingData, load_setting


def load_ideal_units(activation_files: Sequence[Path], concept_file: Path, labels_file: Path, truth: pd.DataFrame, *,
                     ideal_files: Sequence[Path] = (),
                     concept_prefixes: Sequence[str] = ()) -> tuple[SettingData, str]:
    """A setting's ideal units and their :data:`IDEAL_SOURCES` name, with the setting's concepts (``concept_file``).

    With ``ideal_files`` (generative-probability tables, e.g. :func:`neuroneval.settings.ideal_activation_paths`)
    those tables are the units (``generative_probability``); otherwise each unit of ``truth`` becomes the union of
    its concepts' ground-truth labels from ``labels_file`` (``labels``, :func:`ideal_units_from_labels`).
    """
    if ideal_files:
        data = load_setting([Path(path) for path in ideal_files], Path(concept_file),
                            concept_prefixes=concept_prefixes)
        return data, "generative_probability"
    activation_files = [Path(path) for path in activation_files]
    data = load_setting(activation_files, Path(concept_file), concept_prefixes=concept_prefixes)
    labels = load_setting(activation_files, Path(labels_file), concept_prefixes=[])
    return ideal_units_from_labels(data, truth, labels.concepts, labels.concept_names), "labels"
