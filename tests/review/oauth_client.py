"""An MCP client that signs in to quire with OAuth, written with the official MCP SDK (`mcp` from PyPI): its
`OAuthClientProvider` discovers the authorization server from quire's metadata, registers, sends the person to the
consent page and exchanges the code (PKCE), then refreshes as needed.

The person is the test: the authorization URL is printed as a JSON line (`{"authorize": URL}`), and the URL the
browser was sent back to is read from standard input. Tokens and the registration are kept in `--store` (a JSON
file), so a second run starts signed in. Then the steps run as in review_client.py, one JSON line each.
"""

import argparse
import asyncio
import json
import os
import sys
from urllib.parse import parse_qs, urlparse

from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken


class FileStorage:
    def __init__(self, path):
        self.path = path

    def _read(self):
        if not os.path.exists(self.path):
            return {}
        with open(self.path) as f:
            return json.load(f)

    def _write(self, data):
        with open(self.path, "w") as f:
            json.dump(data, f)

    async def get_tokens(self):
        data = self._read().get("tokens")
        return OAuthToken.model_validate(data) if data else None

    async def set_tokens(self, tokens):
        data = self._read()
        data["tokens"] = tokens.model_dump(mode="json")
        self._write(data)

    async def get_client_info(self):
        data = self._read().get("client")
        return OAuthClientInformationFull.model_validate(data) if data else None

    async def set_client_info(self, client_info):
        data = self._read()
        data["client"] = client_info.model_dump(mode="json")
        self._write(data)


async def redirect_handler(url):
    if os.environ.get("QUIRE_TEST_NO_SIGN_IN"):
        raise RuntimeError("sign-in asked again")
    print(json.dumps({"authorize": url}), flush=True)


async def callback_handler():
    line = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    query = parse_qs(urlparse(line.strip()).query)
    if "error" in query:
        raise RuntimeError(f"authorization refused: {query['error'][0]}")
    return AuthorizationCodeResult(
        code=query["code"][0], state=query.get("state", [None])[0], iss=query.get("iss", [None])[0]
    )


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--store", required=True)
    parser.add_argument("--steps", required=True)
    args = parser.parse_args()
    metadata = OAuthClientMetadata(
        client_name="Python test assistant",
        redirect_uris=["http://127.0.0.1:53682/callback"],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
    )
    auth = OAuthClientProvider(args.url, metadata, FileStorage(args.store), redirect_handler, callback_handler)
    client = create_mcp_http_client(auth=auth)
    async with client, streamable_http_client(args.url, http_client=client) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            for step in json.loads(args.steps):
                if step.get("list"):
                    tools = await session.list_tools()
                    out = {"tools": sorted(t.name for t in tools.tools)}
                else:
                    result = await session.call_tool(step["call"], step.get("args") or {})
                    out = {
                        "texts": [c.text for c in result.content if getattr(c, "type", "") == "text"],
                        "structured": result.structured_content,
                        "is_error": bool(result.is_error),
                    }
                print(json.dumps(out), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
