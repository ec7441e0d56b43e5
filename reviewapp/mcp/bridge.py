"""`manage.py mcp` with CLAIMDESK_URL: a stdio MCP server that forwards every call to a remote
ClaimDesk's /mcp, so an assistant on a laptop uses the tools of the server that holds the data,
exactly as that server defines them (the tools are listed from it, never copied here)."""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any

import httpx
from mcp import ClientSession, types
from mcp.client import streamable_http
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from reviewapp.mcp.server import INSTRUCTIONS


def endpoint(base_url: str) -> str:
    """CLAIMDESK_URL may name the site (https://claimdesk.example) or its /mcp."""
    base = base_url.rstrip("/")
    return base if base.endswith("/mcp") else f"{base}/mcp"


@asynccontextmanager
async def connect(url: str, token: str):
    """The SDK's streamable HTTP client transport with the bearer token (its newer entry point where
    the installed SDK has it, else the one it replaced)."""
    headers = {"Authorization": f"Bearer {token}"}
    if not hasattr(streamable_http, "streamable_http_client"):
        async with streamable_http.streamablehttp_client(url, headers=headers) as streams:
            yield streams
        return
    # The transport leaves a client it was given open: closed here, with its connections.
    async with httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(60, read=300)) as client:
        async with streamable_http.streamable_http_client(url, http_client=client) as streams:
            yield streams


async def serve(base_url: str, token: str) -> None:
    async with connect(endpoint(base_url), token) as (read, write, _):
        async with ClientSession(read, write) as remote:
            await remote.initialize()
            bridge = Server("claimdesk", instructions=INSTRUCTIONS)

            @bridge.list_tools()
            async def list_tools() -> list[types.Tool]:
                return (await remote.list_tools()).tools

            # The remote validates the arguments, with its own messages naming the field.
            @bridge.call_tool(validate_input=False)
            async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
                return await remote.call_tool(name, arguments)

            async with stdio_server() as (stdin, stdout):
                await bridge.run(stdin, stdout, bridge.create_initialization_options())
