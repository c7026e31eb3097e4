"""The declared input preprocessing of your own model: any RGB image → the tensor your model was trained on.

A ``family: custom`` model declares how an image becomes one of its inputs in ``external.models.<name>.preprocess``
(docs/your_model.md, "CoSy on your model"); :class:`ImagePreprocessing` holds it and :func:`preprocess_images`
applies it to a batch of ``uint8`` images (CoSy's synthetic images, or any image file). The steps, in order:

1. resize to ``image_size`` × ``image_size`` pixels (PIL bilinear with antialiasing; ``None`` keeps the size);
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
std: [0.229, 0.224, 0.225]}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from neuroneval.options import Options, OptionsError, check_choice, check_range

LAYOUTS = ("chw", "hwc", "hw")


@dataclass(frozen=True)
class ImagePreprocessing(Options):
    """How an RGB ``uint8`` image becomes one input of your model (module docstring: steps 1–6, in that order)."""

    image_size: int | None = None
    channels: Literal[1, 3] = 3
    invert: bool = False
    value_range: tuple[float, float] = (0.0, 1.0)
    mean: tuple[float, ...] | None = None
    std: tuple[float, ...] | None = None
    layout: Literal["chw", "hwc", "hw"] = "chw"
    flatten: bool = False

    def validate(self) -> None:
        if self.image_size is not None:
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


def preprocess_images(images: np.ndarray, options: ImagePreprocessing) -> np.ndarray:
    """``(N, H, W, 3)`` (or ``(N, H, W)`` grayscale) ``uint8`` images → float32 model inputs (module docstring).

    >>> ones = np.full((2, 4, 4, 3), 255, dtype=np.uint8)
    >>> preprocess_images(ones, ImagePreprocessing(image_size=2, channels=1, flatten=True)).tolist()
    [[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]]
    """
    from PIL import Image

    images = np.asarray(images)
    if images.dtype != np.uint8 or images.ndim not in (3, 4) or (images.ndim == 4 and images.shape[-1] != 3):
        raise ValueError(f"expected uint8 images (N, H, W, 3) or (N, H, W), got {images.dtype} {images.shape}")
    mode = "L" if options.channels == 1 else "RGB"
    pictures = []
    for image in images:
        picture = Image.fromarray(image)
        picture = picture.convert(mode) if picture.mode != mode else picture
        if options.image_size is not None and picture.size != (options.image_size, options.image_size):
            picture = picture.resize((options.image_size, options.image_size), Image.Resampling.BILINEAR)
        pictures.append(np.asarray(picture, dtype=np.float32).reshape(picture.size[1], picture.size[0], -1))
    pixels = np.stack(pictures)  # (N, H, W, C) in [0, 255]
    if options.invert:
        pixels = 255.0 - pixels
    low, high = (float(v) for v in options.value_range)
    values = low + (high - low) * pixels / 255.0
    if options.mean is not None and options.std is not None:
        values = (values - np.asarray(options.mean, dtype=np.float32)) / np.asarray(options.std, dtype=np.float32)
    if options.layout == "chw":
        values = values.transpose(0, 3, 1, 2)
    elif options.layout == "hw":
        values = values[..., 0]
    values = np.ascontiguousarray(values, dtype=np.float32)
    return values.reshape(len(values), -1) if options.flatten else values
