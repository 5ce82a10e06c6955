"""The MCP core: envelope, eras, dispatch and errors. No HTTP framework in here; ``mcpforms.api`` is the edge.

The names a project needs to serve its own tools are re-exported here; the rest lives in its module.
"""

from mcpforms.protocol.context import RequestContext
from mcpforms.protocol.errors import ProtocolError, ToolError
from mcpforms.protocol.primitives import Prompt, PromptArgument, Resource, ResourceTemplate, Tool
from mcpforms.protocol.server import Server, default_server

__all__ = [
    "Prompt",
    "PromptArgument",
    "ProtocolError",
    "RequestContext",
    "Resource",
    "ResourceTemplate",
    "Server",
    "Tool",
    "ToolError",
    "default_server",
]
