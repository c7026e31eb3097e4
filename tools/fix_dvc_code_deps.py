"""Rewrite each ``dvc.yaml`` stage's code deps in place to what ``neuroneval.code_deps`` computes.

Run from the repository root after adding a rule, a step or an import that a DVC stage can reach:
``python tools/fix_dvc_code_deps.py``. Data deps, params, outputs and comments are kept; only the lines of code
deps (files ``code_deps`` counts as code) are replaced by the expected list (sorted, plus the stage's own rule
files). ``tests/workflow/test_code_deps.py`` checks the result.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from neuroneval.code_deps.workflow import _is_code, dvc_stage_code

STAGE_LINE = re.compile(r"^  (\w+):\s*$")
DEPS_LINE = re.compile(r"^    deps:\s*$")
DEP_ITEM = re.compile(r"^      - (\S+)\s*$")


def rewrite(text: str, root: Path) -> str:
    """``text`` (a dvc.yaml) with every stage's code deps replaced by the expected ones."""
    stages = yaml.safe_load(text)["stages"]
    expected = dvc_stage_code(root, stages)
    out: list[str] = []
    stage, in_deps, written = None, False, False
    for line in text.splitlines(keepends=True):
        match = STAGE_LINE.match(line)
        if match and match.group(1) in stages:
            stage, in_deps, written = match.group(1), False, False
        if DEPS_LINE.match(line):
            in_deps = True
            out.append(line)
            continue
        if in_deps:
            item = DEP_ITEM.match(line)
            if item:
                if _is_code(item.group(1)):
                    if not written:
                        listed, code = expected[stage]
                        rules = [dep for dep in listed if dep.endswith(".smk")]
                        out.extend(f"      - {dep}\n" for dep in sorted(set(code) | set(rules)))
                        written = True
                    continue
                out.append(line)
                continue
            in_deps = False
        out.append(line)
    return "".join(out)


def main() -> None:
    path = Path("dvc.yaml")
    path.write_text(rewrite(path.read_text(), Path(".")))


if __name__ == "__main__":
    main()
