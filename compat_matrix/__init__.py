"""Ascend version grammar, version-matching data and queries (no dependency on ascend_doctor)."""
