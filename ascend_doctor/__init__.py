"""ascend-doctor: environment doctor and diagnostics for Huawei Ascend NPUs."""

__version__ = "0.1.0"
