"""Solver backends: each turns a built NLP into an outcome (running, option checks, status mapping, interrupts).

``ipopt`` is the default and only backend today; nothing in a backend imports
the driver or a transcription back.
"""
