"""The contract every text-to-image generator of CoSy keeps (paper 002, Sec. 3 step 1), and its seeds.

Contract (:class:`ImageGenerator`): ``generate(prompts, seeds)`` returns ``(len(prompts), H, W, 3)`` uint8 RGB
and image ``j`` depends only on ``(prompts[j], seeds[j])`` and the generator's :meth:`~ImageGenerator.config`,
never on its position in the batch or on the other prompts. Seeds come from :func:`image_seed`, a hash of
(generation seed, prompt, image index), so image sets do not depend on order, batching or parallelism.
:func:`check_request` validates a ``generate`` call; :func:`config_hash` names a generator's configuration.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

SEED_MODULUS = 2**63


@runtime_checkable
class ImageGenerator(Protocol):
    """What every generator provides (the binding contract between the CoSy modules)."""

    name: str
    """``"oracle"`` | ``"embedded"`` | ``"diffusers"``."""

    def config(self) -> dict[str, Any]:
        """JSON-able description; its sorted-key JSON SHA-256 (first 12 hex) is the manifest's config hash."""
        ...

    def generate(self, prompts: Sequence[str], seeds: Sequence[int]) -> np.ndarray:
        """``(len(prompts), H, W, 3)`` uint8 RGB; image ``j`` depends only on ``(prompts[j], seeds[j])``."""
        ...


def config_hash(config: Mapping[str, Any]) -> str:
    """First 12 hex digits of the SHA-256 of ``config`` as sorted-key compact JSON.

    >>> config_hash({"b": 1, "a": [1, 2]}) == config_hash({"a": [1, 2], "b": 1})
    True
    """
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def image_seed(prompt: str, index: int, *, generation_seed: int = 0) -> int:
    """The seed of image ``index`` of ``prompt``: SHA-256 of ``(generation_seed, prompt, index)``, in [0, 2**63).

    Stable across runs, machines and Python versions (never Python's ``hash``), and independent of the order
    in which prompts or images are generated.

    >>> image_seed("a red circle", 0) == image_seed("a red circle", 0)
    True
    >>> image_seed("a red circle", 0) != image_seed("a red circle", 1)
    True
    """
    if int(index) < 0:
        raise ValueError(f"image index must be >= 0, got {index}")
    key = f"{int(generation_seed)}\x1f{prompt}\x1f{int(index)}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") % SEED_MODULUS


def check_request(prompts: Sequence[str], seeds: Sequence[int]) -> tuple[list[str], list[int]]:
    """Validate a ``generate`` call: same non-zero length, non-empty prompts, integer seeds in [0, 2**64)."""
    prompts = [str(prompt) for prompt in prompts]
    seeds = [int(seed) for seed in seeds]
    if len(prompts) == 0:
        raise ValueError("generate() needs at least one prompt, got an empty list")
    if len(prompts) != len(seeds):
        raise ValueError(f"generate() got {len(prompts)} prompts but {len(seeds)} seeds; give one seed per prompt")
    empty = [index for index, prompt in enumerate(prompts) if not prompt.strip()]
    if empty:
        raise ValueError(f"generate(): prompt(s) at position {empty[:5]} are empty")
    bad = [seed for seed in seeds if not 0 <= seed < 2**64]
    if bad:
        raise ValueError(f"generate(): seeds must be in [0, 2**64), got {bad[:5]}")
    return prompts, seeds
