"""Shared domain facts with no input or output of their own: byte sizes as printed by the
frameworks (with their rounding error) and the OOM judgement that both the knowledge base
and the ``oom`` verb apply. Everything above may import it; it imports only ``inputs``."""
