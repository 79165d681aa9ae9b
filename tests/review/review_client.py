"""An MCP client for the review tests, written with the official MCP SDK's client (`mcp` from PyPI).

It connects to `quire mcp` over stdio (`--stdio PROGRAM ARGS...`) or Streamable HTTP (`--http URL --token TOKEN`),
runs the steps given as JSON (`--steps '[{"call": "create_note", "args": {...}}, {"read": "quire://review/1"}]'`)
and prints one JSON line per step: a call's text blocks, structured content, `_meta` and error flag, or a resource's
text. It declares no elicitation, as Claude Desktop and ChatGPT do not.
"""

import argparse
import asyncio
import json
import os

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError


async def run_steps(session, steps):
    await session.initialize()
    for step in steps:
        if "call" in step:
            result = await session.call_tool(step["call"], step.get("args") or {})
            out = {
                "texts": [c.text for c in result.content if getattr(c, "type", "") == "text"],
                "structured": result.structured_content,
                "meta": result.meta,
                "is_error": bool(result.is_error),
            }
        else:
            try:
                result = await session.read_resource(step["read"])
                out = {"text": "".join(getattr(c, "text", "") or "" for c in result.contents)}
            except MCPError as e:
                out = {"error": str(e)}
        print(json.dumps(out), flush=True)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--http")
    parser.add_argument("--token")
    parser.add_argument("--steps", required=True)
    parser.add_argument("--stdio", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    steps = json.loads(args.steps)
    if args.http:
        client = create_mcp_http_client(headers={"Authorization": f"Bearer {args.token}"})
        async with client, streamable_http_client(args.http, http_client=client) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write) as session:
                await run_steps(session, steps)
    else:
        # The server gets this process's environment (the test's workspace and configuration folders).
        params = StdioServerParameters(command=args.stdio[0], args=args.stdio[1:], env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await run_steps(session, steps)


if __name__ == "__main__":
    asyncio.run(main())
