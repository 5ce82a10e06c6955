"""The 2025 era (2025-11-25 and the two revisions before it): what most clients in use today speak.

``shim`` serves it on the same endpoint and the same handlers as 2026-07-28; ``sessions`` says what a
session store keeps between its requests, and ``mcpforms.session_stores`` keeps that for every worker.
"""
