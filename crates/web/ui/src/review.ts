// The Review inbox: what AI clients staged for the user instead of writing it (their writes are staged under
// `writes = "stage"`, a token made with --review, or a destructive call from a client that cannot ask). Each set
// shows its notes, each change as a diff with Accept and Reject; a note or a whole set is decided at once. Accepting
// merges onto what changed since (a change whose lines changed meanwhile is stale: it can only be rejected) and is
// one change set in the client's name, undone with the Undo the message offers.
import { api, type ReviewOutcome, type ReviewSet } from "./api";
import { $, attempt, describeError, el, status } from "./dom";

type Item = ReviewSet["items"][number];
type Hunk = Item["hunks"][number];

/// What the inbox asks of the other panes.
export interface ReviewNeeds {
  /// The open note, the tree, the list and the tags loaded again (accepted changes or their undo).
  afterChange(): Promise<void>;
}

export class ReviewInbox {
  private showDecided = false;
  /// Each set's view as last drawn, so news of a set that shows nothing new redraws nothing.
  private readonly drawn = new Map<number, string>();
  /// Each set's latest draw or read of it: a read of the server that a later one (or a decision here) overtook is
  /// dropped, so an older view never replaces a newer one.
  private readonly turns = new Map<number, number>();
  private nextTurn = 0;

  private take(id: number): number {
    const turn = ++this.nextTurn;
    this.turns.set(id, turn);
    return turn;
  }

  constructor(private readonly page: ReviewNeeds) {
    // Counted again when the server tells of a staged write or a decision, made anywhere (`Screens.reviewsChanged`).
    void this.count();
  }

  /// The top bar's button: how many changes wait, hidden when none do.
  async count() {
    try {
      const { sets } = await api.reviews();
      const waiting = sets.reduce((n, s) => n + s.pending, 0);
      const button = $("review-button");
      button.hidden = waiting === 0 && $("review").hidden;
      $("review-count").textContent = waiting ? String(waiting) : "";
      button.title = waiting ? `${waiting} change${waiting === 1 ? "" : "s"} from AI clients wait for your review` : "Nothing waits for review";
    } catch {
      // The count is a convenience: the next poll tries again.
    }
  }

  /// Fills the Review screen.
  async render(box: HTMLElement, close: HTMLElement) {
    const heading = el("h2", { text: "Review" });
    const hint = el("p", {
      class: "hint",
      text: "Changes AI clients staged for you instead of saving them. Nothing is saved until you accept it; what you accept is one change you can undo.",
    });
    // The box is about whole reviews: a review with changes still waiting shows its decided ones too, greyed, so that
    // what was decided in it stays in sight (ux-2 #16).
    const toggle = el(
      "label",
      { class: "inline", title: "A review with changes still waiting always shows the ones decided in it, greyed." },
      el("input", { type: "checkbox", id: "review-decided" }),
      " show reviews decided in full",
    );
    box.replaceChildren(close, heading, hint, toggle, el("p", { class: "hint", text: "Loading…" }));
    const checkbox = toggle.querySelector("input") as HTMLInputElement;
    checkbox.checked = this.showDecided;
    checkbox.onchange = () => {
      this.showDecided = checkbox.checked;
      void this.render(box, close);
    };
    try {
      const { sets } = await api.reviews(this.showDecided);
      const views = await Promise.all(sets.map((s) => api.review(s.id)));
      box.replaceChildren(close, heading, hint, toggle);
      if (!views.length) box.append(el("p", { class: "hint", id: "review-empty", text: "Nothing waits for review." }));
      for (const view of views) box.append(this.setView(view));
    } catch (e) {
      box.append(el("p", { class: "error", text: describeError(e) }));
    }
    void this.count();
  }

  /// News of these sets (a staged write, a decision or a dropped change, made here or anywhere): the count, and each
  /// set's section if the screen is shown and what the server has differs from what is drawn.
  async refresh(setIds: number[]) {
    void this.count();
    const box = $("review");
    if (box.hidden) return;
    for (const id of setIds) {
      const turn = this.take(id);
      let view: ReviewSet | null = null;
      try {
        view = await api.review(id);
      } catch {
        view = null; // Gone: the client put back everything it staged there.
      }
      if (this.turns.get(id) !== turn) continue;
      const section = box.querySelector(`[data-review="${id}"]`);
      if (!view) {
        section?.remove();
        this.drawn.delete(id);
      } else if (!section) {
        // A set decided elsewhere is not brought in unless decided ones are shown; one on screen stays, updated.
        if (!this.showDecided && view.pending === 0) continue;
        // Newest first: a new set goes above the others.
        const first = box.querySelector(".review-set");
        const drawn = this.setView(view);
        if (first) first.before(drawn);
        else box.append(drawn);
      } else if (this.drawn.get(id) !== JSON.stringify(view)) {
        section.replaceWith(this.setView(view));
      }
    }
    const empty = box.querySelector("#review-empty");
    const any = box.querySelector(".review-set");
    if (any) empty?.remove();
    else if (!empty) box.append(el("p", { class: "hint", id: "review-empty", text: "Nothing waits for review." }));
  }

  private setView(view: ReviewSet): HTMLElement {
    const set = view;
    this.drawn.set(set.id, JSON.stringify(view));
    const section = el("section", { class: "review-set", "data-review": String(set.id) });
    const counts = [`${set.pending} waiting`];
    if (set.accepted) counts.push(`${set.accepted} accepted`);
    if (set.rejected) counts.push(`${set.rejected} rejected`);
    const header = el(
      "div",
      { class: "review-head" },
      el("p", {}, el("strong", { text: `From ${set.client}` }), ` · ${new Date(set.updated).toLocaleString()} · ${counts.join(", ")} · review ${set.id}`),
    );
    if (set.pending) {
      // The changes shown, by id: a change the client stages after the page was drawn is not decided unseen.
      const all = view.items.flatMap((i) => i.hunks);
      header.append(
        el("span", { class: "review-actions" }, this.button("Accept all", view, true, { hunks: ids(all, true) }), this.button("Reject all", view, false, { hunks: ids(all, false) })),
      );
    }
    section.append(header);
    for (const item of view.items) section.append(this.itemView(view, item));
    return section;
  }

  private itemView(view: ReviewSet, item: Item): HTMLElement {
    const kind = item.kind === "note" ? "" : `${item.kind} `;
    const change = item.change === "created" ? " (new)" : item.change === "deleted" ? " (deleted)" : "";
    const box = el("div", { class: "review-item", "data-item": item.key }, el("h3", { text: `${kind}“${item.title}”${change}` }));
    if (item.hunks.some((h) => h.state === "pending" || h.state === "stale")) {
      const heading = box.querySelector("h3") as HTMLElement;
      // One pair of words per kind of change (ux-2 #28): a new note is accepted or rejected as a note.
      const created = item.change === "created";
      heading.append(this.button(created ? "Accept note" : "Accept all of it", view, true, { hunks: ids(item.hunks, true) }));
      heading.append(this.button(created ? "Reject note" : "Reject all of it", view, false, { hunks: ids(item.hunks, false) }));
    }
    for (const hunk of item.hunks) box.append(this.hunkView(view, item, hunk));
    return box;
  }

  private hunkView(view: ReviewSet, item: Item, hunk: Hunk): HTMLElement {
    const box = el("div", { class: `review-hunk ${hunk.state}`, "data-hunk": hunk.id });
    const states: Record<string, string> = {
      pending: "",
      stale: "Stale: this changed since the client wrote, so it can no longer be accepted",
      accepted: "Accepted",
      rejected: "Rejected",
      undone: "Accepted, then undone",
    };
    const line = el("div", { class: "review-what" }, el("span", { text: hunk.what }));
    if (states[hunk.state]) line.append(el("span", { class: `badge ${hunk.state}`, text: states[hunk.state] }));
    // A new note is decided whole, from its heading.
    const whole = item.change === "created" && item.kind === "note";
    if (!whole && (hunk.state === "pending" || hunk.state === "stale")) {
      if (hunk.state === "pending") line.append(this.button("Accept", view, true, { hunks: [hunk.id] }));
      line.append(this.button("Reject", view, false, { hunks: [hunk.id] }));
    }
    box.append(line);
    if (hunk.before !== null || hunk.after !== null) box.append(diffOf(hunk));
    return box;
  }

  private button(label: string, view: ReviewSet, accept: boolean, decision: { hunks?: string[]; items?: string[] }) {
    const button = el("button", { type: "button", text: label, class: accept ? "accept" : "reject" });
    button.onclick = () =>
      void attempt(async () => {
        button.disabled = true;
        const done = await api.decideReview(view.id, accept, decision);
        // What the decision answers is newer than any read of the set still on its way.
        this.take(view.id);
        this.told(done);
        const section = document.querySelector(`[data-review="${view.id}"]`);
        section?.replaceWith(this.setView(done.set));
        void this.count();
        if (done.accepted) await this.page.afterChange();
      });
    return button;
  }

  /// Says what a decision did, with an Undo for what was accepted.
  private told(done: ReviewOutcome) {
    const parts: string[] = [];
    if (done.accepted) parts.push(`Accepted ${done.accepted} change${done.accepted === 1 ? "" : "s"}.`);
    if (done.rejected) parts.push(`Rejected ${done.rejected} change${done.rejected === 1 ? "" : "s"}.`);
    if (done.stale.length) {
      parts.push(`${done.stale.length} could not be accepted: what they change changed since (marked stale; reject them or redo them by hand).`);
    }
    status(parts.join(" ") || "Nothing changed.", done.stale.length > 0 && !done.accepted);
    const changeSet = done.change_set_id;
    if (!changeSet) return;
    const undo = el("button", { type: "button", text: "Undo", id: "review-undo" });
    undo.onclick = () =>
      void attempt(async () => {
        await api.undo(changeSet);
        status("Undone: the accepted changes are taken back.");
        await this.page.afterChange();
      });
    $("status").append(" ", undo);
  }
}

/// The ids of the changes that can be accepted (waiting) or rejected (waiting or stale).
function ids(hunks: Hunk[], accept: boolean): string[] {
  return hunks.filter((h) => h.state === "pending" || (!accept && h.state === "stale")).map((h) => h.id);
}

/// A change as lines: what it was (−) and what it becomes (+), between the lines around it.
function diffOf(hunk: Hunk): HTMLElement {
  const box = el("pre", { class: "diff" });
  const lines = (text: string) => (text.endsWith("\n") ? text.slice(0, -1) : text).split("\n");
  if (hunk.context_before) box.append(el("span", { class: "diff-same", text: `  ${hunk.context_before}\n` }));
  if (hunk.before !== null) for (const l of lines(hunk.before)) box.append(el("span", { class: "diff-del", text: `− ${l}\n` }));
  if (hunk.after !== null) for (const l of lines(hunk.after)) box.append(el("span", { class: "diff-add", text: `+ ${l}\n` }));
  if (hunk.context_after) box.append(el("span", { class: "diff-same", text: `  ${hunk.context_after}\n` }));
  return box;
}
