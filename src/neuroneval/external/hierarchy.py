"""Superclasses of a dataset's classes from a user-supplied file (no WordNet needed).

Two formats, chosen by the file's suffix:

``.json``
    ``{"<superclass>": [<child>, ...], ...}``: children are class ids (the class folder names, ``n01440764``) or
    0-based class indices (as in the superclass files of Oikarinen & Weng's code, ``{"dog": [151, 152, ...]}``).
anything else (``.txt``, ``.csv``, ``.tsv``)
    one ``<superclass>,<child>`` (comma or tab) pair per line; ``#`` starts a comment; a header line
    ``parent,child`` is skipped. Children are class ids.

Superclass names become concepts ``parent:<name>`` (spaces replaced by ``_``), their children ``class:<id>``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path


def read_hierarchy(path: str | Path, class_ids: Sequence[str]) -> dict[str, list[str]]:
    """``{superclass: [class ids]}`` from ``path``, children in class order, superclasses in file order.

    Raises ``FileNotFoundError`` for a missing file and ``ValueError`` naming the file for a malformed line, a
    child that is not a class (or an index out of range), or a superclass without children.
    """
    path = Path(path).expanduser()
    if not path.is_file():
        raise FileNotFoundError(f"hierarchy file {path} does not exist")
    pairs = _json_pairs(path, class_ids) if path.suffix == ".json" else _text_pairs(path)
    position = {class_id: index for index, class_id in enumerate(class_ids)}
    hierarchy: dict[str, list[str]] = {}
    for parent, child in pairs:
        if child not in position:
            raise ValueError(f"{path}: superclass {parent!r} lists {child!r}, which is not a class of the dataset "
                             f"(classes start {list(class_ids)[:3]})")
        name = parent.strip().replace(" ", "_")
        if not name:
            raise ValueError(f"{path}: a superclass has an empty name")
        children = hierarchy.setdefault(name, [])
        if child not in children:
            children.append(child)
    if not hierarchy:
        raise ValueError(f"{path} defines no superclass")
    return {parent: sorted(children, key=position.__getitem__) for parent, children in hierarchy.items()}


def _json_pairs(path: Path, class_ids: Sequence[str]) -> list[tuple[str, str]]:
    try:
        payload = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not valid JSON: {error}") from error
    if not isinstance(payload, dict):
        raise ValueError(f"{path} must hold an object {{superclass: [children]}}, got {type(payload).__name__}")
    pairs = []
    for parent, children in payload.items():
        if not isinstance(children, list) or not children:
            raise ValueError(f"{path}: superclass {parent!r} must list at least one child")
        for child in children:
            if isinstance(child, int) and not isinstance(child, bool):
                if not 0 <= child < len(class_ids):
                    raise ValueError(f"{path}: superclass {parent!r} lists class index {child}, outside "
                                     f"0..{len(class_ids) - 1}")
                pairs.append((parent, class_ids[child]))
            else:
                pairs.append((parent, str(child)))
    return pairs


def _text_pairs(path: Path) -> list[tuple[str, str]]:
    pairs = []
    for line_number, line in enumerate(path.read_text().splitlines(), start=1):
        content = line.split("#", 1)[0].strip()
        if not content:
            continue
        fields = [field.strip() for field in content.replace("\t", ",").split(",")]
        if len(fields) != 2 or not all(fields):
            raise ValueError(f"{path} line {line_number}: expected '<superclass>,<child>', got {line.strip()!r}")
        if line_number == 1 and fields == ["parent", "child"]:
            continue
        pairs.append((fields[0], fields[1]))
    return pairs
