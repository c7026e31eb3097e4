"""Image preprocessing: any image → the tensor your model was trained on; one home for every image path.

Both ways your images reach your model use :class:`ImagePreprocessing` and its one pipeline
(:func:`preprocess_picture`): a ``family: custom`` model's ``external.models.<name>.preprocess`` block
(:meth:`ImagePreprocessing.of_model`; CoSy's generated images, ``neuroneval cosy --preprocess``; applied to
``uint8`` arrays by :func:`preprocess_images`), and a ``kind: images`` dataset's ``preprocess`` block
(:meth:`ImagePreprocessing.of_dataset`, keys ``size``, ``grayscale``, ``mean``, ``std``, ``flatten``; applied to
image files by :func:`preprocess_file`). (The loaders of published models, :mod:`neuroneval.models.loaders`,
apply the model library's own transform instead: torchvision's, timm's, open_clip's.) The steps, in order:

1. resize to ``image_size`` pixels, a square side or ``[H, W]`` (PIL bilinear with antialiasing; ``None`` keeps
   the size);
2. ``channels: 1``: grayscale by ITU-R 601-2 luma, PIL's ``L`` mode ``Y = (299 R + 587 G + 114 B) / 1000``;
   ``channels: 3``: RGB as it is;
3. ``invert``: ``p ← 255 − p`` (light ink on a dark ground, as in sklearn's digits, from dark-on-light images);
4. value range: ``x = low + (high − low) · p / 255`` with ``value_range: [low, high]`` (``[0, 1]``: ``p / 255``;
   ``[0, 16]``: sklearn's digits; ``[0, 255]``: raw pixels);
5. normalisation: ``x_c ← (x_c − mean_c) / std_c`` per channel (``mean``/``std``: one value, or one per channel;
   none: no normalisation);
6. layout: ``(N, C, H, W)`` (``layout: chw``, PyTorch's), ``(N, H, W, C)`` (``hwc``), ``(N, H, W)`` for one
   channel with ``layout: hw``; ``flatten: true`` then gives one row of ``C·H·W`` values per image, in that order.

So a model trained on 8×8 digits (``digits.data / 16``) declares ``{image_size: 8, channels: 1, flatten: true}``,
and a small CNN on 32×32 RGB normalised by ImageNet's statistics ``{image_size: 32, mean: [0.485, 0.456, 0.406],
std: [0.229, 0.224, 0.225]}``; an images dataset's ``{size: [H, W], grayscale: true, mean, std, flatten}`` is
steps 1, 2, 5 and 6 (``image_size: [H, W]``, ``channels: 1``) with ``value_range`` ``[0, 1]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from neuroneval.options import Options, OptionsError, check_choice, check_range

LAYOUTS = ("chw", "hwc", "hw")


@dataclass(frozen=True)
class ImagePreprocessing(Options):
    """How an RGB ``uint8`` image becomes one input of your model (module docstring: steps 1–6, in that order);
    ``image_size`` is a square side or ``(H, W)``."""

    image_size: int | tuple[int, int] | None = None
    channels: Literal[1, 3] = 3
    invert: bool = False
    value_range: tuple[float, float] = (0.0, 1.0)
    mean: tuple[float, ...] | None = None
    std: tuple[float, ...] | None = None
    layout: Literal["chw", "hwc", "hw"] = "chw"
    flatten: bool = False

    def validate(self) -> None:
        if isinstance(self.image_size, tuple):
            if len(self.image_size) != 2 or any(not isinstance(side, int) or isinstance(side, bool) or side < 1
                                                for side in self.image_size):
                raise OptionsError(f"ImagePreprocessing.image_size must be a positive integer or two [H, W], got "
                                   f"{self.image_size!r}")
        elif self.image_size is not None:
            check_range(self, "image_size", 1, integer=True)
        if self.channels not in (1, 3) or isinstance(self.channels, bool):
            raise OptionsError(f"ImagePreprocessing.channels must be 1 (grayscale) or 3 (RGB), got {self.channels!r}")
        for name in ("invert", "flatten"):
            if not isinstance(getattr(self, name), bool):
                raise OptionsError(f"ImagePreprocessing.{name} must be true or false, got {getattr(self, name)!r}")
        low_high = self.value_range
        if (not isinstance(low_high, tuple) or len(low_high) != 2
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in low_high)
                or not low_high[0] < low_high[1]):
            raise OptionsError(f"ImagePreprocessing.value_range must be [low, high] with low < high, got {low_high!r}")
        check_choice(self, "layout", LAYOUTS)
        if self.layout == "hw" and self.channels != 1:
            raise OptionsError("ImagePreprocessing.layout 'hw' (no channel axis) needs channels: 1, got "
                               f"channels: {self.channels}")
        if (self.mean is None) != (self.std is None):
            raise OptionsError(f"ImagePreprocessing.mean and std come together, got mean={self.mean!r}, "
                               f"std={self.std!r}")
        for name in ("mean", "std"):
            values = getattr(self, name)
            if values is None:
                continue
            if not isinstance(values, tuple) or len(values) not in (1, self.channels) or not all(
                    isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v) for v in values):
                raise OptionsError(f"ImagePreprocessing.{name} must be one number or one per channel "
                                   f"({self.channels}), got {values!r}")
        if self.std is not None and min(self.std) <= 0:
            raise OptionsError(f"ImagePreprocessing.std must be positive, got {self.std!r}")

    @classmethod
    def of_model(cls, spec: dict | None, *, key: str) -> ImagePreprocessing:
        """The ``preprocess`` block of a model spec (absent: the defaults); errors name ``key``."""
        block = (spec or {}).get("preprocess") or {}
        if isinstance(block.get("mean"), (int, float)):
            block = {**block, "mean": [block["mean"]]}
        if isinstance(block.get("std"), (int, float)):
            block = {**block, "std": [block["std"]]}
        try:
            return cls.from_params(block)
        except (OptionsError, TypeError) as error:
            raise OptionsError(f"{key}.preprocess: {error}") from error


    @classmethod
    def of_dataset(cls, block: Mapping[str, Any] | None) -> ImagePreprocessing:
        """The ``preprocess`` block of a ``kind: images`` dataset (keys ``size`` ``[H, W]``, ``grayscale``,
        ``mean``, ``std``, ``flatten``; module docstring): ``p / 255``, standardised where ``mean`` or ``std`` is
        given (the other one then 0 or 1).

        >>> ImagePreprocessing.of_dataset({"size": [4, 6], "grayscale": True, "std": [0.5]})
        ImagePreprocessing(image_size=(4, 6), channels=1, invert=False, value_range=(0.0, 1.0), mean=(0.0,), \
std=(0.5,), layout='chw', flatten=False)
        """
        block = dict(block or {})
        unknown = sorted(set(block) - set(DATASET_KEYS))
        if unknown:
            raise OptionsError(f"ImagePreprocessing: unknown option {unknown[0]!r} of an images dataset; known "
                               f"options are {list(DATASET_KEYS)}")
        size = block.get("size")
        if size is not None and (not isinstance(size, list | tuple) or len(size) != 2):
            raise OptionsError(f"ImagePreprocessing.size must be two positive integers [H, W], got {size!r}")
        mean, std = block.get("mean"), block.get("std")
        if not isinstance(block.get("grayscale", False), bool):
            raise OptionsError(f"ImagePreprocessing.grayscale must be true or false, got {block['grayscale']!r}")
        standardised = mean is not None or std is not None
        return cls(image_size=tuple(size) if size is not None else None,
                   channels=1 if block.get("grayscale", False) else 3,
                   mean=tuple(mean if mean is not None else [0.0]) if standardised else None,
                   std=tuple(std if std is not None else [1.0]) if standardised else None,
                   flatten=block.get("flatten", False))


#: The keys of a ``kind: images`` dataset's ``preprocess`` block (:meth:`ImagePreprocessing.of_dataset`).
DATASET_KEYS = ("size", "grayscale", "mean", "std", "flatten")


def preprocess_picture(picture: Any, options: ImagePreprocessing) -> np.ndarray:
    """One PIL image → one float32 model input (module docstring, steps 1–6): ``(C, H, W)``, ``(H, W, C)``,
    ``(H, W)`` or, with ``flatten``, ``(C·H·W,)``."""
    from PIL import Image

    mode = "L" if options.channels == 1 else "RGB"
    picture = picture.convert(mode) if picture.mode != mode else picture
    if options.image_size is not None:
        height, width = (options.image_size,) * 2 if isinstance(options.image_size, int) else options.image_size
        if picture.size != (width, height):
            picture = picture.resize((width, height), Image.Resampling.BILINEAR)
    pixels = np.asarray(picture, dtype=np.float32).reshape(picture.size[1], picture.size[0], -1)  # (H, W, C)
    if options.invert:
        pixels = 255.0 - pixels
    low, high = (float(v) for v in options.value_range)
    values = low + (high - low) * pixels / 255.0
    if options.mean is not None and options.std is not None:
        values = (values - np.asarray(options.mean, dtype=np.float32)) / np.asarray(options.std, dtype=np.float32)
    if options.layout == "chw":
        values = values.transpose(2, 0, 1)
    elif options.layout == "hw":
        values = values[..., 0]
    values = np.ascontiguousarray(values, dtype=np.float32)
    return values.reshape(-1) if options.flatten else values


def preprocess_images(images: np.ndarray, options: ImagePreprocessing) -> np.ndarray:
    """``(N, H, W, 3)`` (or ``(N, H, W)`` grayscale) ``uint8`` images → float32 model inputs
    (:func:`preprocess_picture` of each).

    >>> ones = np.full((2, 4, 4, 3), 255, dtype=np.uint8)
    >>> preprocess_images(ones, ImagePreprocessing(image_size=2, channels=1, flatten=True)).tolist()
    [[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]]
    """
    from PIL import Image

    images = np.asarray(images)
    if images.dtype != np.uint8 or images.ndim not in (3, 4) or (images.ndim == 4 and images.shape[-1] != 3):
        raise ValueError(f"expected uint8 images (N, H, W, 3) or (N, H, W), got {images.dtype} {images.shape}")
    return np.stack([preprocess_picture(Image.fromarray(image), options) for image in images])


def preprocess_file(path: str | Path, options: ImagePreprocessing) -> np.ndarray:
    """One image file (any mode PIL reads, converted straight to grey or RGB) → one float32 model input
    (:func:`preprocess_picture`).

    >>> from PIL import Image; import tempfile
    >>> file = Path(tempfile.mkdtemp()) / "a.png"; Image.fromarray(np.full((2, 2), 255, np.uint8)).save(file)
    >>> preprocess_file(file, ImagePreprocessing(channels=1, mean=(0.5,), std=(0.5,), flatten=True)).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    from PIL import Image

    with Image.open(path) as picture:
        return preprocess_picture(picture, options)
