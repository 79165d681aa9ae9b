// Search by meaning's model: the "by meaning" switch says which one is in use, and when there is none the page
// offers to install one (downloaded by the server from the model's public repository, checked, then used).
import { api } from "./api";
import { $, describeError, el, status } from "./dom";
import type { SemanticSettings } from "./generated";

const mib = (bytes: number) => `${Math.round(bytes / (1024 * 1024))} MiB`;
const busy = (s: SemanticSettings | null) => s?.install?.state === "downloading" || s?.install?.state === "checking";

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
    const show = $<HTMLInputElement>("semantic").checked && (s.offer_install || busy(s) || s.install?.state === "failed");
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
    if (install?.state === "failed") {
      nodes.push(el("p", { class: "error", text: `Installing ${install.model} failed: ${install.error ?? "unknown error"}` }));
    }
    const model = s.catalog[0];
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
      nodes.push(button, el("p", { class: "hint", text: `${model.summary}. ${model.licence}; it runs on this computer, nothing is sent anywhere.` }));
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

  async install(name: string) {
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
    else if (install?.state === "failed") status(`Installing ${install.model} failed: ${install.error ?? ""}`, true);
  }
}
