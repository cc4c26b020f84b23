"""The one error of the input layer."""
from __future__ import annotations


class InputError(ValueError):
    """Input the doctor will not read further: malformed, or past one of the limits in
    ``ascend_doctor.inputs.limits``. The message is one line and names what was wrong.
    It is a ValueError so that parsers which already treat ValueError as "not this format"
    keep working; the CLI turns an uncaught one into one line and exit 2."""

    exit_code = 2
