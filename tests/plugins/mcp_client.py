"""An MCP client for the plugins-over-MCP tests, written with the official MCP SDK's client (`mcp` from PyPI).

It connects to `quire mcp` over stdio (`--stdio PROGRAM ARGS...`) or Streamable HTTP (`--http URL --token TOKEN`),
runs the steps given as JSON and prints one JSON line per step:

- `{"list": true}`: every page of `tools/list`, each tool's name, title, annotations and `_meta`;
- `{"call": NAME, "args": {...}}`: the call's blocks (text, and images and sounds with their bytes), structured
  content and error flag;
- `{"read": URI}`: a resource's text and MIME type, or the error;
- `{"say": WORD}`: prints the word (the test acts on the workspace when it reads it);
- `{"wait_gone": PREFIX, "seconds": N}`: lists the tools again at each `notifications/tools/list_changed` until no
  tool's name starts with PREFIX, and says whether that happened and how many notifications came.

With `--elicit accept` or `--elicit decline` it declares elicitation and answers every question so (printing the
question on standard error; accepting fills a form's required fields: text "Lyon", no, 1); without, it declares none, as Claude Desktop does not.
"""

import argparse
import asyncio
import json
import os
import sys

import mcp_types as types
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

list_changed = asyncio.Event()
questions = []


async def on_message(message):
    inner = getattr(message, "root", message)
    if getattr(inner, "method", None) == "notifications/tools/list_changed":
        list_changed.set()


def block(c):
    kind = getattr(c, "type", "")
    if kind == "text":
        return {"type": "text", "text": c.text}
    if kind in ("image", "audio"):
        return {"type": kind, "data": c.data, "mime_type": c.mime_type}
    if kind == "resource_link":
        return {"type": kind, "uri": str(c.uri), "name": c.name}
    if kind == "resource":
        return {"type": kind, "uri": str(c.resource.uri)}
    return {"type": kind}


async def all_tools(session):
    """Every page of `tools/list`."""
    tools, cursor = [], None
    while True:
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools


async def run_steps(session, steps):
    await session.initialize()
    for step in steps:
        if "list" in step:
            tools = []
            for t in await all_tools(session):
                annotations = t.annotations.model_dump(exclude_none=True) if t.annotations else {}
                tools.append({"name": t.name, "title": t.title, "annotations": annotations, "meta": t.meta})
            out = {"tools": tools}
        elif "call" in step:
            try:
                result = await session.call_tool(step["call"], step.get("args") or {})
                out = {
                    "content": [block(c) for c in result.content],
                    "structured": result.structured_content,
                    "is_error": bool(result.is_error),
                }
            except MCPError as e:
                out = {"error": str(e)}
        elif "read" in step:
            try:
                result = await session.read_resource(step["read"])
                out = {
                    "text": "".join(getattr(c, "text", "") or "" for c in result.contents),
                    "mime_type": result.contents[0].mime_type if result.contents else None,
                }
            except MCPError as e:
                out = {"error": str(e)}
        elif "say" in step:
            out = {"said": step["say"]}
        elif "wait_gone" in step:
            # Each `tools/list_changed` is followed by a listing, until no tool's name starts with the prefix.
            deadline = asyncio.get_running_loop().time() + step.get("seconds", 30)
            heard, gone = 0, False
            while not gone:
                left = deadline - asyncio.get_running_loop().time()
                try:
                    await asyncio.wait_for(list_changed.wait(), max(left, 0.01))
                except asyncio.TimeoutError:
                    break
                list_changed.clear()
                heard += 1
                names = [t.name for t in await all_tools(session)]
                gone = not any(n.startswith(step["wait_gone"]) for n in names)
            out = {"gone": gone, "heard": heard}
        else:
            out = {"unknown step": step}
        out["questions"] = list(questions)
        questions.clear()
        print(json.dumps(out), flush=True)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--http")
    parser.add_argument("--token")
    parser.add_argument("--elicit", choices=["accept", "decline"])
    parser.add_argument("--steps", required=True)
    parser.add_argument("--stdio", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    steps = json.loads(args.steps)

    async def elicit(context, params):
        questions.append(params.message)
        print(f"asked: {params.message}", file=sys.stderr, flush=True)
        if args.elicit != "accept":
            return types.ElicitResult(action=args.elicit)
        # A form's required fields filled in: text "Lyon", a yes-or-no field no, a number 1.
        schema = getattr(params, "requested_schema", None) or {}
        schema = schema if isinstance(schema, dict) else schema.model_dump()
        answers = {}
        for name, field in (schema.get("properties") or {}).items():
            kind = field.get("type")
            if name in (schema.get("required") or []):
                answers[name] = {"boolean": False, "integer": 1, "number": 1}.get(kind, "Lyon")
        return types.ElicitResult(action="accept", content=answers)

    options = {"message_handler": on_message}
    if args.elicit:
        options["elicitation_callback"] = elicit
    if args.http:
        client = create_mcp_http_client(headers={"Authorization": f"Bearer {args.token}"})
        async with client, streamable_http_client(args.http, http_client=client) as streams:
            async with ClientSession(streams[0], streams[1], **options) as session:
                await run_steps(session, steps)
    else:
        # The server gets this process's environment (the test's workspace and configuration folders).
        params = StdioServerParameters(command=args.stdio[0], args=args.stdio[1:], env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, **options) as session:
                await run_steps(session, steps)


if __name__ == "__main__":
    asyncio.run(main())
