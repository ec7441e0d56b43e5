"""The MCP server: tools for assistants (server.py), over streamable HTTP at /mcp (http.py) and over
stdio (`manage.py mcp`, bridge.py when it forwards to a remote ClaimDesk)."""
