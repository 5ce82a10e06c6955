"""The system checks of mcpforms, one module per concern. Each id is stable, has its own test, and has an
entry in ``docs/reference/checks.md``; a setting's value is checked as its row in ``mcpforms.conf`` says.

Importing this package registers every check (``McpFormsConfig.ready`` does).
"""

from mcpforms.checks import (  # noqa: F401  (each module registers its checks)
    auth,
    endpoint,
    limits,
    oauth_clients,
    oauth_provider,
    registry,
    setting,
    url_mode,
)
