"""A simulated Ascend host and runtime that reproduces real failures.

Never imports ascend_doctor: the doctor has to find every fault from the outside.
"""
