"""Out-of-memory analysis: is it capacity, fragmentation of the caching pool, or memory
held by someone else on the device? And which allocator settings help.

Inputs are what a user has after an OOM: the message (a pasted line or a log file),
``torch.npu.memory_stats()`` (saved as JSON, printed as a dict, or the
``memory_summary()`` table), a memory snapshot (``torch.npu.memory._snapshot()`` /
``_dump_snapshot()`` pickle, ``memory_snapshot()`` list, or JSON of either) and
``npu-smi info``. Each is optional; every one that is given adds numbers and evidence.

API (stable; ``ascend_doctor.commands.oom`` is the CLI on top of it)::

    from ascend_doctor.memory import analyze, Inputs
    from ascend_doctor.memory.message import scan_text, scan_paths
    from ascend_doctor.memory.stats import load_stats, parse_stats_text
    from ascend_doctor.memory.snapshot import load_snapshot, snapshot_facts
    from ascend_doctor.memory.device_usage import npu_smi_facts

    diagnosis = analyze(Inputs(log=scan_text(line), stats=..., snapshot=..., npu_smi=...,
                               torch_npu="2.1.0.post13", alloc_conf=None))
    diagnosis.verdict    # oom_capacity | oom_fragmentation | external | none
    diagnosis.status     # oom | at_risk | healthy
    diagnosis.to_json()  # schema 1

    from ascend_doctor.core.oom import Reading, judge   # the pure decision for one event

Bad input raises ``MemoryInputError`` (a one-line message; the CLI exits 2). Files named
by the user are opened through ``memory.input_file.open_input``: a regular file, ``-`` or
a process-substitution pipe; FIFOs, devices and /proc files are refused before opening.
Nothing here imports torch or torch_npu; only ``whatif`` (oom simulate) imports runtime_sim.allocator, lazily.
"""
from __future__ import annotations

from .errors import MemoryInputError
from .verdict import Diagnosis, Inputs, analyze

__all__ = ["analyze", "Inputs", "Diagnosis", "MemoryInputError"]
