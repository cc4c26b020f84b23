"""Troubleshooting flows as data (``data/<symptom>.yaml``) and their runner (``runner.run_flow``)."""
from .model import SYMPTOMS, Flow, FlowError, Step, load_all, load_flow

__all__ = ["SYMPTOMS", "Flow", "FlowError", "Step", "load_all", "load_flow"]
