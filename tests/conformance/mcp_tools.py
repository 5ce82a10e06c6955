"""Imported by mcpforms' autodiscovery in every process of the fixture server, the task workers' too:
they find the server a task belongs to by its key, among the servers the process built."""

from tests.conformance.fixtures import server  # noqa: F401
