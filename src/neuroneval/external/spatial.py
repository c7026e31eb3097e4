"""Per-pixel concept masks you supply for an external image dataset, and a layer's spatial maps on its images.

The Broden-style explanation methods (Network Dissection, Compositional Explanations; ``explain.settings.<s>
.spatial``) compare a hidden layer's activation maps with per-pixel concept masks. Real datasets have none
built in, so they are a path you declare in ``external.datasets.<name>.masks`` (relative to
``external.data_root`` unless absolute), in one of two layouts holding the same three arrays:

* an ``.npz`` file with arrays ``files``, ``concepts`` and ``masks``;
* a folder with ``files.npy``, ``concepts.npy`` and ``masks.npy`` (read memory-mapped: only the rows used are
  loaded, for mask sets larger than memory).

``files`` (N,) str
    Image paths relative to the dataset's ``root``, as the ``path`` column of ``data/external/<name>/inputs.csv``
    (``n01440764/ILSVRC2012_val_00000293.JPEG``); every path at most once. Images without masks are skipped.
``concepts`` (T,) str
    The concept of each mask channel, named as in the setting's concept table (``class:tench``,
    ``parent:fish``); channels of other concepts are ignored, and at least one must be a concept of the setting.
``masks`` (N, T, H, W) bool or 0/1 integers
    Pixel ``(h, w)`` of image ``n`` shows concept ``t``. H and W must be multiples of the layer's map size (maps
    are upsampled to the masks, :func:`neuroneval.explain.dissection.upsample`).

Every problem is a :class:`MaskError` naming the params key and the file.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

#: The arrays of a mask file (``<key>`` in an ``.npz``, ``<key>.npy`` in a folder).
MASK_ARRAYS = ("files", "concepts", "masks")


class MaskError(ValueError):
    """A user-supplied concept-mask file is missing, malformed or does not fit the setting."""


@dataclass(frozen=True)
class ConceptMasks:
    """Masks of the requested images and the setting's concepts: ``masks`` (n, t, H, W) bool; ``rows`` index the
    requested files that have masks, ``concepts`` the mask channels kept, in the setting's concept order."""

    rows: np.ndarray
    concepts: list[str]
    masks: np.ndarray


def _arrays(path: Path, key: str) -> dict[str, np.ndarray]:
    """The three arrays of a mask file or folder (``masks`` memory-mapped from a folder)."""
    if not path.exists():
        raise MaskError(f"{key}: {path} does not exist (an .npz file or a folder of .npy files, see "
                        "docs/paper_profile.md)")
    try:
        if path.is_dir():
            missing = [name for name in MASK_ARRAYS if not (path / f"{name}.npy").is_file()]
            if missing:
                raise MaskError(f"{key}: folder {path} lacks {', '.join(f'{m}.npy' for m in missing)}")
            return {name: np.load(path / f"{name}.npy", mmap_mode="r" if name == "masks" else None,
                                  allow_pickle=False) for name in MASK_ARRAYS}
        with np.load(path, allow_pickle=False) as archive:
            missing = [name for name in MASK_ARRAYS if name not in archive.files]
            if missing:
                raise MaskError(f"{key}: {path} lacks the array(s) {missing} (has {sorted(archive.files)})")
            return {name: archive[name] for name in MASK_ARRAYS}
    except (OSError, ValueError) as error:
        if isinstance(error, MaskError):
            raise
        raise MaskError(f"{key}: cannot read {path}: {error}") from error


def _checked(arrays: dict[str, np.ndarray], path: Path, key: str) -> tuple[list[str], list[str], np.ndarray]:
    """Files, concepts and masks after the shape, dtype and uniqueness checks."""
    files, concepts, masks = (arrays[name] for name in MASK_ARRAYS)
    if files.ndim != 1 or concepts.ndim != 1 or files.dtype.kind not in "US" or concepts.dtype.kind not in "US":
        raise MaskError(f"{key}: {path}: 'files' and 'concepts' must be 1-D string arrays, got "
                        f"{files.dtype}{files.shape} and {concepts.dtype}{concepts.shape}")
    if masks.ndim != 4 or masks.shape[:2] != (len(files), len(concepts)):
        raise MaskError(f"{key}: {path}: 'masks' must have shape (files={len(files)}, concepts={len(concepts)}, H, "
                        f"W), got {masks.shape}")
    if masks.dtype != bool and masks.dtype.kind not in "iu":
        raise MaskError(f"{key}: {path}: 'masks' must be bool or 0/1 integers, got {masks.dtype}")
    for name, values in (("files", files), ("concepts", concepts)):
        unique, counts = np.unique(values, return_counts=True)
        if (counts > 1).any():
            raise MaskError(f"{key}: {path}: '{name}' repeats {unique[counts > 1][:3].tolist()}")
    return [str(f) for f in files], [str(c) for c in concepts], masks


def load_concept_masks(path: str | Path, *, files: Sequence[str], concept_names: Sequence[str],
                       key: str = "masks") -> ConceptMasks:
    """The masks of ``files`` (dataset-relative image paths) for the concepts of ``concept_names`` that the file
    has; ``key`` (``external.datasets.<name>.masks``) names the params entry in errors."""
    path = Path(path)
    mask_files, mask_concepts, masks = _checked(_arrays(path, key), path, key)
    file_row = {name: row for row, name in enumerate(mask_files)}
    rows = np.array([i for i, name in enumerate(files) if str(name) in file_row], dtype=np.int64)
    if rows.size == 0:
        raise MaskError(f"{key}: {path} has masks for none of the {len(files)} images asked for (e.g. "
                        f"{list(files[:2])}); 'files' must be paths relative to the dataset root")
    concept_row = {name: row for row, name in enumerate(mask_concepts)}
    kept = [name for name in concept_names if name in concept_row]
    if not kept:
        raise MaskError(f"{key}: {path} has masks for none of the setting's concepts (e.g. "
                        f"{list(concept_names[:3])}); its concepts are e.g. {mask_concepts[:3]}")
    source_rows = np.array([file_row[str(files[i])] for i in rows], dtype=np.int64)
    channels = np.array([concept_row[name] for name in kept], dtype=np.int64)
    order = np.argsort(source_rows, kind="stable")  # memory maps read fastest in file order
    selected = np.empty((rows.size, channels.size, *masks.shape[2:]), dtype=bool)
    selected[order] = np.asarray(masks[source_rows[order]])[:, channels] != 0
    return ConceptMasks(rows=rows, concepts=kept, masks=selected)


@torch.no_grad()
def layer_maps(model: torch.nn.Module, batches: Iterable[torch.Tensor], layer: str, *,
               device: torch.device | str | None = None) -> np.ndarray:
    """(N, C, h, w) float32 outputs of module ``layer`` of ``model`` over ``batches`` (not pooled)."""
    modules = dict(model.named_modules())
    if not layer or layer not in modules:
        raise ValueError(f"spatial layer {layer!r} is not a module of the model; modules: "
                         f"{sorted(name for name in modules if name)[:20]}")
    captured: list[np.ndarray] = []
    handle = modules[layer].register_forward_hook(
        lambda _module, _inputs, output: captured.append(output.float().cpu().numpy()))
    model.eval()
    try:
        for batch in batches:
            model(batch.to(device) if device is not None else batch)
    finally:
        handle.remove()
    maps = np.concatenate(captured)
    if maps.ndim != 4:
        raise ValueError(f"layer {layer!r} gives outputs of shape {maps.shape[1:]}, not (channels, h, w) maps")
    return maps
