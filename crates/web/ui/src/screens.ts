// The note pane's other screens, shown in place of the note: Recent changes (what anyone changed, undoable), Review
// (what AI clients staged for the user) and Settings (search by meaning's model, the assistant's models and the form
// that adds one, plugins).
import { api } from "./api";
import { $, describeError, el } from "./dom";
import { changeSetList } from "./history";
import { agentSettings } from "./agents";
import { automationSettings } from "./automations";
import { ledgerSettings } from "./ledger";
import { modelForm } from "./models";
import { deviceSettings } from "./devices";
import { deviceIs, isDevice } from "./offline";
import { pluginSettings } from "./plugins";
import { ReviewInbox } from "./review";
import { passphraseSettings, syncSettings } from "./setup";
import type { SemanticModel } from "./semantic";
import type { Store } from "./store";

/// What the screens ask of the other panes.
export interface ScreenNeeds {
  /// Saves the open note's typing first.
  saveNow(): Promise<void>;
  /// What reloads after an undo.
  afterUndo(): Promise<void>;
  /// The assistant's model picker loaded again (a model was added).
  loadModels(): Promise<void>;
  /// The lock changed from Settings (a passphrase set, or unlocked by joining a sync): the top bar and the list follow.
  lockChanged(): Promise<void>;
  /// Shows the note pane, where the screens are (on a phone the other panes hide it).
  showNotePane(): void;
}

export class Screens {
  private readonly review: ReviewInbox;
  private recentClose: HTMLButtonElement | null = null;

  constructor(
    private readonly store: Store,
    private readonly semantic: SemanticModel,
    private readonly page: ScreenNeeds,
  ) {
    $("recent-button").onclick = () => void this.showRecent();
    $("settings-button").onclick = () => void this.showSettings();
    this.review = new ReviewInbox({ afterChange: () => this.page.afterUndo() });
    $("review-button").onclick = () => void this.showReview();
    // A run's review set, from the automations in Settings.
    document.addEventListener("quire:open-review", () => void this.showReview());
  }

  /// Shows one of the note pane's screens (recent changes, settings) in place of the note; returns it and a button
  /// that brings the note back.
  private async showScreen(id: "recent" | "settings" | "review"): Promise<[HTMLElement, HTMLButtonElement]> {
    await this.page.saveNow();
    // On a phone, Settings or Recent changes pressed from the list or the assistant shows where it opens.
    this.page.showNotePane();
    const box = $(id);
    for (const other of ["note", "empty", "recent", "settings", "review"]) if (other !== id) $(other).hidden = true;
    box.hidden = false;
    const close = el("button", { type: "button", text: this.store.open ? "Back to the note" : "Close" });
    close.onclick = () => {
      box.hidden = true;
      if (this.store.open) $("note").hidden = false;
      else $("empty").hidden = false;
      if (id === "review") void this.review.count();
    };
    return [box, close];
  }

  async showReview() {
    const [box, close] = await this.showScreen("review");
    await this.review.render(box, close);
  }

  /// A staged write, a decision or a dropped change anywhere: the count, and the Review screen if it is shown.
  async reviewsChanged(setIds: number[]) {
    await this.review.refresh(setIds);
  }

  /// A write anywhere: the Recent changes screen again if it is shown.
  async changesWritten() {
    if (!$("recent").hidden) await this.fillRecent();
  }

  async showRecent() {
    const [box, close] = await this.showScreen("recent");
    this.recentClose = close;
    box.replaceChildren(el("h2", { text: "Recent changes" }), el("p", { class: "hint", text: "Loading…" }));
    await this.fillRecent();
  }

  /// The Recent changes screen's list, from the server.
  private async fillRecent() {
    const box = $("recent");
    const close = this.recentClose;
    if (!close) return;
    try {
      const { change_sets } = await api.history();
      box.replaceChildren(
        el("h2", { text: "Recent changes" }),
        el("p", { class: "hint", text: "What you, the assistant and AI clients changed, newest first. Undo takes a whole turn back." }),
        changeSetList(change_sets, () => void this.page.afterUndo()),
      );
      box.prepend(close);
    } catch (e) {
      box.append(el("p", { class: "error", text: describeError(e) }));
    }
  }

  async showSettings() {
    const [box, close] = await this.showScreen("settings");
    const assistant = el("div", {}, el("p", { class: "hint", text: "Loading…" }));
    const plugins = el("div", { id: "plugin-settings" });
    const passphrase = el("div", { id: "passphrase-settings" });
    const sync = el("div", { id: "sync-settings" });
    const devices = el("div", { id: "device-settings" });
    const ledger = el("div", { id: "ledger-settings" });
    const automations = el("div", { id: "automation-settings" });
    const agents = el("div", { id: "agent-settings" });
    const setup = {
      lockChanged: () => this.page.lockChanged(),
      syncChanged: () => document.dispatchEvent(new Event("quire:sync")),
      redraw: () => void this.showSettings(),
    };
    if (isDevice()) {
      // A paired device changes none of the server's settings (the server refuses it): it is told what it is.
      box.replaceChildren(
        close,
        el("h2", { text: "Settings" }),
        el("p", {
          text: `This device is paired with the quire on your computer${deviceIs("limited") ? ", for some notebooks" : ""}${deviceIs("read-only") ? ", to read only" : ""}. Its settings (sync, models, plugins, the passphrase, devices) are changed there.`,
        }),
        el("p", { class: "hint", text: "This device keeps the note lists and the notes you opened last, to open without the server; protected notes are never kept." }),
        el("p", {}, el("a", { id: "device-passkeys", href: "/pair", text: "Passkeys" }), ": sign this device in again without a new code (where the browser makes them)."),
      );
      return;
    }
    box.replaceChildren(
      close,
      el("h2", { text: "Settings" }),
      el("h3", { text: "Passphrase" }),
      passphrase,
      el("h3", { text: "Sync between your devices" }),
      sync,
      el("h3", { text: "Your phone and other devices" }),
      devices,
      el("h3", { text: "Search by meaning" }),
      el("div", { id: "semantic-panel" }),
      el("h3", { text: "Assistant" }),
      assistant,
      el("h3", { text: "Plugins" }),
      plugins,
      el("h3", { text: "External agents (ACP)" }),
      agents,
      el("h3", { text: "Automations" }),
      automations,
      el("h3", { text: "What AI read" }),
      ledger,
    );
    void ledgerSettings(ledger);
    void automationSettings(automations);
    void agentSettings(agents);
    void pluginSettings(plugins);
    void passphraseSettings(passphrase, setup);
    void syncSettings(sync, setup);
    void deviceSettings(devices);
    this.semantic.render();
    void this.semantic.load();
    try {
      const settings = await api.settings();
      const added = () => {
        void this.page.loadModels();
        void this.showSettings();
      };
      assistant.replaceChildren(
        settings.models.length
          ? el("ul", {}, ...settings.models.map((m) => el("li", { text: `${m.name}${m.name === m.model ? "" : ` (${m.model})`}${m.is_default ? ", the default" : ""}` })))
          : el("p", { text: settings.setup_hint ?? "No model is configured." }),
        ...(settings.can_add_models ? [el("h4", { text: "Add a model" }), modelForm(added)] : []),
        el("p", {
          class: "hint",
          text: "Models are kept in quire's config.toml ([chat] and [[chat.models]]); one added here is offered at once, and quire chat offers it too. A change made to the file by hand counts once quire serve is started again.",
        }),
      );
    } catch (e) {
      assistant.replaceChildren(el("p", { class: "error", text: describeError(e) }));
    }
  }
}
