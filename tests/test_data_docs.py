"""docs/data-files.md is rendered from the specs the loaders check: the two stay equal."""
from __future__ import annotations

from pathlib import Path

from tools import data_docs

PAGE = Path(__file__).resolve().parents[1] / "docs" / "data-files.md"


def test_page_is_rendered_from_the_specs():
    assert PAGE.read_text(encoding="utf-8") == data_docs.render(), "run: python -m tools.data_docs"


def test_every_kind_of_data_file_has_a_section():
    titles = [t for t, _, _ in data_docs.sections()]
    for needle in ("rule entries", "family tables", "scenarios", "Op manifest", "torch_npu.yaml", "cann_hdk.yaml"):
        assert any(needle in t for t in titles), needle
    text = PAGE.read_text(encoding="utf-8")
    # a field of each spec, with its allowed values, is on the page
    assert "| `layout` | string | yes | `ascend-toolkit`, `cann` |" in text
    assert "| `level` | string | no (default `kernel`) | `kernel`, `composite` |" in text
    assert "| `weight` | integer | no | 0 ≤ value ≤ 100 |" in text
