// Search by meaning's model: the "by meaning" switch says which one is in use, and when there is none the page
// offers to install one (downloaded by the server from the model's public repository, checked, then used). When the
// download cannot reach the network, it says so and offers to keep the built-in search, which the page remembers.
import { api } from "./api";
import { $, describeError, el, status } from "./dom";
import type { SemanticSettings } from "./generated";

const mib = (bytes: number) => `${Math.round(bytes / (1024 * 1024))} MiB`;
const busy = (s: SemanticSettings | null) => s?.install?.state === "downloading" || s?.install?.state === "checking";
/// Whether an install failed because the download site could not be reached (quire-embed's `InstallError::Offline`).
const offline = (error: string | null | undefined) => /cannot reach|network connection|dns error|error sending request/i.test(error ?? "");
/// Where the page remembers that the user keeps the built-in search (no more install offers under the search box).
const KEEP_BUILTIN = "quire-keep-builtin-search";

function keepsBuiltin(): boolean {
  try {
    return localStorage.getItem(KEEP_BUILTIN) === "yes";
  } catch {
    return false;
  }
}

export class SemanticModel {
  settings: SemanticSettings | null = null;
  private polling = false;

  async load() {
    try {
      this.settings = await api.semantic();
    } catch (e) {
      status(`The search settings could not be loaded: ${describeError(e)}`, true);
    }
    this.render();
  }

  /// Whether a search by meaning finds paraphrases (a sentence model is in use).
  hasModel(): boolean {
    return !!this.settings && !this.settings.builtin && !this.settings.offer_install;
  }

  render() {
    const s = this.settings;
    if (!s) return;
    $("semantic-label").title = `Search by meaning uses ${s.uses}.`;
    const offer = $("semantic-offer");
    const show =
      $<HTMLInputElement>("semantic").checked && (busy(s) || (!keepsBuiltin() && (s.offer_install || s.install?.state === "failed")));
    offer.hidden = !show;
    if (show) offer.replaceChildren(...this.offerContent(true));
    const panel = document.getElementById("semantic-panel");
    if (panel) panel.replaceChildren(...this.panelContent());
  }

  /// The install offer, or the progress of the install, or why it failed.
  private offerContent(short: boolean): Node[] {
    const s = this.settings;
    if (!s) return [];
    const install = s.install;
    if (install && busy(s)) {
      const bar = el("progress", { max: String(install.total), value: String(install.done), "aria-label": `Installing ${install.model}` });
      const text =
        install.state === "checking"
          ? `Checking ${install.model}…`
          : `Downloading ${install.model}: ${mib(install.done)} of ${mib(install.total)}`;
      return [el("p", { text }), bar];
    }
    const nodes: Node[] = [];
    const model = s.catalog[0];
    if (install?.state === "failed") {
      nodes.push(el("p", { class: "error", text: failure(install.model, install.error) }));
      if (s.offer_install) {
        nodes.push(el("p", { text: "Search by meaning keeps working with the built-in option, which matches words rather than meaning." }));
        const retry = el("button", { type: "button", text: "Try again" });
        retry.onclick = () => void this.install(install.model);
        const keep = el("button", { type: "button", class: "primary", text: "Keep the built-in search" });
        keep.onclick = () => this.keepBuiltin();
        nodes.push(el("div", { class: "offer-buttons" }, keep, retry));
      }
      return nodes;
    }
    if (s.offer_install && model) {
      nodes.push(
        el("p", {
          text: short
            ? "Search by meaning has no sentence model: it matches words, not meaning."
            : `Search by meaning uses ${s.uses}.`,
        }),
      );
      const button = el("button", { type: "button", class: "primary", text: `Install ${model.name} (${mib(model.size)})` });
      button.onclick = () => void this.install(model.name);
      const keep = el("button", { type: "button", text: "Keep the built-in search" });
      keep.onclick = () => this.keepBuiltin();
      nodes.push(
        el("div", { class: "offer-buttons" }, button, ...(short ? [keep] : [])),
        el("p", {
          class: "hint",
          text: `${model.summary}. ${model.licence}. It is downloaded once, which needs a network connection; then it runs on this computer and nothing is sent anywhere.`,
        }),
      );
    }
    return nodes;
  }

  private panelContent(): Node[] {
    const s = this.settings;
    if (!s) return [el("p", { class: "hint", text: "Loading…" })];
    const nodes: Node[] = [el("p", { text: `Search by meaning uses ${s.uses}.` })];
    if (busy(s) || s.install?.state === "failed") nodes.push(...this.offerContent(false));
    const rows = s.catalog.map((m) => {
      const active = s.active === m.name && m.installed;
      const cell = el("td");
      if (active) cell.append("in use");
      else if (s.can_install && !busy(s)) {
        const button = el("button", { type: "button", text: m.installed ? "Use" : "Install and use" });
        button.onclick = () => void this.install(m.name);
        cell.append(button);
      } else cell.append(m.installed ? "installed" : "not installed");
      return el(
        "tr",
        {},
        el("td", {}, el("strong", { text: m.name }), el("br"), el("span", { class: "hint", text: m.summary })),
        el("td", { text: mib(m.size) }),
        el("td", { text: m.licence }),
        cell,
      );
    });
    nodes.push(
      el(
        "table",
        { class: "catalog" },
        el("thead", {}, el("tr", {}, el("th", { text: "Model" }), el("th", { text: "Size" }), el("th", { text: "Licence" }), el("th", { text: "" }))),
        el("tbody", {}, ...rows),
      ),
    );
    if (!s.can_install) nodes.push(el("p", { class: "hint", text: "Install models from the terminal: quire model install" }));
    return nodes;
  }

  /// The user keeps the built-in search: no install offer under the search box any more (Settings still lists the
  /// models).
  keepBuiltin() {
    try {
      localStorage.setItem(KEEP_BUILTIN, "yes");
    } catch {
      // Without storage the offer only goes for this page.
    }
    $("semantic-offer").hidden = true;
    status("Search by meaning uses the built-in option; Settings can install a sentence model later.");
  }

  async install(name: string) {
    try {
      localStorage.removeItem(KEEP_BUILTIN);
    } catch {
      // Nothing remembered.
    }
    try {
      this.settings = await api.installModel(name);
    } catch (e) {
      status(describeError(e), true);
    }
    this.render();
    void this.poll();
  }

  private async poll() {
    if (this.polling) return;
    this.polling = true;
    try {
      while (busy(this.settings)) {
        await new Promise((resolve) => window.setTimeout(resolve, 400));
        this.settings = await api.semantic();
        this.render();
      }
    } catch (e) {
      status(describeError(e), true);
    } finally {
      this.polling = false;
    }
    const install = this.settings?.install;
    if (install?.state === "done") status(`Search by meaning now uses ${install.model}; your notes are embedded in the background.`);
    else if (install?.state === "failed") status(failure(install.model, install.error), true);
  }
}

/// Why an install failed, in words for the page: no network said plainly, without the terminal's advice.
function failure(model: string, error: string | null | undefined): string {
  if (offline(error)) return `${model} could not be downloaded: there is no network connection (its download site cannot be reached).`;
  return `Installing ${model} failed: ${error ?? "for an unknown reason"}.`.replace(/\.\.$/, ".");
}
