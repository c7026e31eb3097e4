"""The task pages of a crowd study of a setting's explanations, showing the user's media by input id (the workflow's
``explain_crowd_pages``: a setting of your own, docs/your_model.md)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from neuroneval.input_media import InputMedia

#: The sampling of the crowd task pages for a study whose ``explain.crowd.sampling`` is ``pseudo``: the pages are
#: drawn without pseudo-labels (an own dataset rarely has them for every explanation).
PAGES_PSEUDO_FALLBACK = "activation"


def write_explanation_pages(activation_files: list[str], explanation_files: dict[str, str], media: InputMedia,
                            directory: str | Path, *, n_inputs: int, sampling: str, seed: int,
                            title: str) -> list[Path]:
    """The task pages of a crowd study of a setting's explanations, showing its own media by input id.

    Every distinct ``(unit, explanation)`` of the method files (``{method: path}``, the first method listing a pair
    keeps it) is one pair of :func:`neuroneval.crowd.design.design_study` (``n_inputs`` draws, ``sampling``; a
    ``pseudo`` sampling is drawn as :data:`PAGES_PSEUDO_FALLBACK`), written by
    :func:`neuroneval.crowd.study_folder.write_study` with ``media`` (checked against the first activation table
    by :func:`neuroneval.external.own_media.setting_media`).
    """
    import pandas as pd

    from neuroneval import io
    from neuroneval.crowd.design import design_study
    from neuroneval.crowd.study_folder import write_study
    from neuroneval.explain import read_explanations

    tables = [io.read_activation_table(path)[0] for path in activation_files]
    activations = tables[0]
    for path, table in zip(activation_files[1:], tables[1:], strict=True):
        io.check_matching_ids(activations, table, first_source=activation_files[0], second_source=path)
        activations = activations.merge(table, on="input_id", validate="one_to_one")
    pairs = pd.concat([read_explanations(path)[["unit", "explanation"]].assign(method=method)
                       for method, path in explanation_files.items()], ignore_index=True)
    pairs = pairs.assign(unit=pairs["unit"].astype(str), explanation=pairs["explanation"].astype(str))
    pairs = pairs[pairs["explanation"].str.len() > 0].drop_duplicates(["unit", "explanation"])
    drawn = PAGES_PSEUDO_FALLBACK if sampling == "pseudo" else sampling
    design = design_study(activations, pairs, n_draws=n_inputs, sampling=drawn, seed=seed)
    return write_study(design, directory, media=media, title=title,
                       info={"sampling": drawn, "media": media.source})
