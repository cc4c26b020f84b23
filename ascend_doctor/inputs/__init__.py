"""The bounded input layer: every byte, number and structure the doctor reads from outside
passes through here, with a limit that says what happens when it is reached.

Small and free of upward imports (it imports nothing else of ``ascend_doctor``), so every
verb and parser can use it. See ``docs/inputs.md`` for the API and the limits.

    from ascend_doctor.inputs import InputError, to_int, int_or_none, to_float, saturate
    from ascend_doctor.inputs import load_json, parse_printed, check_pickle, CappedBuffer
    from ascend_doctor.inputs.archive import open_compressed, tar_entries, Budget
"""
from __future__ import annotations

from .errors import InputError, os_message, os_reason
from .limits import LIMITS, Limits
from .numbers import int_or_none, saturate, to_float, to_int, size_bytes
from .jsonload import load_json, json_depth
from .printed import parse_printed
from .pickles import check_pickle
from .capped import CappedBuffer
from .walk import Seen

__all__ = ["InputError", "os_message", "os_reason", "LIMITS", "Limits", "to_int", "int_or_none", "to_float", "saturate", "size_bytes",
           "load_json", "json_depth", "parse_printed", "check_pickle", "CappedBuffer", "Seen"]
