from __future__ import annotations

from django.apps import AppConfig, apps
from django.core import checks


class SimpleMcpFormsConfig(AppConfig):
    """mcpforms without autodiscovery: register tools explicitly."""

    name = "mcpforms"
    verbose_name = "MCP forms"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        import mcpforms.checks  # noqa: F401  (registers the system checks)
        from mcpforms.definitions import catalog_version, definition_tools
        from mcpforms.protocol.server import default_server
        from mcpforms.registry import check_form_tools, registry_for

        checks.register(check_form_tools)  # the form tools' options (mcpforms.tool_checks)
        if apps.is_installed("oauth2_provider"):
            from mcpforms.oauth.redaction import install

            install()  # oauthlib's and the toolkit's DEBUG lines carry codes and tokens
        # Admin-defined forms come after the code-registered tools, which win a name clash.
        registry_for(default_server).add_source(definition_tools, version=catalog_version)


class McpFormsConfig(SimpleMcpFormsConfig):
    """The default config: also imports every installed app's ``mcp_tools`` module."""

    default = True

    def ready(self) -> None:
        super().ready()
        from mcpforms.registry import autodiscover

        autodiscover()
