"""The schema of compat_matrix's data files (compat_matrix/data/*.yaml), as specs of the one validator.

``tables.raw_data`` checks each file against its spec when it first reads it (once per process);
versions are then parsed by the version grammar while the matrix is built. The header comment of
each data file says where its facts come from; docs/data-files.md is rendered from these specs.
"""
from __future__ import annotations

from typing import Any, Dict

from compat_matrix.schema import Field, Record
from compat_matrix.tables import BUILD_STATUSES, HDK_RELATIONS

RELEASE_STATUSES = ("active", "eol", "hotfix", "beta")
SOURCE_KINDS = ("official", "downstream", "inventory", "sample", "source-template", "test-fixture", "tool-data",
                "wheel-metadata")


def _s(doc: str, **kw: Any) -> Field:
    return Field("str", doc=doc, **kw)


def _v(what: str, **kw: Any) -> Field:
    return Field("str", nonempty=True, doc=f"{what} (a version the grammar of compat_matrix.versions reads)", **kw)


def _list(doc: str, **kw: Any) -> Field:
    return Field("list", item=Field("str", nonempty=True), doc=doc, **kw)


def _rows(record: Record, doc: str, required: bool = True) -> Field:
    return Field("list", required=required, item=Field("record", record=record), doc=doc)


SOURCE_ID = _s("a source id of sources.yaml", required=True, nonempty=True)
CONTRADICTION = _s("the id of a contradiction (contradictions.yaml) about this row")
NOTE = _s("a remark")
SCHEMA = Field("int", required=True, choices=(1,), doc="the file format's version")

SOURCE = Record("source", {
    "url": _s("where the facts are", required=True, pattern=r"https://\S+", hint="must be an https URL"),
    "commit": _s("the commit the URL was read at"),
    "kind": _s("what kind of source", choices=SOURCE_KINDS),
    "title": _s("what it is, in words"),
}, doc="A source of facts; rows name it by its id.")
BUILD = Record("build", {
    "torch_npu": _v("the wheel version", required=True),
    "torch": _v("the PyTorch it pins", required=True),
    "cann": _v("the CANN release it is paired with ('7.0.X': a line); null: no source pairs it"),
    "release": _v("TorchNPU release line (the branch suffix)"),
    "hotfix_of": _v("the GA release line of a hotfix"),
    "branch": _s("the source branch"),
    "python": _list("Python minor versions with a wheel; null: not published"),
    "python_x86_64": _list("the Pythons on x86_64 when it ships fewer"),
    "python_min": _v("the oldest Python when a table says 'X and later'"),
    "status": _s("the build's status", required=True, choices=BUILD_STATUSES),
    "on_pypi": Field("bool", default=False, doc="false: `pip install torch-npu==<v>` cannot work"),
    "source": SOURCE_ID,
    "python_source": _s("the source of `python`"),
    "contradiction": CONTRADICTION,
    "note": NOTE,
}, doc="A torch_npu wheel build: the PyTorch, CANN, release line and Pythons it goes with.")
GLIBC = Record("wheel_glibc", {
    "torch": _v("the PyTorch line", required=True),
    "x86_64": _s("the manylinux glibc of the x86_64 wheels", required=True),
    "aarch64": _s("the manylinux glibc of the aarch64 wheels", required=True),
    "source": SOURCE_ID,
}, doc="The glibc the wheels of a PyTorch line need.")
RELEASE = Record("release", {
    "release": _v("the TorchNPU release line", required=True),
    "cann": _v("the CANN release it was made for"),
    "status": _s("its status", required=True, choices=RELEASE_STATUSES),
    "source": SOURCE_ID,
    "supports": _list("the CANN lines its release notes support"),
    "supports_source": _s("the source of `supports`"),
    "hotfix_of": _v("the GA release of a hotfix"),
    "contradiction": CONTRADICTION,
    "note": NOTE,
}, doc="A TorchNPU release line and its CANN.")
PAIRING = Record("contradicted_pairing", {
    "release": _v("the release line", required=True),
    "cann": _v("the CANN a source pairs it with, wrongly", required=True),
    "source": SOURCE_ID,
    "contradiction": _s("the contradiction that explains it", required=True),
}, doc="A release/CANN pairing a source states and another contradicts.")
EDITION = Record("cann_edition", {
    "community": _v("the community edition's version", required=True),
    "commercial": _v("the same release's commercial version", required=True),
    "source": SOURCE_ID,
}, doc="Two names of one CANN release.")
TORCH_PYTHON = Record("torch_python", {
    "torch": _v("the PyTorch release", required=True),
    "upstream": Field("list", required=True, item=Field("str"), doc="the Pythons PyTorch publishes wheels for"),
    "ascend": _list("the Pythons torch_npu supports with it; null: none stated"),
    "python_min": _v("the oldest Python"),
    "source": SOURCE_ID,
    "ascend_source": _s("the source of `ascend`"),
    "note": NOTE,
}, doc="The Pythons of a PyTorch release.")
HDK = Record("cann_hdk statement", {
    "cann": _v("the CANN release or line", required=True),
    "hdk": Field("list", required=True, nonempty=True, item=Field("str", nonempty=True),
                 doc="the driver (HDK) versions or lines"),
    "relation": _s("what the source says", required=True, choices=HDK_RELATIONS),
    "chips": _list("the chips it is about (all, non_950, 950...)"),
    "source": SOURCE_ID,
    "driver": _v("a driver version the statement names"),
    "firmware": _v("a firmware version the statement names"),
    "contradiction": CONTRADICTION,
    "note": NOTE,
}, doc="A statement of a CANN release's notes (or an installer) about the drivers it works with.")
PIN = Record("pin", {
    "project": _s("the downstream project", required=True),
    "version": _s("its version"),
    "torch": _s("the PyTorch it pins"),
    "torch_npu": _s("the torch_npu it pins", required=True),
    "cann": _s("the CANN it pins", required=True),
    "python": _s("the Pythons it allows (a specifier)"),
    "branch": _s("its branch"),
    "source": SOURCE_ID,
    "contradiction": CONTRADICTION,
}, doc="A downstream project's pinned stack.")
PAIR = Field("list", item=Field("str"), doc="[low, high]")
DRIVER_RULE = Record("driver rule", {
    "driver": _v("the driver version", required=True),
    "innerversion": _s("its inner version (version.info)"),
    "compatible_version": _list("the inner versions of the toolkits it accepts"),
    "compatible_version_fw": Field("list", item=PAIR, doc="firmware ranges it accepts"),
    "source": SOURCE_ID,
    "note": NOTE,
}, doc="What a driver's own version.info says it works with.")
FIRMWARE_RULE = Record("firmware rule", {
    "firmware": _v("the firmware version", required=True),
    "package_version": _s("the package it ships in"),
    "compatible_version_drv": Field("list", item=PAIR, doc="driver ranges it accepts"),
    "source": SOURCE_ID,
}, doc="What a firmware's own version file says it works with.")
TOOLKIT_RULE = Record("toolkit rule", {
    "cann": _v("the toolkit version", required=True),
    "innerversion": _s("its inner version", required=True),
    "compatible_version": _list("the driver inner versions it accepts", required=True),
    "source": SOURCE_ID,
}, doc="What a toolkit's own version.info says it works with.")
CLAIM = Record("claim", {
    "source": SOURCE_ID,
    "says": _s("what it says", required=True),
}, doc="What one source claims.")
CONTRADICTION_ROW = Record("contradiction", {
    "id": _s("the contradiction's id", required=True, pattern=r"c\d+", hint="must look like c01"),
    "topic": _s("what the sources disagree about", required=True),
    "claims": Field("list", required=True, nonempty=True, item=Field("record", record=CLAIM), doc="the claims"),
    "trusted": _s("the source trusted", required=True),
    "why": _s("why that one", required=True),
}, doc="Sources that disagree, and which one is trusted.")

CHIP_FAMILY = Record("chip family", {
    "id": _s("the family id", required=True, nonempty=True),
    "about": _s("which products and chips it covers", required=True),
    "product": _s("the product name release notes use"),
    "npu_smi": _s("a regular expression over the chip name as npu-smi prints it"),
    "typed": _s("a regular expression over a name a person types (normalised)", required=True, nonempty=True),
    "kernel_dir": _s("the op-kernel directory of this SoC"),
    "package": _s("the chip part of the kernels/ops package names"),
    "gen_950": Field("bool", doc="whether the family belongs to the 950 generation's HDK lines"),
}, doc="One Ascend chip family.")

FILES: Dict[str, Record] = {
    "chips": Record("chips.yaml", {
        "schema": SCHEMA,
        "families": _rows(CHIP_FAMILY, "the chip families; the first whose pattern matches wins"),
    }, doc="Ascend chip families, read as npu-smi prints them and as a person types them."),
    "sources": Record("sources.yaml", {
        "schema": SCHEMA,
        "sources": Field("map", required=True, item=Field("record", record=SOURCE), doc="source id: the source"),
    }, doc="Where the facts of the other files come from."),
    "torch_npu": Record("torch_npu.yaml", {
        "schema": SCHEMA,
        "builds": _rows(BUILD, "the builds, newest first"),
        "wheel_glibc": _rows(GLIBC, "the glibc of each PyTorch line's wheels", required=False),
    }, doc="torch_npu wheel builds."),
    "releases": Record("releases.yaml", {
        "schema": SCHEMA,
        "releases": _rows(RELEASE, "the release lines"),
        "contradicted_pairings": _rows(PAIRING, "pairings a source states wrongly", required=False),
        "cann_editions": _rows(EDITION, "community and commercial names of a CANN release", required=False),
    }, doc="TorchNPU release lines."),
    "torch_python": Record("torch_python.yaml", {
        "schema": SCHEMA,
        "torch": _rows(TORCH_PYTHON, "PyTorch releases"),
    }, doc="The Pythons of each PyTorch release."),
    "cann_hdk": Record("cann_hdk.yaml", {
        "schema": SCHEMA,
        "statements": _rows(HDK, "the statements"),
    }, doc="CANN <-> driver (HDK) statements."),
    "host_rules": Record("host_rules.yaml", {
        "schema": SCHEMA,
        "drivers": _rows(DRIVER_RULE, "driver rules", required=False),
        "firmwares": _rows(FIRMWARE_RULE, "firmware rules", required=False),
        "toolkits": _rows(TOOLKIT_RULE, "toolkit rules", required=False),
    }, doc="The compatibility rules the installed packages state themselves (version.info files)."),
    "downstream": Record("downstream.yaml", {
        "schema": SCHEMA,
        "pins": _rows(PIN, "the pins"),
    }, doc="Stacks that downstream projects pin."),
    "contradictions": Record("contradictions.yaml", {
        "schema": SCHEMA,
        "contradictions": _rows(CONTRADICTION_ROW, "the contradictions"),
        "wheel_contradictions": Field("list", item=Field("map"),
                                      doc="what a wheel's own metadata contradicts (read by compat_matrix.wheels)"),
    }, doc="Where sources disagree."),
    "wheels": Record("wheels.yaml", {
        "schema": SCHEMA,
        "index": Field("map", required=True, doc="the package index read: url, read (date), versions"),
        "builds": Field("list", required=True, item=Field("map"),
                        doc="the metadata of each wheel on the index (written by tools/harvest_wheels.py; "
                            "read by compat_matrix.wheels)"),
    }, doc="torch_npu wheels as published on the package index."),
}
