from __future__ import annotations

from pathlib import Path

import pytest
import yaml

DATA = Path(__file__).with_name("data")


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA


def load_yaml(name: str):
    return yaml.safe_load((DATA / name).read_text(encoding="utf-8"))
