"""``make report`` on the tiny build: Snakemake's report holds every table, figure and viewer page a reader looks
at, byte for byte, each with a rendered caption that names the paper item and the params; in headless Chromium at
1280 px every figure displays and nothing leaves ``file://`` (screenshots: ``$NEUROEVAL_SCREENSHOTS`` or tmp).

What a reader looks at is stated here, independently of the ``report()`` declarations: the files directly under
``results/`` and directly under its stage folders (CoSy, explanations, concept evaluation) and the viewer pages;
the per-setting, per-generator and per-run folders (``meta``, ``ceiling``, ``sanity``, ``crowd``, ``fidelity``,
``cosy/generators``, ``explain/scores``, ``concepteval/runs``) hold the intermediate files the tables are made of.
The report is written in a copy of the shared build (the DVC round-trip test compares that build's files)."""

from __future__ import annotations

import base64
import json
import shutil
import struct
from pathlib import Path

import pytest
import yaml

from tests.workflow.conftest import run_tool

STAGE_FOLDERS = ("cosy", "explain", "concepteval")
SHOWN = (".csv", ".png", ".md", ".json")


def reader_files(workspace: Path) -> set[str]:
    results = workspace / "results"
    files = [path for path in results.iterdir() if path.is_file() and path.suffix in SHOWN]
    files += [path for folder in STAGE_FOLDERS if (results / folder).is_dir()
              for path in (results / folder).iterdir() if path.is_file() and path.suffix in SHOWN]
    files += list(results.glob("viewer/*/index.html"))
    return {str(path.relative_to(workspace)) for path in files if path.name != "report.html"}


def png_width(path: Path) -> int:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">I", header[16:20])[0]


@pytest.fixture(scope="module")
def report_workspace(built_workspace: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    workspace = tmp_path_factory.mktemp("report") / "repo"
    shutil.copytree(built_workspace, workspace, symlinks=True)  # timestamps and Snakemake's records kept
    run_tool(["python", "-m", "neuroneval.snakemake_report"], workspace)
    return workspace


def test_report_holds_every_result_and_renders_offline(report_workspace: Path, tmp_path: Path) -> None:
    from tests.crowd.chromium import INSTALL_HINT, Browser, chromium_path
    from tests.figures.test_browser import OFFLINE, _load, _screenshot, _shots

    binary = chromium_path()
    if binary is None:
        pytest.fail(f"Chromium is needed for the report test but is not on PATH; install it with: {INSTALL_HINT}")
    page = report_workspace / "results" / "report.html"
    expected = reader_files(report_workspace)
    assert {"results/table4.csv", "results/figure3.png", "results/cosy/table2.csv",
            "results/concepteval/patterns.md"} <= expected
    assert any(name.startswith("results/viewer/") for name in expected)
    params = yaml.safe_load((report_workspace / "params.yaml").read_text())
    shots = _shots(tmp_path)
    with Browser(binary, extra_flags=OFFLINE) as browser:
        requests = _load(browser, page.as_uri(), "typeof app !== 'undefined' && typeof results !== 'undefined'")
        assert requests == []
        entries = browser.evaluate("results")
        assert set(entries) == expected
        for name, entry in entries.items():
            data = entry["data_uri"].split(";base64,", 1)[1]
            assert base64.b64decode(data) == (report_workspace / name).read_bytes(), name
            caption = entry["caption"]
            assert caption.strip() and "{{" not in caption and "snakemake." not in caption, name
            assert "paper" in caption.lower() or "not a paper" in caption.lower(), name
        for setting in params["meta"]["settings"]:  # the params a result was built with are in its caption
            assert setting in entries["results/table4.csv"]["caption"]
        assert json.dumps(params["sanity"]["epsilon"]) in entries["results/figure3.png"]["caption"]

        listed = set()
        categories = browser.evaluate("categories")
        home = {name: (category, subcategory) for category, subcategories in categories.items()
                for subcategory, paths in subcategories.items() for name in paths}
        for category, subcategories in categories.items():
            for subcategory, paths in subcategories.items():
                # through the menu: the results list is drawn when its panel mounts, not when its props change
                browser.evaluate("app.setView({navbarMode: 'menu'})")
                browser.wait_for("document.body.innerText.includes('Statistics')")
                view = {"navbarMode": "subcategory", "category": category, "subcategory": subcategory}
                browser.evaluate(f"app.setView({json.dumps(view)})")
                browser.wait_for(" && ".join(f"document.body.innerText.includes({json.dumps(path)})"
                                             for path in paths))
                listed.update(paths)
        assert listed == expected

        figures = sorted(name for name in expected if name.endswith(".png"))
        assert "results/figure3.png" in figures and "results/table4.png" in figures
        for name in figures:
            view = {"content": "img", "contentPath": entries[name]["data_uri"], "resultPath": name}
            browser.evaluate(f"app.setView({json.dumps(view)})")
            shown = f"Array.from(document.images).find(i => i.src === {json.dumps(entries[name]['data_uri'])})"
            browser.wait_for(f"{shown} !== undefined && {shown}.complete")
            assert browser.evaluate(f"{shown}.naturalWidth") == png_width(report_workspace / name)
            if name in ("results/table4.png", "results/figure3.png"):
                category, subcategory = home[name]
                info = {"navbarMode": "resultinfo", "category": category, "subcategory": subcategory,
                        "resultPath": name}
                browser.evaluate(f"app.setView({json.dumps(info)})")
                browser.wait_for("document.body.innerText.includes('DESCRIPTION')")
                _screenshot(browser, shots / f"report_{Path(name).stem}.png")
        # the overview a reader starts from: the sanity tests' figures and tables beside Figure 3
        browser.evaluate("app.setView({navbarMode: 'menu'})")
        browser.wait_for("document.body.innerText.includes('Statistics')")
        category, subcategory = home["results/figure3.png"]
        view = {"navbarMode": "subcategory", "category": category, "subcategory": subcategory, "content": "img",
                "contentPath": entries["results/figure3.png"]["data_uri"], "resultPath": "results/figure3.png"}
        browser.evaluate(f"app.setView({json.dumps(view)})")
        browser.wait_for("document.body.innerText.includes('results/tableC1.csv')")
        _screenshot(browser, shots / "report.png")
        outside = [event["params"]["request"]["url"] for event in browser.events
                   if event.get("method") == "Network.requestWillBeSent"
                   and not event["params"]["request"]["url"].startswith(("file://", "data:"))]
        assert outside == []
