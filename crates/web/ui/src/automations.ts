// Automations in Settings: each automation (when it runs, what runs it, its latest run and next time) with Run now,
// Pause or Resume and Remove; the form that adds one; and the run log (what each run did, its review set, its tokens
// and cost). quire serve's scheduler runs them; an automation added in a terminal appears at the list's next look.

import { api } from "./api";
import { confirmDialog } from "./dialog";
import { describeError, el, followElsewhere } from "./dom";
import type { AutomationList, AutomationRun, AutomationView } from "./generated";

const when = (rfc3339: string): string => new Date(rfc3339).toLocaleString();

/// What a list shows, to tell whether it changed.
const signature = (list: AutomationList) =>
  JSON.stringify([list.automations.map((a) => [a.entry, a.next]), list.runs.map((r) => [r.id, r.status]), list.error]);

/// The Settings screen's Automations section.
export async function automationSettings(box: HTMLElement) {
  if (!box.firstChild) box.append(el("p", { class: "hint", text: "Loading…" }));
  try {
    const list = await api.automations();
    draw(box, list);
    // A run ended, an automation added in a terminal: drawn again.
    followElsewhere(box, signature(list), async () => signature(await api.automations()), () => void automationSettings(box));
  } catch (e) {
    box.replaceChildren(el("p", { class: "error", text: describeError(e) }));
  }
}

function draw(box: HTMLElement, list: AutomationList) {
  const redraw = () => void automationSettings(box);
  const cards = el("div", { class: "automation-list" });
  if (list.error) cards.append(el("p", { class: "error", text: list.error }));
  if (!list.automations.length && !list.error) {
    cards.append(
      el("p", {
        class: "hint",
        text: "No automation yet. An automation is a prompt that runs on a schedule or when notes change, with a model or an agent; what it writes waits in the review inbox.",
      }),
    );
  }
  for (const automation of list.automations) cards.append(card(automation, redraw));
  box.replaceChildren(cards, addForm(list, redraw), runLog(list.runs));
}

function runLine(run: AutomationRun): HTMLElement {
  const tokens = run.input_tokens != null && run.output_tokens != null ? ` · ${run.input_tokens + run.output_tokens} tokens` : "";
  const cost = run.cost != null ? ` · $${run.cost.toFixed(4)}` : "";
  const applied = run.change_set ? ` · applied (Recent changes undoes it)` : "";
  let review: HTMLElement | string = "";
  if (run.review_set != null) {
    const link = el("a", { href: "#", class: "automation-review", text: `review ${run.review_set}` });
    link.onclick = (e) => {
      e.preventDefault();
      document.dispatchEvent(new CustomEvent("quire:open-review", { detail: run.review_set }));
    };
    review = el("span", {}, " · ", link);
  }
  return el(
    "div",
    { class: `automation-run ${run.status}`, "data-run": String(run.id) },
    el("span", { class: "who", text: `${when(run.started_at)} · ${run.automation} · ${run.status} (${run.reason})${tokens}${cost}${applied}` }),
    review,
    el("p", { text: run.summary ?? (run.status === "running" ? "Running…" : "") }),
  );
}

function card(automation: AutomationView, changed: () => void): HTMLElement {
  const { entry } = automation;
  const problem = el("p", { class: "error", hidden: "" });
  const fail = (e: unknown) => {
    problem.textContent = describeError(e);
    problem.hidden = false;
  };
  const run = el("button", { type: "button", text: "Run now" });
  run.onclick = async () => {
    run.disabled = true;
    run.textContent = "Running…";
    problem.hidden = true;
    try {
      await api.runAutomation(entry.name);
      changed();
    } catch (e) {
      fail(e);
      run.disabled = false;
      run.textContent = "Run now";
    }
  };
  const pause = el("button", { type: "button", text: entry.enabled ? "Pause" : "Resume" });
  pause.onclick = async () => {
    try {
      await api.enableAutomation(entry.name, !entry.enabled);
      changed();
    } catch (e) {
      fail(e);
    }
  };
  const remove = el("button", { type: "button", class: "danger", text: "Remove" });
  remove.onclick = async () => {
    const sure = await confirmDialog(`Remove ${entry.name}?`, "Its entry leaves config.toml and its run log goes with it.", `Remove ${entry.name}`, true);
    if (!sure) return;
    try {
      await api.removeAutomation(entry.name);
      changed();
    } catch (e) {
      fail(e);
    }
  };
  const reach = entry.notebooks.length ? entry.notebooks.join(", ") : "all notebooks";
  const writes = entry.apply_writes ? "writes applied (each undoable)" : "writes wait for your review";
  return el(
    "section",
    { class: "automation", "data-automation": entry.name },
    el("h4", { text: entry.name }),
    el("p", { class: "hint", text: `${automation.when} · by ${automation.runner} · ${reach} · ${writes}` }),
    el("p", { class: "automation-prompt", text: entry.prompt }),
    automation.next ? el("p", { class: "hint", text: `Next: ${automation.next}` }) : "",
    automation.last_run ? runLine(automation.last_run) : el("p", { class: "hint", text: "It has not run yet." }),
    el("div", { class: "automation-actions" }, run, pause, remove),
    problem,
  );
}

function addForm(list: AutomationList, added: () => void): HTMLElement {
  const name = el("input", { id: "automation-name", required: "", maxlength: "60", placeholder: "Morning summary" });
  const prompt = el("textarea", { id: "automation-prompt", required: "", rows: "3", placeholder: "Summarise yesterday's new notes into today's daily note." });
  const runner = el(
    "select",
    { id: "automation-runner" },
    ...list.models.map((m, i) => el("option", { value: `model:${m}`, text: i === 0 ? `${m} (the default model)` : m })),
    ...list.agents.map((a) => el("option", { value: `agent:${a}`, text: `${a} (agent)` })),
  );
  const kind = el(
    "select",
    { id: "automation-kind" },
    el("option", { value: "schedule", text: "On a schedule" }),
    el("option", { value: "trigger", text: "When something happens" }),
    el("option", { value: "hand", text: "Only when I run it" }),
  );
  const when = el("input", { id: "automation-when", placeholder: "daily 07:30" });
  const notebooks = el("input", { id: "automation-notebooks", placeholder: "Inbox, Journal  (empty: all notebooks)" });
  const apply = el("input", { id: "automation-apply", type: "checkbox" });
  const hint = el("p", { class: "hint" });
  const explain = () => {
    when.hidden = kind.value === "hand";
    hint.textContent =
      kind.value === "schedule"
        ? "daily 07:30 · weekly monday 09:00 · every 6 hours · every 30 minutes (this computer's time)"
        : kind.value === "trigger"
          ? "note created · note changed · tag added #inbox · task due (at 08:00, or: task due at 07:00), in its notebooks"
          : "It runs from here (Run now), or from `quire automation run NAME`.";
    when.placeholder = kind.value === "trigger" ? "note created" : "daily 07:30";
  };
  kind.onchange = explain;
  explain();
  const problem = el("p", { class: "error", hidden: "" });
  const submit = el("button", { type: "submit", text: "Add automation" });
  const form = el(
    "form",
    { class: "automation-form", "aria-label": "Add an automation" },
    el("h4", { text: "Add an automation" }),
    el("label", { for: "automation-name", text: "Name" }),
    name,
    el("label", { for: "automation-prompt", text: "What it does (its prompt)" }),
    prompt,
    el("label", { for: "automation-runner", text: "Who runs it" }),
    runner,
    el("label", { for: "automation-kind", text: "When" }),
    kind,
    when,
    hint,
    el("label", { for: "automation-notebooks", text: "Notebooks it reaches" }),
    notebooks,
    el("label", {}, apply, " Apply its writes at once instead of waiting for my review"),
    submit,
    problem,
  );
  if (!list.models.length && !list.agents.length) {
    submit.disabled = true;
    problem.textContent = "Add a chat model (Assistant, above) or an agent (`quire agent add`) to run automations.";
    problem.hidden = false;
  }
  form.onsubmit = async (e) => {
    e.preventDefault();
    problem.hidden = true;
    const [by, who] = runner.value.split(/:(.*)/s);
    submit.disabled = true;
    try {
      await api.addAutomation({
        name: name.value.trim(),
        prompt: prompt.value,
        model: by === "model" && who !== list.models[0] ? who : null,
        agent: by === "agent" ? who : null,
        notebooks: notebooks.value.split(",").map((n) => n.trim()).filter(Boolean),
        schedule: kind.value === "schedule" ? when.value.trim() : null,
        trigger: kind.value === "trigger" ? when.value.trim() : null,
        wait_seconds: null,
        apply_writes: apply.checked,
        enabled: true,
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

function runLog(runs: AutomationRun[]): HTMLElement {
  return el(
    "details",
    { class: "automation-log" },
    el("summary", { text: `Run log (${runs.length} latest)` }),
    ...(runs.length ? runs.map(runLine) : [el("p", { class: "hint", text: "No run yet." })]),
  );
}
