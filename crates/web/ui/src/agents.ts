// External agents (ACP) in Settings: each agent in words (what it reaches, whether its writes wait for review, the
// folder and terminal it was given), Test and Remove; and the form that adds one. The sidebar's picker offers them.

import { api } from "./api";
import { confirmDialog } from "./dialog";
import { describeError, el, followElsewhere } from "./dom";
import type { AgentView } from "./generated";
import { words } from "./plugins";

/// The Settings screen's External agents section.
export async function agentSettings(box: HTMLElement) {
  if (!box.firstChild) box.append(el("p", { class: "hint", text: "Loading…" }));
  try {
    const { agents, error } = await api.agents();
    const redraw = () => void agentSettings(box);
    const list = el("div", { class: "agent-list" });
    if (error) list.append(el("p", { class: "error", text: error }));
    if (!agents.length && !error) {
      list.append(el("p", { class: "hint", text: "No agent yet. An agent that speaks ACP (Codex through codex-acp, Claude Code, Gemini CLI) takes a model's place in the sidebar, reaching your notes through quire only." }));
    }
    for (const agent of agents) list.append(card(agent, redraw));
    box.replaceChildren(list, addForm(redraw));
    // An agent added or removed in a terminal: drawn again.
    const signature = (shown: AgentView[]) => JSON.stringify(shown.map((a) => [a.name, a.described, a.env]));
    followElsewhere(box, signature(agents), async () => signature((await api.agents()).agents), redraw);
  } catch (e) {
    box.replaceChildren(el("p", { class: "error", text: describeError(e) }));
  }
}

function card(agent: AgentView, changed: () => void): HTMLElement {
  const said = el("p", { class: "hint agent-test" });
  const test = el("button", { type: "button", text: "Test" });
  test.onclick = async () => {
    test.disabled = true;
    said.className = "hint agent-test";
    said.textContent = "Starting it…";
    try {
      said.textContent = (await api.testAgent(agent.name)).said;
    } catch (e) {
      said.className = "error agent-test";
      said.textContent = describeError(e);
    } finally {
      test.disabled = false;
    }
  };
  const remove = el("button", { type: "button", class: "danger", text: "Remove" });
  remove.onclick = async () => {
    if (!(await confirmDialog(`Remove ${agent.name}?`, "Its entry leaves config.toml; chats with it are kept.", `Remove ${agent.name}`, true))) return;
    try {
      await api.removeAgent(agent.name);
      changed();
    } catch (e) {
      said.className = "error agent-test";
      said.textContent = describeError(e);
    }
  };
  return el(
    "section",
    { class: "automation", "data-agent": agent.name },
    el("h4", { text: agent.name }),
    el("p", { class: "hint", text: agent.described }),
    agent.env.length ? el("p", { class: "hint", text: `Its environment: ${agent.env.join(", ")}` }) : "",
    el("div", { class: "automation-actions" }, test, remove),
    said,
  );
}

function addForm(added: () => void): HTMLElement {
  const name = el("input", { id: "agent-name", required: "", maxlength: "60", placeholder: "codex" });
  const command = el("input", { id: "agent-command", required: "", placeholder: "npx @zed-industries/codex-acp" });
  const notebooks = el("input", { id: "agent-notebooks", placeholder: "Work, Projects  (empty: all notebooks)" });
  const env = el("input", { id: "agent-env", placeholder: "OPENAI_API_KEY  (NAME passes yours on; NAME=VALUE keeps a value)" });
  const files = el("input", { id: "agent-files", placeholder: "/home/me/project  (empty: no file system)" });
  const terminal = el("input", { id: "agent-terminal", type: "checkbox" });
  const apply = el("input", { id: "agent-apply", type: "checkbox" });
  const problem = el("p", { class: "error", hidden: "" });
  const submit = el("button", { type: "submit", text: "Add agent" });
  const form = el(
    "form",
    { class: "automation-form", "aria-label": "Add an agent" },
    el("h4", { text: "Add an agent" }),
    el("label", { for: "agent-name", text: "Name" }),
    name,
    el("label", { for: "agent-command", text: "Command that starts it (it speaks ACP on its standard input and output)" }),
    command,
    el("label", { for: "agent-notebooks", text: "Notebooks it reaches" }),
    notebooks,
    el("label", { for: "agent-env", text: "Its environment (it gets nothing of yours but PATH, HOME and the locale)" }),
    env,
    el("label", { for: "agent-files", text: "A folder whose files it may read and write" }),
    files,
    el("label", {}, terminal, " Let it run commands (in that folder)"),
    el("label", {}, apply, " Apply its writes at once instead of waiting for my review"),
    submit,
    problem,
  );
  form.onsubmit = async (e) => {
    e.preventDefault();
    problem.hidden = true;
    const [program, ...args] = words(command.value);
    submit.disabled = true;
    try {
      await api.addAgent({
        name: name.value.trim(),
        command: program ?? "",
        args,
        notebooks: notebooks.value.split(",").map((n) => n.trim()).filter(Boolean),
        env: words(env.value),
        files: files.value.trim() || null,
        terminal: terminal.checked,
        apply_writes: apply.checked,
      });
      added();
    } catch (err) {
      problem.textContent = describeError(err);
      problem.hidden = false;
    } finally {
      submit.disabled = false;
    }
  };
  return form;
}
