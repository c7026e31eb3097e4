"""Tiny stand-ins for the paper profile's datasets and checkpoints, written in the profile's folder layout.

Every builder writes under a ``data_root`` the files ``profiles/paper.yaml`` names (``imagenet/val``,
``checkpoints/resnet50.pth``…) and returns the in-memory original, so tests can compare the pipeline's tables
with a direct forward pass. :func:`paper_overrides` is the overlay that points the profile at such a tree
and shrinks the architectures to match.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import torch
from PIL import Image

from tests.loaders.helpers import save_tiny_bpe_tokenizer

IMAGENET_CLASSES = ["n00000001", "n00000002", "n00000003", "n00000004", "n00000005"]
IMAGENET_NAMES = ["tench, Tinca tinca", "goldfish", "great white shark", "tiger shark", "hammerhead"]
SUPERCLASSES = {"fish": [0, 1], "shark": [2, 3, 4]}
PLACES_CLASSES = ["/a/airfield", "/b/bakery/shop", "/c/coast", "/d/desert/sand"]
CUB_CLASSES = ["001.Black_footed_Albatross", "002.Laysan_Albatross", "003.Sooty_Albatross", "004.Groove_billed_Ani"]
CUB_ATTRIBUTES = 312
IMAGES_PER_CLASS = 4
TINY_VIT = {"embed_dim": 32, "depth": 1, "num_heads": 2, "img_size": 32, "patch_size": 8}
SMALL_TRANSFORM = {"resize_size": 40, "crop_size": 32}
CLIP_CONFIG = {
    "embed_dim": 16,
    "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "patch_size": 16, "head_width": 16},
    "text_cfg": {"context_length": 12, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1},
}
SIGLIP_CONFIG = {**CLIP_CONFIG, "init_logit_bias": -10.0}


def random_image(rng: np.random.Generator, size: tuple[int, int] = (40, 48)) -> Image.Image:
    """A random RGB image (PNG keeps it exact)."""
    return Image.fromarray(rng.integers(0, 256, (*size, 3), dtype=np.uint8))


def write_imagenet(data_root: Path, *, seed: int = 0) -> Path:
    """``imagenet/val/<wnid>/<n>.png``, ``LOC_synset_mapping.txt`` and ``superclasses.json``; returns the root."""
    rng = np.random.default_rng(seed)
    folder = data_root / "imagenet"
    for wnid in IMAGENET_CLASSES:
        (folder / "val" / wnid).mkdir(parents=True, exist_ok=True)
        for index in range(IMAGES_PER_CLASS):
            random_image(rng).save(folder / "val" / wnid / f"{wnid}_{index}.png")
    (folder / "LOC_synset_mapping.txt").write_text(
        "".join(f"{wnid} {name}\n" for wnid, name in zip(IMAGENET_CLASSES, IMAGENET_NAMES, strict=True)))
    (folder / "superclasses.json").write_text(json.dumps(SUPERCLASSES))
    return folder / "val"


def write_places(data_root: Path, *, seed: int = 1) -> Path:
    """A flat ``places365/val_256`` folder with ``places365_val.txt`` and ``categories_places365.txt``."""
    rng = np.random.default_rng(seed)
    folder = data_root / "places365"
    (folder / "val_256").mkdir(parents=True, exist_ok=True)
    lines = []
    for index in range(IMAGES_PER_CLASS * len(PLACES_CLASSES)):
        name = f"Places365_val_{index + 1:08d}.png"
        random_image(rng, (36, 36)).save(folder / "val_256" / name)
        lines.append(f"{name} {index % len(PLACES_CLASSES)}\n")
    (folder / "places365_val.txt").write_text("".join(lines))
    (folder / "categories_places365.txt").write_text(
        "".join(f"{name} {index}\n" for index, name in enumerate(PLACES_CLASSES)))
    return folder / "val_256"


def write_cub(data_root: Path, *, seed: int = 2) -> Path:
    """A ``CUB_200_2011`` release in miniature: 4 classes x 4 images (half train), all 312 attributes."""
    rng = np.random.default_rng(seed)
    root = data_root / "CUB_200_2011"
    (root / "attributes").mkdir(parents=True, exist_ok=True)
    images, labels, split, attribute_lines = [], [], [], []
    image_id = 0
    for class_index, class_name in enumerate(CUB_CLASSES):
        (root / "images" / class_name).mkdir(parents=True, exist_ok=True)
        for index in range(IMAGES_PER_CLASS):
            image_id += 1
            relative = f"{class_name}/{class_name.split('.')[1]}_{index:04d}.png"
            random_image(rng).save(root / "images" / relative)
            images.append(f"{image_id} {relative}\n")
            labels.append(f"{image_id} {class_index + 1}\n")
            split.append(f"{image_id} {int(index % 2 == 0)}\n")
            present = rng.random(CUB_ATTRIBUTES) < 0.4
            attribute_lines += [f"{image_id} {attribute + 1} {int(present[attribute])} 3 10.5\n"
                                for attribute in range(CUB_ATTRIBUTES)]
    (root / "images.txt").write_text("".join(images))
    (root / "image_class_labels.txt").write_text("".join(labels))
    (root / "train_test_split.txt").write_text("".join(split))
    (root / "classes.txt").write_text("".join(f"{k + 1} {name}\n" for k, name in enumerate(CUB_CLASSES)))
    (root / "attributes" / "image_attribute_labels.txt").write_text("".join(attribute_lines))
    parts = ["has_bill_shape", "has_wing_color", "has_upperparts_color", "has_breast_pattern"]
    (data_root / "attributes.txt").write_text(
        "".join(f"{k + 1} {parts[k % len(parts)]}::value_{k + 1}\n" for k in range(CUB_ATTRIBUTES)))
    return root


def write_openwebtext(data_root: Path, *, documents: int = 6, seed: int = 3) -> Path:
    """``openwebtext/`` with ``.txt`` documents and one ``.jsonl`` shard of short English-like text."""
    rng = np.random.default_rng(seed)
    words = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran", "to", "the", "park", "and", "then", "home"]
    folder = data_root / "openwebtext"
    folder.mkdir(parents=True, exist_ok=True)
    texts = [" ".join(rng.choice(words, size=60)) + "." for _ in range(documents)]
    for index, text in enumerate(texts[:-2]):
        (folder / f"doc_{index:03d}.txt").write_text(text)
    (folder / "shard.jsonl").write_text("".join(json.dumps({"text": text}) + "\n" for text in texts[-2:]))
    return folder


def save_torchvision(path: Path, arch: str, num_classes: int, *, seed: int) -> torch.nn.Module:
    """A randomly initialised torchvision classifier saved as a state dict at ``path``."""
    import torchvision

    torch.manual_seed(seed)
    model = torchvision.models.get_model(arch, weights=None, num_classes=num_classes).eval()
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), path)
    return model


def save_timm_vit(folder: Path, num_classes: int, *, seed: int) -> torch.nn.Module:
    """A tiny ``vit_base_patch16_224`` (TINY_VIT dims) saved as ``folder/model.safetensors``."""
    import timm
    from safetensors.torch import save_file

    torch.manual_seed(seed)
    model = timm.create_model("vit_base_patch16_224", pretrained=False, num_classes=num_classes, **TINY_VIT).eval()
    folder.mkdir(parents=True, exist_ok=True)
    save_file({key: value.contiguous() for key, value in model.state_dict().items()}, folder / "model.safetensors")
    return model


def save_open_clip(folder: Path, config: dict[str, Any], *, seed: int, quick_gelu: bool = False) -> torch.nn.Module:
    """An open_clip model in the Hugging Face snapshot layout: ``open_clip_config.json`` + weights."""
    import open_clip

    torch.manual_seed(seed)
    model = open_clip.CLIP(**config, quick_gelu=quick_gelu, output_dict=True).eval()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "open_clip_config.json").write_text(json.dumps({"model_cfg": config, "preprocess_cfg": {}}))
    torch.save(model.state_dict(), folder / "open_clip_pytorch_model.bin")
    return model


def save_gpt2(folder: Path, *, n_layer: int, seed: int) -> torch.nn.Module:
    """A tiny GPT-2 with a byte-level BPE tokenizer, ``save_pretrained`` into ``folder``."""
    from transformers import GPT2Config, GPT2LMHeadModel

    vocab_size = save_tiny_bpe_tokenizer(folder)
    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=vocab_size, n_positions=32, n_embd=32, n_layer=n_layer, n_head=2,
                        bos_token_id=vocab_size - 1, eos_token_id=vocab_size - 1)
    model = GPT2LMHeadModel(config).eval()
    model.save_pretrained(folder)
    return model


def write_paper_tree(data_root: Path) -> dict[str, torch.nn.Module]:
    """Every dataset and checkpoint of ``profiles/paper.yaml`` in miniature; returns the models by profile name."""
    write_imagenet(data_root)
    write_places(data_root)
    write_cub(data_root)
    write_openwebtext(data_root)
    checkpoints = data_root / "checkpoints"
    return {
        "vit_b16": save_timm_vit(checkpoints / "vit_base_patch16_224", len(IMAGENET_CLASSES), seed=0),
        "resnet50": save_torchvision(checkpoints / "resnet50.pth", "resnet18", len(IMAGENET_CLASSES), seed=1),
        "resnet18_places": save_torchvision(checkpoints / "resnet18_places365.pth.tar", "resnet18",
                                            len(PLACES_CLASSES), seed=2),
        "cub_cbm": save_torchvision(checkpoints / "cub_cbm_inception_v3.pth", "resnet18", 112, seed=3),
        "clip_b32": save_open_clip(checkpoints / "vit_base_patch32_clip_224.openai", CLIP_CONFIG, seed=4,
                                   quick_gelu=True),
        "siglip": save_open_clip(checkpoints / "ViT-SO400M-14-SigLIP-384", SIGLIP_CONFIG, seed=5),
        "gpt2_small": save_gpt2(checkpoints / "gpt2", n_layer=1, seed=6),
        "gpt2_xl": save_gpt2(checkpoints / "gpt2-xl", n_layer=2, seed=7),
    }


def paper_overrides(data_root: Path) -> dict[str, Any]:
    """The overlay that points ``profiles/paper.yaml`` at a :func:`write_paper_tree` tree (tiny architectures)."""
    small = {"image_transform": SMALL_TRANSFORM}
    return {
        "external": {
            "data_root": str(data_root), "device": "cpu", "batch_size": 8, "num_workers": 0,
            "datasets": {"openwebtext": {"max_tokens": 600}},
            "models": {
                "vit_b16": {"num_classes": len(IMAGENET_CLASSES), "model_kwargs": dict(TINY_VIT)},
                "resnet50": {"arch": "resnet18", "num_classes": len(IMAGENET_CLASSES), **small},
                "resnet18_places": {"num_classes": len(PLACES_CLASSES), **small},
                "cub_cbm": {"arch": "resnet18", **small},
                "gpt2_small": {"context_length": 32},
                "gpt2_xl": {"context_length": 32},
            },
            "probes": {"cub_probe": {"training": {"epochs": 3, "batch_size": 4}}},
        },
        "activations": {"next_token": {"n_units": 8, "max_positions": 400, "batch_size": 4}},
        "meta": {"alpha_grid": [0.05, 0.1, 0.2, 0.5], "lam_grid": [0.0, 0.5, 1.0]},
    }


def write_imagenet_masks(data_root: Path, *, size: int = 4, seed: int = 8) -> Path:
    """``imagenet/concept_masks`` (the profile's ``external.datasets.imagenet_val.masks``): ``files.npy``,
    ``concepts.npy`` and ``masks.npy`` for every image of :func:`write_imagenet` but the last; an image's class
    and superclass cover a random box of its ``size`` x ``size`` mask, other concepts nothing."""
    rng = np.random.default_rng(seed)
    parents = {index: parent for parent, indices in SUPERCLASSES.items() for index in indices}
    concepts = [f"class:{wnid}" for wnid in IMAGENET_CLASSES] + [f"parent:{name}" for name in SUPERCLASSES]
    files, rows = [], []
    for label, wnid in enumerate(IMAGENET_CLASSES):
        for index in range(IMAGES_PER_CLASS):
            mask = np.zeros((len(concepts), size, size), dtype=bool)
            top, left = rng.integers(0, size // 2, 2)
            for concept in (f"class:{wnid}", f"parent:{parents[label]}"):
                mask[concepts.index(concept), top:top + size // 2, left:left + size // 2] = True
            files.append(f"{wnid}/{wnid}_{index}.png")
            rows.append(mask)
    folder = data_root / "imagenet" / "concept_masks"
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / "files.npy", np.array(files[:-1]))
    np.save(folder / "concepts.npy", np.array(concepts))
    np.save(folder / "masks.npy", np.stack(rows[:-1]))
    return folder
