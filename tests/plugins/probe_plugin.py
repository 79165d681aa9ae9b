"""A quire plugin for the tests, written with the official MCP SDK's server API (`mcp` from PyPI).

Each tool stands for a case the plugin host must survive: a read-only call, a mutating and a destructive one, a
crash in the middle of a call, a hang past the time limit, an answer of 10 MB, an image, a sound, an MCP Apps `ui://`
resource, a question for the person (elicitation), and a probe that reports everything the process was given (environment, folder, arguments, open files)
so that a test can check none of it leads to the workspace.
"""

import asyncio
import base64
import os
import subprocess
import sys
import time
import zlib
import struct

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.utilities.types import Audio, Image
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

server = MCPServer("probe")
# Written to standard error at start: quire copies it to its log.
print("probe plugin: started", file=sys.stderr, flush=True)

DASHBOARD = """<!doctype html>
<html><head><title>Probe dashboard</title></head>
<body><h1 id="title">Probe dashboard</h1><p id="result">waiting for the result</p>
<script>
  const send = (msg) => window.parent.postMessage(msg, "*");
  window.addEventListener("message", (event) => {
    const msg = event.data || {};
    if (msg.id === 1 && msg.result) {
      send({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
    }
    if (msg.method === "ui/notifications/tool-result") {
      const text = (msg.params.content || []).map((c) => c.text || "").join(" ");
      document.getElementById("result").textContent = "result: " + text;
      let reach = [];
      try { reach.push("cookie:" + document.cookie); } catch (e) { reach.push("cookie:blocked"); }
      try { reach.push("parent:" + window.parent.document.title); } catch (e) { reach.push("parent:blocked"); }
      document.getElementById("title").dataset.reach = reach.join(";");
      send({ jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { height: 160 } });
    }
  });
  send({ jsonrpc: "2.0", id: 1, method: "ui/initialize",
         params: { protocolVersion: "2026-01-26", appInfo: { name: "probe", version: "1" }, appCapabilities: {} } });
</script></body></html>"""


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def shout(text: str) -> str:
    """Returns the text in capitals."""
    return text.upper()


@server.tool()
def remember(text: str) -> str:
    """Keeps a line in the plugin's own memory (no annotations: quire treats it as mutating)."""
    return f"remembered: {text}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True))
def forget_everything(reason: str) -> str:
    """Forgets everything the plugin remembered."""
    return f"forgot everything because {reason}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def crash() -> str:
    """Exits in the middle of the call."""
    print("probe plugin: crashing now", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def hang(seconds: float = 3600, leave: str = "", noise_mb: int = 0) -> str:
    """Sleeps before answering. With `leave`, first starts two processes named by it, one of them in a session of
    its own (which a process-group kill misses); with `noise_mb`, writes that many megabytes to standard error
    without a newline."""
    if leave:
        sleeper = [sys.executable, "-c", "import time; time.sleep(600)", leave]
        subprocess.Popen(sleeper, start_new_session=True)
        subprocess.Popen(sleeper)
    for _ in range(noise_mb):
        sys.stderr.write("E" * (1 << 20))
    sys.stderr.flush()
    time.sleep(seconds)
    return "woke up"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def huge(megabytes: int = 10) -> str:
    """Answers with this many megabytes of text."""
    return ("0123456789abcdef" * 65536) * megabytes


def png(width: int, height: int) -> bytes:
    rows = b"".join(b"\x00" + bytes([200, 40, 40]) * width for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def chart() -> Image:
    """Draws a small red chart."""
    return Image(data=png(48, 24), format="png")


def wav(samples: int) -> bytes:
    data = bytes((128 + (40 if (i // 8) % 2 else -40)) & 0xFF for i in range(samples))
    header = struct.pack("<4sI4s4sIHHIIHH4sI", b"RIFF", 36 + len(data), b"WAVE", b"fmt ", 16, 1, 1, 8000, 8000, 1, 8,
                         b"data", len(data))
    return header + data


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def beep() -> Audio:
    """Plays a short beep."""
    return Audio(data=wav(800), format="wav")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True), meta={"ui": {"resourceUri": "ui://probe/dashboard.html"}})
def dashboard(topic: str) -> str:
    """Shows a dashboard about a topic."""
    return f"dashboard for {topic}"


@server.resource("ui://probe/dashboard.html", mime_type="text/html;profile=mcp-app")
def dashboard_html() -> str:
    return DASHBOARD


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def probe() -> dict:
    """Reports what this process was given: its environment, folder, arguments and open files."""
    fds = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            fds[fd] = os.readlink(f"/proc/self/fd/{fd}")
        except OSError as e:
            fds[fd] = f"? {e}"
    parent = {}
    for part in ["environ", "mem"]:
        try:
            with open(f"/proc/{os.getppid()}/{part}", "rb") as f:
                parent[part] = f"read {len(f.read())} bytes" if part == "environ" else "opened"
        except OSError as e:
            parent[part] = f"refused: {e.strerror}"
    return {
        "env": dict(os.environ),
        "parent": parent,
        "cwd": os.getcwd(),
        "argv": sys.argv,
        "fds": fds,
    }


@server.tool()
async def learn(word: str, ctx: Context) -> str:
    """Learns a word: a new tool, say_WORD, appears (the client is told its tools changed)."""

    def say() -> str:
        return word

    server.add_tool(say, name=f"say_{word}", description=f"Says the word {word}.",
                    annotations=ToolAnnotations(readOnlyHint=True))
    await ctx.session.send_tool_list_changed()
    return f"learned {word}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
async def count_to(n: int, ctx: Context) -> str:
    """Counts to n, reporting each step as progress and logging where it starts and ends."""
    await ctx.info(f"counting to {n}")
    for i in range(1, n + 1):
        await ctx.report_progress(i, n, f"step {i}")
        # A step takes a moment, as real work does (and the reports are not all in one write).
        await asyncio.sleep(0.02)
    await ctx.warning("done counting")
    await asyncio.sleep(0.05)
    return f"counted to {n}"


class Delivery(BaseModel):
    city: str = Field(description="The city to send it to.")
    express: bool = Field(default=False, description="Whether to send it express.")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
async def ask_city(ctx: Context) -> str:
    """Asks the person which city to send the parcel to, and says what they answered."""
    answer = await ctx.elicit("Which city should the parcel go to?", schema=Delivery)
    if answer.action == "accept":
        return f"sending to {answer.data.city}" + (" by express" if answer.data.express else "")
    return f"the person chose to {answer.action}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def look_for(marker: str) -> dict:
    """Looks for a word in every file reachable from what this process was given: its folder, its HOME, the folders
    of its open files and every path in its environment (not walking whole system folders such as /usr)."""
    roots = {os.getcwd()}
    for value in os.environ.values():
        for part in value.split(os.pathsep):
            if part.startswith("/") and os.path.exists(part):
                roots.add(part)
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("/") and os.path.exists(target):
            roots.add(target)
            roots.add(os.path.dirname(target))
    skip = ("/usr", "/bin", "/sbin", "/lib", "/etc", "/proc", "/sys", "/dev", "/root/.cargo", "/root/.pyenv", "/opt")
    found, read = [], 0
    for root in sorted(roots):
        if root in ("/", "/tmp", "/root") or root.startswith(skip):
            continue
        walk = [(root, [], [os.path.basename(root)])] if os.path.isfile(root) else os.walk(root)
        for folder, _, files in walk:
            for name in files:
                path = folder if os.path.isfile(folder) else os.path.join(folder, name)
                try:
                    with open(path, "rb") as f:
                        if marker.encode() in f.read(64 << 20):
                            found.append(path)
                    read += 1
                except OSError:
                    pass
    return {"roots": sorted(roots), "files_read": read, "found": found}


@server.tool()
async def file_twice(title: str) -> str:
    """Writes two notes into quire through the plugin's own grant (quire's MCP server at QUIRE_MCP_URL, with
    QUIRE_MCP_TOKEN): TITLE 1 and TITLE 2."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    client = create_mcp_http_client(headers={"Authorization": f"Bearer {os.environ['QUIRE_MCP_TOKEN']}"})
    answers = []
    async with client, streamable_http_client(os.environ["QUIRE_MCP_URL"], http_client=client) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            for n in (1, 2):
                result = await session.call_tool("create_note", {"title": f"{title} {n}", "body": "filed by the probe"})
                answers.append("failed" if result.is_error else "filed")
    return " and ".join(answers)


if __name__ == "__main__":
    server.run("stdio")
