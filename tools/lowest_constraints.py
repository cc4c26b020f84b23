"""Print a pip constraints file that pins every runtime dependency of pyproject.toml to the
lowest version it declares (``typer>=0.15.4,<0.26`` -> ``typer==0.15.4``).

CI installs the package once more with these constraints and runs the suite on them, so a
floor that no longer works (an old typer with a new click) fails CI instead of a user's
install. Only ``[project] dependencies`` are pinned: the test tools keep their resolved
versions. A dependency without a lower bound is an error: it has no floor to test.

    python tools/lowest_constraints.py [pyproject.toml] > lowest.txt
    python -m pip install -c lowest.txt -e '.[test]'
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import List

ROOT = Path(__file__).resolve().parent.parent


def _load(path: Path) -> dict:
    try:
        import tomllib  # Python 3.11+
    except ImportError:  # pragma: no cover - 3.9 / 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ImportError:
            sys.exit("lowest_constraints: reading pyproject.toml needs Python 3.11+ or the tomli package")
    with open(path, "rb") as fh:
        return tomllib.load(fh)


def lowest(requirements: List[str]) -> List[str]:
    """``name==floor`` (with the requirement's marker) for each requirement; ValueError for one
    without a ``>=`` (or ``==``/``~=``) lower bound."""
    from packaging.requirements import Requirement

    out = []
    for text in requirements:
        req = Requirement(text)
        floors = [s.version for s in req.specifier if s.operator in (">=", "==", "~=")]
        if len(floors) != 1:
            raise ValueError(f"{text}: needs exactly one lower bound (>=, == or ~=) to pin its floor")
        if not req.specifier.contains(floors[0], prereleases=True):
            raise ValueError(f"{text}: its own floor {floors[0]} is excluded by the other bounds")
        marker = f"; {req.marker}" if req.marker else ""
        out.append(f"{req.name}=={floors[0]}{marker}")
    return out


def main(argv: List[str]) -> int:
    path = Path(argv[0]) if argv else ROOT / "pyproject.toml"
    deps = _load(path).get("project", {}).get("dependencies", [])
    try:
        lines = lowest(deps)
    except ValueError as exc:
        sys.stderr.write(f"lowest_constraints: {exc}\n")
        return 2
    sys.stdout.write(f"# the lowest versions {path.name} declares (tools/lowest_constraints.py)\n")
    sys.stdout.write("".join(line + "\n" for line in lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
