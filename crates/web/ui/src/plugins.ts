// Plugins in the page: the Settings screen's list (each plugin's state, error, last words and tools with their
// effects), its add and remove; and, in the sidebar, which plugins this chat may use (kept per chat in this browser).
import { api } from "./api";
import { confirmDialog } from "./dialog";
import { describeError, el, followElsewhere } from "./dom";
import type { PluginView } from "./generated";

const EFFECTS: Record<string, string> = {
  read_only: "reads",
  mutating: "changes things",
  destructive: "removes or overwrites",
};


/// What a list of plugins shows, to tell whether it changed.
const signature = (plugins: PluginView[]) => JSON.stringify(plugins.map((p) => [p.name, p.state, p.error, p.tools.length]));

/// The Settings screen's Plugins section.
export async function pluginSettings(box: HTMLElement) {
  box.replaceChildren(el("p", { class: "hint", text: "Loading…" }));
  try {
    const { plugins, can_manage } = await api.plugins();
    // A plugin added, removed or changed elsewhere: the list and the sidebar's plugin menu follow.
    followElsewhere(box, signature(plugins), async () => signature((await api.plugins()).plugins), () => {
      document.dispatchEvent(new Event("quire:plugins"));
      void pluginSettings(box);
    });
    const list = el("div", { class: "plugin-list" });
    if (plugins.length === 0) {
      list.append(el("p", { class: "hint", text: "No plugins yet. A plugin is an MCP server: its tools join the assistant's." }));
    }
    const changed = () => {
      // The sidebar's plugin menu follows.
      document.dispatchEvent(new Event("quire:plugins"));
      void pluginSettings(box);
    };
    for (const plugin of plugins) list.append(pluginCard(plugin, can_manage, changed));
    box.replaceChildren(list);
    // Plugins start in the background when quire serve starts: look again until none is starting.
    if (plugins.some((p) => p.state === "starting")) window.setTimeout(() => box.isConnected && void pluginSettings(box), 1000);
    if (can_manage) box.append(addForm(changed));
    else box.append(el("p", { class: "hint", text: "Add plugins with `quire plugin add` on the computer running quire." }));
  } catch (e) {
    box.replaceChildren(el("p", { class: "error", text: describeError(e) }));
  }
}

function pluginCard(plugin: PluginView, canManage: boolean, changed: () => void): HTMLElement {
  const state = el("span", { class: `plugin-state ${plugin.state}`, text: plugin.state });
  const card = el(
    "section",
    { class: "plugin", "data-plugin": plugin.name },
    el("h4", {}, el("span", { text: plugin.name }), " ", state),
    el("p", { class: "hint" }, el("code", { text: plugin.launch })),
    el("p", {
      class: "hint plugin-reach",
      text: plugin.sidebar_only
        ? "Its tools are for this assistant only, not for AI clients connected to quire mcp."
        : "Its tools are for this assistant and for AI clients connected to quire mcp.",
    }),
  );
  if (plugin.restarts > 0) card.append(el("p", { class: "hint", text: `Started again ${plugin.restarts} times after a failure.` }));
  if (plugin.error) card.append(el("p", { class: "error", text: plugin.error }));
  if (plugin.stderr.length > 0) {
    card.append(el("details", {}, el("summary", { text: "What it wrote to its log" }), el("pre", { text: plugin.stderr.join("\n") })));
  }
  if (plugin.tools.length > 0) {
    const rows = plugin.tools.map((tool) =>
      el(
        "tr",
        {},
        el("td", {}, el("code", { text: tool.name })),
        el("td", { text: tool.title }),
        el("td", { text: EFFECTS[tool.effect] ?? tool.effect }),
        el("td", { text: tool.needs_approval ? "asks you first" : "" }),
      ),
    );
    card.append(
      el(
        "details",
        {},
        el("summary", { text: `${plugin.tools.length} tool${plugin.tools.length === 1 ? "" : "s"}` }),
        el("table", { class: "plugin-tools" }, el("tbody", {}, ...rows)),
      ),
    );
  }
  if (canManage) {
    const remove = el("button", { type: "button", class: "danger", text: `Remove ${plugin.name}` });
    remove.onclick = async () => {
      // An in-page dialog, as every other question of the app (ux-2 #25: it was the browser's confirm()).
      const sure = await confirmDialog(`Remove ${plugin.name}?`, `Its tools leave the assistant, and its entry leaves config.toml.`, `Remove ${plugin.name}`, true);
      if (!sure) return;
      remove.disabled = true;
      try {
        await api.removePlugin(plugin.name);
        changed();
      } catch (e) {
        card.append(el("p", { class: "error", text: describeError(e) }));
        remove.disabled = false;
      }
    };
    card.append(remove);
  }
  return card;
}

/// Splits a command line into words, keeping quoted parts together.
export function words(line: string): string[] {
  const out: string[] = [];
  const pattern = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (const match of line.matchAll(pattern)) out.push(match[1] ?? match[2] ?? match[3]);
  return out;
}

function addForm(added: () => void): HTMLElement {
  const name = el("input", { id: "plugin-name", required: "", pattern: "[a-z][a-z0-9\\-]{0,31}", placeholder: "weather" });
  const command = el("input", { id: "plugin-command", placeholder: "python3 /path/to/server.py  (or leave empty and give a URL)" });
  const url = el("input", { id: "plugin-url", placeholder: "http://127.0.0.1:9000/mcp" });
  const ask = el("input", { id: "plugin-ask", type: "checkbox" });
  const sidebarOnly = el("input", { id: "plugin-sidebar-only", type: "checkbox" });
  const problem = el("p", { class: "error", hidden: "" });
  const submit = el("button", { type: "submit", text: "Add plugin" });
  const form = el(
    "form",
    { class: "plugin-form", "aria-label": "Add a plugin" },
    el("h4", { text: "Add a plugin" }),
    el("label", { for: "plugin-name", text: "Name (its tools are called NAME__tool)" }),
    name,
    el("label", { for: "plugin-command", text: "Command that starts it (stdio)" }),
    command,
    el("label", { for: "plugin-url", text: "Or its address (Streamable HTTP)" }),
    url,
    el("label", {}, ask, " Ask me before every call that changes something (destructive calls always ask)"),
    el("label", {}, sidebarOnly, " Only for this assistant, not for AI clients connected to quire mcp"),
    el("p", { class: "hint", text: "It runs on this computer as you. quire hands it only what the assistant sends it (its arguments), never the workspace or a key." }),
    submit,
    problem,
  );
  form.onsubmit = async (e) => {
    e.preventDefault();
    problem.hidden = true;
    const [program, ...args] = words(command.value);
    submit.disabled = true;
    submit.textContent = "Starting it…";
    try {
      const plugin = await api.addPlugin({
        name: name.value.trim(),
        command: program ?? null,
        args,
        url: url.value.trim() || null,
        env: {},
        ask_before_writes: ask.checked,
        sidebar_only: sidebarOnly.checked,
      });
      if (plugin.error) window.alert(`${plugin.name} was added but does not work yet: ${plugin.error}`);
      added();
    } catch (err) {
      problem.textContent = describeError(err);
      problem.hidden = false;
    } finally {
      submit.disabled = false;
      submit.textContent = "Add plugin";
    }
  };
  return form;
}

/// Which plugins a chat leaves out, kept in this browser ("new" for a chat not started yet).
const OFF_KEY = "quire.plugins-off.";

export function pluginsOff(chatId: string | null): string[] {
  try {
    return JSON.parse(localStorage.getItem(OFF_KEY + (chatId ?? "new")) ?? "[]") as string[];
  } catch {
    return [];
  }
}

/// Keeps a new chat's choice under its id once it has one.
export function keepChoice(chatId: string) {
  const fresh = localStorage.getItem(OFF_KEY + "new");
  if (fresh !== null && localStorage.getItem(OFF_KEY + chatId) === null) localStorage.setItem(OFF_KEY + chatId, fresh);
  localStorage.removeItem(OFF_KEY + "new");
}

/// The sidebar's "Plugins" menu: a checkbox per plugin, for the chat shown.
export async function pluginToggles(box: HTMLElement, chatId: () => string | null) {
  let plugins: PluginView[] = [];
  try {
    plugins = (await api.plugins()).plugins;
  } catch {
    plugins = [];
  }
  if (plugins.some((p) => p.state === "starting")) {
    // Listed once they are up (quire serve starts them in the background).
    window.setTimeout(() => void pluginToggles(box, chatId), 1000);
    return;
  }
  box.hidden = plugins.length === 0;
  const off = new Set(pluginsOff(chatId()));
  const boxes = plugins.map((plugin) => {
    const check = el("input", { type: "checkbox", "data-plugin": plugin.name });
    check.checked = !off.has(plugin.name);
    check.onchange = () => {
      const now = new Set(pluginsOff(chatId()));
      if (check.checked) now.delete(plugin.name);
      else now.add(plugin.name);
      localStorage.setItem(OFF_KEY + (chatId() ?? "new"), JSON.stringify([...now]));
    };
    const note = plugin.state === "failed" ? ` (not working: ${plugin.error ?? "failed"})` : "";
    return el("label", { class: "plugin-toggle" }, check, ` ${plugin.name}`, el("span", { class: "hint", text: note }));
  });
  box.replaceChildren(el("summary", { text: "Plugins in this chat" }), ...boxes);
}
