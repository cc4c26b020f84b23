from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def matrix():
    from compat_matrix.tables import load_matrix

    return load_matrix()
