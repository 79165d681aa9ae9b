// The assistant sidebar: chats of the open note, a turn streamed over server-sent events (reply text, tool cards,
// approval cards, proposed edits), cancel, the tokens and estimated cost of each turn and of the chat, and the
// selection a message will send.
import { ChangeSet } from "@codemirror/state";
import { api, startTurn, type ChatMessage, type WireEdit } from "./api";
import type { AgentEvent, ChatTotals, RenderSpec, Summary, TurnDone, Usage } from "./generated";
import { renderMarkdown } from "./markdown";
import { modelForm } from "./models";
import { keepChoice, pluginToggles, pluginsOff } from "./plugins";
import { renderMedia } from "./pluginview";
import { questionForm } from "./question";
import { hunks, proposalsFor, setProposals, charOffset } from "./proposals";
import { $, describeError, el, status } from "./dom";
import type { NoteEditor } from "./editor";
import type { Store } from "./store";

interface Running {
  controller: AbortController;
  turnId: string | null;
  noteId: string | null;
  base: string;
  since: ChangeSet;
  edits: WireEdit[];
  reply: HTMLElement | null;
  replyText: string;
  cards: Map<string, HTMLElement>;
  /// An external agent's plan, shown once and updated in place.
  plan?: HTMLElement;
  /// The user cancelled it: what it wrote is rolled back and its proposed edits are dropped.
  cancelled: boolean;
}

export class Chat {
  chatId: string | null = null;
  /// The actor of the last finished turn, so accepted edits join its change set.
  turnActor: unknown = null;
  running: Running | null = null;
  private nextProposal = 1;
  /// Counts the requests that fill the chat list or the conversation; see `loadChats`.
  private chatRequests = 0;
  private configured = false;

  constructor(
    private readonly store: Store,
    private readonly editor: NoteEditor,
  ) {
    // What the assistant sees follows the open note.
    store.subscribe("note", () => this.showFocus());
    store.subscribe("focus", () => this.focusChanged());
    store.subscribe("leaving", () => this.leaveNote());
    // A model or an agent added in a terminal meanwhile is in the picker when the person comes back to the page or to
    // the message box.
    window.addEventListener("focus", () => void this.loadSettings());
    $("message").addEventListener("focus", () => void this.loadSettings());
    $("ask").onsubmit = (e) => {
      e.preventDefault();
      void this.send();
    };
    $("message").addEventListener("keydown", (e) => {
      const key = e as KeyboardEvent;
      // Enter sends, as in other chat boxes; Shift+Enter starts a new line. A phone's keyboard has no Shift+Enter:
      // there Enter starts a new line and the Send button sends (ux-2 #15).
      if (key.key === "Enter" && !key.shiftKey && !key.isComposing && !onPhone()) {
        e.preventDefault();
        void this.send();
      }
    });
    $("cancel").onclick = () => void this.cancel();
    $("new-chat").onclick = () => this.newChat();
    $("chats").onchange = () => void this.openChat($<HTMLSelectElement>("chats").value || null);
    // The editor announces each change of selection: say what a message would send.
    document.addEventListener("quire:selection", () => this.showFocus());
    // A plugin added or removed in Settings.
    document.addEventListener("quire:plugins", () => this.showPlugins());
    // Turned into a phone's layout or back: the box says which key sends.
    window.matchMedia(PHONE_OR_TOUCH).addEventListener("change", () => this.showFocus());
  }

  async loadSettings() {
    this.showPlugins();
    try {
      const settings = await api.settings();
      const select = $<HTMLSelectElement>("model");
      // The same choices as shown: nothing to redraw (the person's pick stays as it is).
      const offered = JSON.stringify([settings.models.map((m) => [m.name, m.model, m.is_default]), settings.agents]);
      if (select.dataset.offered === offered) return;
      select.dataset.offered = offered;
      const picked = select.value;
      select.replaceChildren(
        ...settings.models.map((m) => {
          const option = el("option", { value: m.name, text: m.name === m.model ? m.model : `${m.name} (${m.model})` });
          option.selected = m.is_default;
          return option;
        }),
      );
      // External agents (ACP) run a turn instead of a model: listed after the models.
      if (settings.agents.length) {
        const agents = el("optgroup", { label: "Agents" });
        agents.append(...settings.agents.map((name) => el("option", { value: `agent:${name}`, text: `${name} (agent)` })));
        select.append(agents);
      }
      // What the person picked stays picked while it is still offered.
      if (picked && [...select.options].some((o) => o.value === picked)) select.value = picked;
      select.hidden = settings.models.length + settings.agents.length === 0;
      this.configured = settings.models.length + settings.agents.length > 0;
      // Without a model there are no chats to pick: only the setup hint shows.
      document.querySelector<HTMLElement>(".chat-bar")!.hidden = !this.configured;
      if (!this.configured) {
        const hint = el("p", { text: settings.setup_hint ?? "No model is configured." });
        // The form first when the page may add a model; the configuration file's way folded below it.
        const body = settings.can_add_models
          ? [modelForm(() => void this.loadSettings()), el("details", {}, el("summary", { text: "Or set it in config.toml" }), hint)]
          : [hint];
        $("messages").replaceChildren(el("div", { class: "setup" }, el("h3", { text: "Set up a model" }), ...body));
        $<HTMLButtonElement>("send").disabled = true;
      } else if (document.querySelector("#messages .setup")) {
        // A model was just added from the page: the chat is ready.
        $("messages").replaceChildren();
        $<HTMLButtonElement>("send").disabled = false;
      }
    } catch (e) {
      status(`Settings could not be loaded: ${describeError(e)}`, true);
    }
  }

  /// Says what the assistant sees of the open note (call after anything that changes its title, trash or lock).
  showFocus() {
    const note = this.store.open;
    const focus = $("focus");
    // The box says what a message is about: the open note only when the assistant sees it.
    const keys = onPhone() ? "Send sends, Enter starts a new line" : "Enter sends, Shift+Enter for a new line";
    $<HTMLTextAreaElement>("message").placeholder =
      note && !note.is_protected && !note.in_trash
        ? `Ask about this note, or select text first… (${keys})`
        : `Ask about your notes… (${keys})`;
    if (!note) focus.textContent = "No note is open: the assistant works on the whole workspace.";
    else if (note.is_protected)
      focus.textContent = `“${note.title}” is protected: the assistant runs with no note in focus and never sees it.`;
    else if (note.in_trash) focus.textContent = `“${note.title}” is in the trash: the assistant runs with no note in focus.`;
    else {
      const selected = this.selectedText();
      focus.textContent = selected
        ? `In focus: “${note.title}”. Selection: “${quote(selected)}” (${[...selected].length} character${[...selected].length === 1 ? "" : "s"}), sent with your message.`
        : `In focus: “${note.title}”. Select text to ask about a part.`;
    }
  }

  /// The text selected in the editor (what `send` sends as the selection), or "" when nothing is.
  private selectedText(): string {
    const view = this.editor.view;
    const sel = view.state.selection.main;
    return sel.empty ? "" : view.state.sliceDoc(sel.from, sel.to);
  }

  /// Another note was opened: say what the assistant sees, and list that note's chats.
  focusChanged() {
    this.showFocus();
    if (this.configured) void this.loadChats();
  }

  focusedNote() {
    const note = this.store.open;
    return note && !note.is_protected && !note.in_trash ? note : null;
  }

  async loadChats() {
    const note = this.focusedNote();
    // Only the newest request may fill the list: an older answer arriving late must not clear a chat opened since.
    const seq = ++this.chatRequests;
    try {
      const { chats } = await api.chats(note?.note_id);
      if (seq !== this.chatRequests) return;
      const select = $<HTMLSelectElement>("chats");
      select.replaceChildren(el("option", { value: "", text: chats.length ? "New chat" : "No chats yet" }), ...chats.map((c) => el("option", { value: c.chat_id, text: chatLabel(c) })));
      this.newChat();
    } catch (e) {
      status(describeError(e), true);
    }
  }

  /// The sidebar's plugin menu, for the chat shown.
  showPlugins() {
    void pluginToggles($("plugin-toggles"), () => this.chatId);
  }

  newChat() {
    if (this.running) return;
    this.chatId = null;
    this.showPlugins();
    $<HTMLSelectElement>("chats").value = "";
    if (this.configured) $("messages").replaceChildren();
    $("usage").textContent = "";
  }

  async openChat(id: string | null) {
    if (this.running) return;
    if (!id) return this.newChat();
    const seq = ++this.chatRequests;
    try {
      const chat = await api.chat(id);
      if (seq !== this.chatRequests) return;
      this.chatId = chat.chat_id;
      this.showPlugins();
      $("messages").replaceChildren(...chat.messages.flatMap((m) => bubbles(m, chat.tool_titles)));
      if (chat.summary) $("messages").append(this.summaryCard(chat.summary));
      $("usage").textContent = chat.usage.turns ? chatLine(chat.usage) : "";
    } catch (e) {
      status(describeError(e), true);
    }
  }

  /// The user typed while a turn ran: edits the turn proposes are carried through these changes.
  userChanged(changes: ChangeSet) {
    if (this.running) this.running.since = this.running.since.compose(changes);
  }

  /// Leaving the note (or the page) stops the turn; what it already wrote stays, undoable from history.
  leaveNote() {
    if (this.running) {
      this.running.controller.abort();
      status("The turn stopped when you left the note; what it changed is in Recent changes.");
    }
  }

  async cancel() {
    const turn = this.running;
    if (!turn?.turnId) return;
    turn.cancelled = true;
    try {
      await api.cancel(turn.turnId);
    } catch (e) {
      status(describeError(e), true);
    }
  }

  async send() {
    const input = $<HTMLTextAreaElement>("message");
    const message = input.value.trim();
    if (!message || this.running || !this.configured) return;
    const note = this.focusedNote();
    const view = this.editor.view;
    const base = note ? view.state.doc.toString() : "";
    const sel = view.state.selection.main;
    const request = {
      message,
      chat_id: this.chatId,
      note_id: this.store.open?.note_id ?? null,
      body: note ? base : null,
      selection: note && !sel.empty ? [charOffset(base, sel.from), charOffset(base, sel.to)] : null,
      // A long note is shown to the model around the cursor.
      cursor: note ? charOffset(base, sel.head) : null,
      model: $<HTMLSelectElement>("model").value || null,
      // The plugins this chat leaves out (the sidebar's Plugins menu).
      plugins_off: pluginsOff(this.chatId),
    };
    input.value = "";
    const messages = $("messages");
    messages.append(...bubbles({ role: "user", content: message }));
    const turn: Running = {
      controller: new AbortController(),
      turnId: null,
      noteId: note?.note_id ?? null,
      base,
      since: ChangeSet.empty(view.state.doc.length),
      edits: [],
      reply: null,
      replyText: "",
      cards: new Map(),
      cancelled: false,
    };
    this.running = turn;
    this.busy(true);
    try {
      for await (const { event, data } of startTurn(request, turn.controller.signal)) {
        if (event === "started") {
          turn.turnId = data.turn_id;
          if (!this.chatId) keepChoice(data.chat_id);
          this.chatId = data.chat_id;
          if (data.focus_refused) messages.append(el("p", { class: "notice", text: `No note in focus: ${data.focus_refused}` }));
        } else if (event === "agent") this.onAgentEvent(turn, data);
        else if (event === "done") this.onDone(turn, data);
        messages.scrollTop = messages.scrollHeight;
      }
    } catch (e) {
      if (!turn.controller.signal.aborted) messages.append(el("p", { class: "error", text: describeError(e) }));
    } finally {
      this.running = null;
      this.busy(false);
    }
  }

  busy(on: boolean) {
    $<HTMLButtonElement>("send").disabled = on || !this.configured;
    $("cancel").hidden = !on;
    $<HTMLSelectElement>("chats").disabled = on;
    $<HTMLButtonElement>("new-chat").disabled = on;
  }

  onAgentEvent(turn: Running, data: AgentEvent) {
    const messages = $("messages");
    switch (data.event) {
      case "text_delta": {
        if (!turn.reply) {
          turn.reply = el("div", { class: "bubble assistant markdown" });
          messages.append(turn.reply);
        }
        turn.replyText += data.text;
        turn.reply.innerHTML = renderMarkdown(turn.replyText);
        break;
      }
      case "tool_started": {
        // Text after a tool call starts a new reply bubble.
        turn.reply = null;
        turn.replyText = "";
        const card = el(
          "details",
          { class: "tool-card running", "data-call": data.call_id },
          el("summary", {}, el("span", { class: "tool-title", text: data.title }), el("span", { class: "tool-state", text: " · running" })),
          el("h4", { text: "Arguments" }),
          el("pre", { class: "json", text: pretty(data.arguments) }),
        );
        card.dataset.args = data.arguments;
        turn.cards.set(data.call_id, card);
        messages.append(card);
        break;
      }
      case "tool_finished": {
        const card = turn.cards.get(data.call_id);
        if (!card) break;
        card.classList.remove("running");
        card.classList.toggle("failed", data.is_error);
        card.querySelector(".tool-state")!.textContent = data.is_error ? " · failed" : " · done";
        card.append(el("h4", { text: "Result" }), renderResult(data.output, data.render));
        card.querySelector(".approval")?.remove();
        // Images, links and views a plugin returned are shown beside the card, open.
        const media = renderMedia(data.content, card.dataset.args ?? "{}", data.output);
        if (media.length > 0) messages.append(el("div", { class: "tool-media", "data-call": data.call_id }, ...media));
        break;
      }
      case "tool_progress": {
        // A plugin says how far it is: a bar when it knows the total, the count and its words otherwise.
        const card = turn.cards.get(data.call_id);
        if (!card) break;
        let line = card.querySelector<HTMLElement>(".tool-progress");
        if (!line) {
          // In the summary: seen while the card is folded, as it is while the call runs.
          line = el("span", { class: "tool-progress", role: "status" });
          card.querySelector("summary")!.append(line);
        }
        const parts: (HTMLElement | string)[] = [];
        if (data.total) parts.push(el("progress", { value: String(data.progress), max: String(data.total) }));
        const count = data.total ? `${data.progress} of ${data.total}` : `${data.progress}`;
        parts.push(el("span", { text: data.message ? `${data.message} (${count})` : count }));
        line.replaceChildren(...parts);
        break;
      }
      case "tool_log": {
        // A plugin's log lines, the last few, under its card.
        const card = turn.cards.get(data.call_id);
        if (!card) break;
        let log = card.querySelector<HTMLElement>(".tool-log");
        if (!log) {
          log = el("ul", { class: "tool-log", "aria-label": "What the plugin logged" });
          card.append(log);
        }
        log.append(el("li", { class: `log-${data.level}`, text: data.message }));
        while (log.children.length > 20) log.firstElementChild?.remove();
        break;
      }
      case "edit_proposed": {
        turn.edits.push(data.edit);
        const count = turn.edits.length;
        status(`${count} edit${count === 1 ? "" : "s"} proposed; they show in the editor when the turn ends.`);
        break;
      }
      case "question_asked": {
        // A plugin asks the person something: a form under its call; the call waits for the answer.
        const question = data.question;
        const card = turn.cards.get(question.call_id) as HTMLDetailsElement | undefined;
        const form = questionForm(question, async (action, content) => {
          await api.answer(turn.turnId ?? "", question.question_id, action, content);
        });
        if (card) {
          card.open = true;
          card.append(form);
        } else messages.append(form);
        form.querySelector<HTMLElement>("input, select, button")?.focus();
        break;
      }
      case "plan": {
        // An external agent's plan, replaced whole each time it changes.
        if (!turn.plan) {
          turn.plan = el("div", { class: "plan-card", role: "status", "aria-label": "The agent's plan" });
          messages.append(turn.plan);
        }
        const mark = (status: string) => (status === "completed" ? "✓" : status === "in_progress" ? "→" : "·");
        turn.plan.replaceChildren(
          el("h4", { text: "Plan" }),
          el("ol", {}, ...data.steps.map((s) => el("li", { class: `plan-${s.status}`, text: `${mark(s.status)} ${s.text}` }))),
        );
        break;
      }
      case "approval_needed": {
        const request = data.request;
        const card = turn.cards.get(request.call_id) as HTMLDetailsElement | undefined;
        const box = el("div", { class: "approval", role: "group", "aria-label": `Approve ${request.title}` });
        // An external agent asks in its own name.
        const picked = $<HTMLSelectElement>("model").value;
        const who = picked.startsWith("agent:") ? picked.slice("agent:".length) : "The assistant";
        const question = el("p", { text: `${who} wants to run “${request.title}”. Allow it?` });
        box.append(question);
        const target = (request.arguments as { note_id?: unknown } | null)?.note_id;
        if (typeof target === "string") {
          void api
            .note(target)
            .then((note) => {
              const what = request.tool === "delete_note" ? `move “${note.title}” to the trash (you can restore it from there)` : `run “${request.title}” on “${note.title}”`;
              question.textContent = `${who} wants to ${what}. Allow it?`;
            })
            .catch(() => undefined);
        }
        const allow = el("button", { type: "button", class: "danger", text: "Allow" });
        const refuse = el("button", { type: "button", text: "Refuse" });
        const answer = async (yes: boolean) => {
          allow.disabled = refuse.disabled = true;
          try {
            await api.approve(turn.turnId ?? "", request.call_id, yes);
            box.replaceChildren(el("p", { text: yes ? "Allowed." : "Refused." }));
          } catch (e) {
            box.append(el("p", { class: "error", text: describeError(e) }));
          }
        };
        allow.onclick = () => void answer(true);
        refuse.onclick = () => void answer(false);
        box.append(allow, refuse);
        if (card) {
          card.open = true;
          card.append(box);
        } else messages.append(box);
        refuse.focus();
        break;
      }
    }
  }

  /// What stands for a long chat's earlier turns in requests: the summary the model wrote, which the person can
  /// read, and drop so that the next turn sends the whole chat.
  summaryCard(summary: Summary): HTMLElement {
    const drop = el("button", { type: "button", text: "Send the whole chat again" });
    const card = el(
      "details",
      { class: "tool-card chat-summary" },
      el("summary", { text: `The chat grew long: its first ${summary.covers} messages are sent as this summary` }),
      el("p", { text: summary.text }),
      drop,
    );
    drop.addEventListener("click", async () => {
      if (!this.chatId) return;
      try {
        await api.dropChatSummary(this.chatId);
        card.replaceChildren(el("p", { text: "Summary dropped: the next message sends the whole chat." }));
      } catch (e) {
        status(describeError(e), true);
      }
    });
    return card;
  }

  onDone(turn: Running, done: TurnDone | null) {
    const messages = $("messages");
    if (!done) {
      messages.append(el("p", { class: "error", text: "The turn ended without an outcome." }));
      return;
    }
    this.turnActor = done.turn_actor ?? null;
    if (done.error) messages.append(el("p", { class: "error", text: `The turn stopped: ${done.error}` }));
    if (done.summarised) {
      messages.append(this.summaryCard(done.summarised));
      messages.scrollTop = messages.scrollHeight;
    }
    if (done.usage) {
      const cost = done.cost === null ? "" : `, est. cost ${money(done.cost)}`;
      // An external agent counts its own tokens (it made no model call of quire's): no usage line for its turn.
      $("usage").textContent = done.steps
        ? `This turn: ${tokens(done.usage)}, ${done.steps} step${done.steps === 1 ? "" : "s"}${cost} · ${chatLine(done.chat_usage)}`
        : "";
    }
    // A cancelled turn is rolled back whole: nothing of it stays on offer either.
    const edits: WireEdit[] = turn.cancelled ? [] : done.edits.length ? done.edits : turn.edits;
    if (turn.cancelled) {
      // Each card of the turn says so: what its call wrote was rolled back with the rest (a card said "done" before).
      for (const card of turn.cards.values()) {
        card.classList.remove("running");
        card.classList.add("cancelled");
        const state = card.querySelector(".tool-state");
        if (state) state.textContent = " · cancelled, rolled back";
      }
      const dropped = turn.edits.length;
      status(
        `Cancelled: what the turn changed in your notes was rolled back${dropped ? `, and its ${dropped} proposed edit${dropped === 1 ? " was" : "s were"} dropped` : ""}.`,
      );
    }
    const open = this.store.open;
    if (edits.length && open && open.note_id === turn.noteId) {
      const view = this.editor.view;
      const found = hunks(turn.base, edits);
      const proposals = proposalsFor(view.state, found, turn.since, this.nextProposal);
      this.nextProposal += proposals.length;
      view.dispatch({ effects: setProposals.of(proposals) });
      this.store.notify("proposals");
      const stale = proposals.filter((p) => p.stale).length;
      status(`${proposals.length} proposed edit${proposals.length === 1 ? "" : "s"} in the editor${stale ? `, ${stale} stale (you changed that text)` : ""}.`);
    }
    if (done.change_set_id) this.store.notify("changed");
    void this.refreshChatList();
  }

  async refreshChatList() {
    const id = this.chatId;
    const note = this.focusedNote();
    try {
      const { chats } = await api.chats(note?.note_id);
      const select = $<HTMLSelectElement>("chats");
      select.replaceChildren(el("option", { value: "", text: "New chat" }), ...chats.map((c) => el("option", { value: c.chat_id, text: chatLabel(c) })));
      select.value = id ?? "";
    } catch {
      // The list is refreshed on the next note change.
    }
  }
}

/// A stored message: the user's words, the assistant's reply (and a card per tool call it made), a tool's result.
function bubbles(m: ChatMessage, titles: Record<string, string> = {}): HTMLElement[] {
  if (m.role === "user") return [el("div", { class: "bubble user", text: m.content })];
  if (m.role === "tool") {
    return [
      el(
        "details",
        { class: `tool-card${m.is_error ? " failed" : ""}` },
        el("summary", { text: `${titles[m.name] ?? m.name} · ${m.is_error ? "failed" : "result"}` }),
        el("pre", { class: "json", text: pretty(m.content) }),
      ),
    ];
  }
  const out: HTMLElement[] = [];
  if (m.content.trim()) {
    const div = el("div", { class: "bubble assistant markdown" });
    div.innerHTML = renderMarkdown(m.content);
    out.push(div);
  }
  for (const call of m.tool_calls ?? []) {
    out.push(el("details", { class: "tool-card" }, el("summary", { text: `${titles[call.name] ?? call.name} · called` }), el("pre", { class: "json", text: pretty(call.arguments) })));
  }
  return out;
}

/// A chat's totals: its turns, their tokens, and what the priced ones cost.
function chatLine(chat: ChatTotals): string {
  let line = `This chat: ${chat.turns} turn${chat.turns === 1 ? "" : "s"}, ${tokens(chat.usage)}`;
  if (chat.cost !== null) {
    line += `, est. cost ${money(chat.cost)}`;
    if (chat.priced_turns < chat.turns) line += ` (${chat.priced_turns} of ${chat.turns} turns priced)`;
  }
  return line;
}

/// Tokens in (with what the provider's cache served or stored, when it says) and out, as `quire chat` prints them.
function tokens(u: Usage): string {
  const cache = [
    u.cached_input_tokens ? `${grouped(u.cached_input_tokens)} cached` : "",
    u.cache_write_tokens ? `${grouped(u.cache_write_tokens)} written to the cache` : "",
  ].filter(Boolean);
  return `${grouped(u.input_tokens)} tokens in${cache.length ? ` (${cache.join(", ")})` : ""}, ${grouped(u.output_tokens)} out`;
}

function grouped(n: number): string {
  return n.toLocaleString("en-US");
}

/// An estimated cost in the currency units of the model's prices: more digits for the small sums a turn costs.
function money(cost: number): string {
  return cost.toFixed(cost >= 0.1 ? 2 : cost >= 0.001 ? 4 : 6);
}

/// A short quote of a selection: its spaces folded, at most 40 characters, an ellipsis when cut.
function quote(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const chars = [...flat];
  return chars.length > 40 ? `${chars.slice(0, 39).join("").trimEnd()}…` : flat;
}

function pretty(raw: unknown): string {
  if (typeof raw === "string") {
    try {
      return JSON.stringify(JSON.parse(raw), null, 2);
    } catch {
      return raw;
    }
  }
  return JSON.stringify(raw, null, 2);
}

/// A tool's result: the plugin's render spec when it gave one (text, Markdown, table, list), else the JSON.
function renderResult(output: unknown, render: RenderSpec | null | undefined): HTMLElement {
  if (render?.kind === "text") return el("pre", { class: "render-text", text: render.text });
  if (render?.kind === "markdown") {
    const div = el("div", { class: "markdown" });
    div.innerHTML = renderMarkdown(render.markdown);
    return div;
  }
  if (render?.kind === "table") {
    return el(
      "table",
      {},
      el("thead", {}, el("tr", {}, ...render.columns.map((c) => el("th", { text: c })))),
      el("tbody", {}, ...render.rows.map((row) => el("tr", {}, ...row.map((cell) => el("td", { text: cell }))))),
    );
  }
  if (render?.kind === "list") {
    return el(
      "ul",
      { class: "render-list" },
      ...render.items.map((item) => el("li", {}, el("strong", { text: item.title }), item.subtitle ? ` ${item.subtitle}` : "")),
    );
  }
  return el("pre", { class: "json", text: pretty(output) });
}

/// A chat in the picker: its title and when it last changed, to the minute, so that chats with the same first
/// question differ.
function chatLabel(chat: { title: string; updated: string }): string {
  const at = new Date(chat.updated);
  return `${chat.title} · ${at.toLocaleDateString()} ${at.toLocaleTimeString([], { hour: "numeric", minute: "2-digit" })}`;
}

/// A phone's layout (its width), or a screen used by touch alone: no Shift+Enter there.
const PHONE_OR_TOUCH = "(max-width: 700px), (pointer: coarse)";

function onPhone(): boolean {
  return window.matchMedia(PHONE_OR_TOUCH).matches;
}
