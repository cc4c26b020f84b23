"""Triage: stream logs, extract error events, group them into incidents, name the root cause.

Entry point: ``triage.engine.triage_paths(paths) -> TriageReport``; renderers in
``triage.render``; the verb in ``commands/triage.py``.
"""
