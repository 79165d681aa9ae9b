// A plugin's question for the person (MCP elicitation), shown as a form under its call in the sidebar: one field per
// property of the question's schema (text, number, a yes/no box, a choice), and Send, Decline and Dismiss. The turn
// waits until it is answered (or ends).
import type { Question } from "./generated";
import { describeError, el } from "./dom";

type Property = { type?: string; title?: string; description?: string; enum?: unknown[]; default?: unknown };

/// What the person did with the question.
export type Action = "accept" | "decline" | "cancel";

/// The form for `question`; `answer` sends what the person chose (the values with `accept`).
export function questionForm(question: Question, answer: (action: Action, content?: Record<string, unknown>) => Promise<void>): HTMLElement {
  const schema = (question.schema ?? {}) as { properties?: Record<string, Property>; required?: string[] };
  const properties = Object.entries(schema.properties ?? {});
  const required = new Set(schema.required ?? []);
  const form = el("form", { class: "question", "aria-label": `A plugin asks: ${question.message}` });
  form.append(el("p", { class: "question-message", text: question.message }));
  const read: [string, () => unknown][] = [];
  for (const [name, property] of properties) {
    const label = property.title ?? name;
    const id = `q-${question.question_id}-${name}`.replace(/[^\w-]/g, "_");
    let input: HTMLInputElement | HTMLSelectElement;
    if (Array.isArray(property.enum)) {
      // The choices as the schema gives them (a number stays a number); an optional one can be left unchosen.
      const choices = property.enum;
      input = el("select", { id });
      if (!required.has(name)) input.append(el("option", { value: "", text: "(none)" }));
      choices.forEach((option, i) => input.append(el("option", { value: String(i), text: String(option) })));
      const chosen = choices.findIndex((c) => c === property.default);
      if (chosen >= 0) input.value = String(chosen);
      const select = input;
      read.push([name, () => (select.value === "" ? undefined : choices[Number(select.value)])]);
    } else if (property.type === "boolean") {
      input = el("input", { id, type: "checkbox" });
      input.checked = property.default === true;
      const box = input;
      read.push([name, () => box.checked]);
    } else {
      const numeric = property.type === "number" || property.type === "integer";
      input = el("input", { id, type: numeric ? "number" : "text" });
      if (property.type === "integer") input.step = "1";
      if (property.default !== undefined) input.value = String(property.default);
      if (required.has(name)) input.required = true;
      const field = input;
      // An optional field left empty is left out, as the schema allows, not sent as "".
      read.push([name, () => (field.value === "" ? undefined : numeric ? Number(field.value) : field.value)]);
    }
    const row = el("label", { for: id, text: label });
    form.append(el("div", { class: "question-field" }, row, input));
    if (property.description) form.append(el("p", { class: "question-help", text: property.description }));
  }
  const send = el("button", { type: "submit", text: properties.length ? "Send" : "Yes" });
  const decline = el("button", { type: "button", text: properties.length ? "Decline" : "No" });
  const dismiss = el("button", { type: "button", text: "Dismiss" });
  form.append(el("div", { class: "question-buttons" }, send, decline, dismiss));
  const done = async (action: Action, content?: Record<string, unknown>) => {
    send.disabled = decline.disabled = dismiss.disabled = true;
    try {
      await answer(action, content);
      const said = action === "accept" ? "Sent." : action === "decline" ? "Declined." : "Dismissed.";
      form.replaceChildren(el("p", { class: "question-message", text: question.message }), el("p", { text: said }));
    } catch (e) {
      send.disabled = decline.disabled = dismiss.disabled = false;
      form.append(el("p", { class: "error", text: describeError(e) }));
    }
  };
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (!form.reportValidity()) return;
    const values: Record<string, unknown> = {};
    for (const [name, value] of read) {
      const v = value();
      if (v !== undefined) values[name] = v;
    }
    void done("accept", values);
  });
  decline.onclick = () => void done("decline");
  dismiss.onclick = () => void done("cancel");
  return form;
}
