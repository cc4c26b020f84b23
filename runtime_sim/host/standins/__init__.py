"""Sources copied into simulated hosts (the torch / torch_npu stand-ins, the python3
and npu-smi stand-ins). They are read as text by the builder and never imported here;
each must run on Python 3.9+ with the standard library only.
"""
