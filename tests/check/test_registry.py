"""The check registry: stable ids, known categories, and every check after the ones it requires."""
from __future__ import annotations

import subprocess
import sys

from ascend_doctor.checks.base import registry
from ascend_doctor.model import CATEGORIES


def test_requires_run_first_and_ids_are_known():
    order = {c.id: i for i, c in enumerate(registry())}
    for c in registry():
        for dep in c.requires:
            assert dep in order, f"{c.id} requires unknown {dep}"
            assert order[dep] < order[c.id], f"{c.id} runs before {dep}, which it requires"
        assert c.category is None or c.category in CATEGORIES


def test_order_does_not_depend_on_which_module_was_imported_first():
    code = (
        "import ascend_doctor.checks.compat_checks, ascend_doctor.checks.runtime\n"
        "from ascend_doctor.checks.base import registry\n"
        "print(' '.join(c.id for c in registry()))"
    )
    late = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60).stdout.split()
    assert late == [c.id for c in registry()]
