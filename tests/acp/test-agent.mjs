// An ACP agent for quire's tests, built on the official SDKs: the Agent Client Protocol's TypeScript SDK for its
// side of ACP, and the MCP TypeScript SDK for the MCP server its session is given (quire's own). What it does is
// steered by the prompt, so that a test knows what to expect:
// - any prompt (its first line steers it): a plan of two steps; `search_notes` for its last word through quire's MCP server, shown as a
//   tool call; then, asking permission first (unless the prompt says "without asking"), `create_note` "Agent summary"
//   with what it found; then its answer.
// - a prompt with "wait": it works until it is cancelled, then ends its turn as cancelled.
// - a prompt with "files": it asks the client to read a file (the path after "files", or /etc/hostname) and says
//   what it read or was told; "write PATH": it asks the client to write that file; "terminal": it runs
//   `sh -c 'echo hello from $PWD'` in a client terminal and says its output (quire offers neither unless the agent
//   was given a folder or a terminal).
// Run from the folder where both SDKs are installed (the tests copy it there).
import * as acp from "@agentclientprotocol/sdk";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Readable, Writable } from "node:stream";

const sessions = new Map();

async function connectMcp(server) {
  const env = Object.fromEntries((server.env ?? []).map((v) => [v.name, v.value]));
  const transport = new StdioClientTransport({ command: server.command, args: server.args ?? [], env: { ...process.env, ...env } });
  const mcp = new Client({ name: "quire-test-agent-mcp", version: "1.0.0" });
  await mcp.connect(transport);
  return mcp;
}

const text = (result) => (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

const app = acp
  .agent({ name: "quire-test-agent" })
  .onRequest(acp.methods.agent.initialize, () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: { loadSession: false, mcpCapabilities: { http: false, sse: false } },
    agentInfo: { name: "quire-test-agent", version: "1.0.0" },
    authMethods: [],
  }))
  .onRequest(acp.methods.agent.session.new, async ({ params }) => {
    const sessionId = `s${sessions.size + 1}`;
    const quire = params.mcpServers.find((s) => s.name === "quire");
    const mcp = quire ? await connectMcp(quire) : null;
    sessions.set(sessionId, { mcp, cancelled: false });
    return { sessionId };
  })
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    const session = sessions.get(params.sessionId);
    if (session) session.cancelled = true;
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    const session = sessions.get(params.sessionId);
    session.cancelled = false;
    // What steers it is the prompt's first line (an automation's prompt is followed by lines that say why it runs).
    const prompt = params.prompt.filter((b) => b.type === "text").map((b) => b.text).join(" ").trim().split("\n")[0];
    const update = (u) => client.notify(acp.methods.client.session.update, { sessionId: params.sessionId, update: u });
    const say = (words) => update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: words } });
    if (prompt.includes("wait")) {
      await say("Working");
      while (!session.cancelled) await new Promise((r) => setTimeout(r, 20));
      return { stopReason: "cancelled" };
    }
    const words = prompt.trim().split(/\s+/);
    if (prompt.includes("files")) {
      const path = words[words.indexOf("files") + 1] ?? "/etc/hostname";
      try {
        const read = await client.request(acp.methods.client.fs.readTextFile, { sessionId: params.sessionId, path });
        await say(`I read a file: ${read.content.trim()}`);
      } catch (e) {
        await say(`No file system: ${e.message}`);
      }
      return { stopReason: "end_turn" };
    }
    if (words[0] === "write") {
      try {
        await client.request(acp.methods.client.fs.writeTextFile, { sessionId: params.sessionId, path: words[1], content: "written by the agent\n" });
        await say("I wrote a file.");
      } catch (e) {
        await say(`No file system: ${e.message}`);
      }
      return { stopReason: "end_turn" };
    }
    if (words[0] === "terminal") {
      try {
        const t = { sessionId: params.sessionId };
        const { terminalId } = await client.request(acp.methods.client.terminal.create, { ...t, command: "sh", args: ["-c", "echo hello from $PWD"] });
        const exit = await client.request(acp.methods.client.terminal.waitForExit, { ...t, terminalId });
        const out = await client.request(acp.methods.client.terminal.output, { ...t, terminalId });
        await client.request(acp.methods.client.terminal.release, { ...t, terminalId });
        await say(`The terminal said: ${out.output.trim()} (exit ${exit.exitCode})`);
      } catch (e) {
        await say(`No terminal: ${e.message}`);
      }
      return { stopReason: "end_turn" };
    }
    const word = prompt.trim().split(/\s+/).pop();
    await update({
      sessionUpdate: "plan",
      entries: [
        { content: `Search the notes for ${word}`, priority: "high", status: "in_progress" },
        { content: "Write a summary note", priority: "medium", status: "pending" },
      ],
    });
    await update({ sessionUpdate: "tool_call", toolCallId: "t1", title: `Search notes for ${word}`, kind: "search", status: "in_progress", rawInput: { query: word } });
    const found = await session.mcp.callTool({ name: "search_notes", arguments: { query: word } });
    const titles = (found.structuredContent?.results ?? []).map((r) => r.title);
    await update({ sessionUpdate: "tool_call_update", toolCallId: "t1", status: "completed", rawOutput: { titles } });
    await update({
      sessionUpdate: "plan",
      entries: [
        { content: `Search the notes for ${word}`, priority: "high", status: "completed" },
        { content: "Write a summary note", priority: "medium", status: "in_progress" },
      ],
    });
    const body = `Notes about ${word}: ${titles.join(", ")}`;
    await update({ sessionUpdate: "tool_call", toolCallId: "t2", title: "Create note “Agent summary”", kind: "edit", status: "pending", rawInput: { title: "Agent summary", body } });
    // "without asking": it writes through quire at once (quire stages it), as agents do for MCP tools.
    const asked = /without asking/i.test(prompt)
      ? { outcome: { outcome: "selected", optionId: "yes" } }
      : await client.request(acp.methods.client.session.requestPermission, {
          sessionId: params.sessionId,
          toolCall: { toolCallId: "t2", title: "Create note “Agent summary”", kind: "edit", rawInput: { title: "Agent summary", body } },
          options: [
            { optionId: "yes", name: "Allow", kind: "allow_once" },
            { optionId: "no", name: "Reject", kind: "reject_once" },
          ],
        });
    const allowed = asked.outcome.outcome === "selected" && asked.outcome.optionId === "yes";
    if (allowed) {
      const made = await session.mcp.callTool({ name: "create_note", arguments: { title: "Agent summary", body } });
      await update({ sessionUpdate: "tool_call_update", toolCallId: "t2", status: made.isError ? "failed" : "completed", content: [{ type: "content", content: { type: "text", text: text(made) } }] });
    } else {
      await update({ sessionUpdate: "tool_call_update", toolCallId: "t2", status: "failed", content: [{ type: "content", content: { type: "text", text: "Not allowed." } }] });
    }
    await say(`Found ${titles.length} note${titles.length === 1 ? "" : "s"} about ${word}`);
    await say(allowed ? " and wrote a summary." : "; I wrote nothing.");
    return { stopReason: "end_turn" };
  });

const connection = app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
await connection.closed;
for (const session of sessions.values()) await session.mcp?.close();
