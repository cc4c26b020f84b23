"""Maintainer tools (not installed with the package)."""
