// What AI read (the read ledger, kept by core): the reads of the open note in its History tab, and in Settings the
// clients that read (the assistant, MCP clients, plugins), each opening to what it read.

import { api } from "./api";
import { describeError, el } from "./dom";
import type { LedgerClient, LedgerEntry } from "./generated";

const when = (millis: number): string => new Date(millis).toLocaleString();

/// Who read, in words.
export function reader(entry: { actor: string; client: string; chat?: string | null }): string {
  if (entry.actor === "assistant") return "the assistant";
  if (entry.actor === "plugin") return `plugin ${entry.client}`;
  return entry.client;
}

/// The reads, the latest first: when, who (unless `who` is false), what part, and of which note (when `notes`).
export function ledgerList(entries: LedgerEntry[], { who = true, notes = false } = {}): HTMLElement {
  if (!entries.length) return el("p", { class: "hint", text: "No AI has read this yet." });
  const list = el("ul", { class: "ledger" });
  for (const entry of entries) {
    const times = entry.reads > 1 ? ` (${entry.reads} times)` : "";
    const part = entry.attachment_id ? `${entry.part} of an attachment` : entry.part;
    const of = notes ? ` of “${entry.title}”` : "";
    list.append(
      el(
        "li",
        {},
        el("span", { class: "who", text: `${when(entry.first_at)}${who ? ` · ${reader(entry)}` : ""}` }),
        el("span", { text: `${part}${of}${times}` }),
      ),
    );
  }
  return list;
}

/// How often the open note's "What AI read" looks again while shown (reads are not news: nothing tells the page).
const FOLLOW_MS = 3000;

/// The open note's reads by AI, into `box`, looked at again while it is shown: a read by an AI client meanwhile (the
/// assistant's turn, an MCP client, an automation) appears without opening the tab again.
export async function noteLedger(box: HTMLElement, noteId: string, shown = "") {
  try {
    const { entries } = await api.ledger({ note_id: noteId });
    const now = JSON.stringify(entries.map((e) => [e.first_at, e.last_at, e.reads, e.client, e.part]));
    if (now !== shown) box.replaceChildren(ledgerList(entries));
    window.setTimeout(() => {
      if (box.isConnected && !box.closest("[hidden]")) void noteLedger(box, noteId, now);
    }, FOLLOW_MS);
  } catch (e) {
    box.replaceChildren(el("p", { class: "error", text: describeError(e) }));
  }
}

/// Settings' "What AI read": each client with how much it read and when last; opened, what it read.
export async function ledgerSettings(box: HTMLElement) {
  let clients: LedgerClient[];
  try {
    clients = (await api.ledger()).clients;
  } catch (e) {
    box.replaceChildren(el("p", { class: "error", text: describeError(e) }));
    return;
  }
  const rows = clients.map((client) => {
    const reads = `${client.notes} note${client.notes === 1 ? "" : "s"}, ${client.reads} read${client.reads === 1 ? "" : "s"}, last ${when(client.last_at)}`;
    const details = el("details", { class: "ledger-client" }, el("summary", {}, el("strong", { text: reader(client) }), ` ${reads}`));
    details.addEventListener("toggle", () => {
      if (!details.open || details.querySelector(".ledger, .hint, .error")) return;
      void api
        .ledger({ client: client.client })
        .then(({ entries }) => details.append(ledgerList(entries.filter((e) => e.actor === client.actor), { who: client.actor === "assistant", notes: true })))
        .catch((e) => details.append(el("p", { class: "error", text: describeError(e) })));
    });
    return details;
  });
  box.replaceChildren(
    ...(rows.length ? rows : [el("p", { class: "hint", text: "No AI has read any note yet." })]),
    el("p", {
      class: "hint",
      text: "Every read by the assistant, an MCP client (and the agents and automations that connect through one) or a plugin is recorded here, with the part it read; never the text. Kept 90 days, or as config.toml's [ledger] retention_days says.",
    }),
  );
}
