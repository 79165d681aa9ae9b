// Small in-page dialogs instead of the browser's prompt() and confirm(): a name or a passphrase to type (or a place to
// pick), or a yes/no question. A dialog stays open on a refusal and says why inside it (an empty name, the server's message).
import { describeError, el, readable } from "./dom";

/// What `ask` asks for.
export interface Question {
  title: string;
  label: string;
  value?: string;
  /// A list to pick from instead of a text field: [value, label] pairs.
  choices?: [string, string][];
  confirm: string;
  /// Runs the change; a thrown error (or a returned message) keeps the dialog open and shows the message in it.
  submit: (value: string) => Promise<string | void>;
  /// Said when the field is left empty (an empty text is refused before `submit`).
  empty?: string;
  /// A passphrase: typed unseen, and taken as typed (not trimmed).
  secret?: boolean;
  /// A sentence said above the field.
  hint?: string;
}

/// Asks for a value and runs `submit` with it; resolves to whether it was done (false: cancelled).
export function ask(question: Question): Promise<boolean> {
  return new Promise((resolve) => {
    const id = `dialog-field-${Math.random().toString(36).slice(2)}`;
    const field = question.choices
      ? el("select", { id }, ...question.choices.map(([value, label]) => el("option", { value, text: label })))
      : question.secret
        ? el("input", { id, type: "password", autocomplete: "current-password" })
        : el("input", { id, type: "text", autocomplete: "off" });
    if (question.value !== undefined) field.value = question.value;
    const error = el("p", { class: "error dialog-error", role: "alert" });
    error.hidden = true;
    const ok = el("button", { type: "submit", text: question.confirm });
    const cancel = el("button", { type: "button", text: "Cancel" });
    const form = el(
      "form",
      { method: "dialog" },
      el("h2", { text: question.title }),
      ...(question.hint ? [el("p", { class: "hint", text: question.hint })] : []),
      el("label", { for: id, text: question.label }),
      field,
      error,
      el("div", { class: "dialog-buttons" }, ok, cancel),
    );
    const dialog = el("dialog", { class: "app-dialog", "aria-label": question.title }, form);
    let done = false;
    const close = (result: boolean) => {
      if (done) return;
      done = true;
      dialog.close();
      dialog.remove();
      resolve(result);
    };
    const refuse = (message: string) => {
      error.textContent = message;
      error.hidden = false;
      field.setAttribute("aria-invalid", "true");
      field.focus();
      if (question.secret && field instanceof HTMLInputElement) field.select();
    };
    form.onsubmit = async (e) => {
      e.preventDefault();
      const value = question.secret ? field.value : field.value.trim();
      if (!value && !question.choices) return refuse(question.empty ?? "Type a name first.");
      ok.disabled = true;
      try {
        const refusal = await question.submit(value);
        if (refusal) refuse(refusal);
        else close(true);
      } catch (e) {
        refuse(readable(describeError(e)));
      } finally {
        ok.disabled = false;
      }
    };
    cancel.onclick = () => close(false);
    dialog.addEventListener("cancel", () => close(false));
    document.body.append(dialog);
    dialog.showModal();
    field.focus();
    if (field instanceof HTMLInputElement) field.select();
  });
}

/// Asks a yes/no question; resolves to the answer.
export function confirmDialog(title: string, message: string, yes: string, danger = false): Promise<boolean> {
  return new Promise((resolve) => {
    const ok = el("button", { type: "button", class: danger ? "danger" : "", text: yes });
    const cancel = el("button", { type: "button", text: "Cancel" });
    const dialog = el(
      "dialog",
      { class: "app-dialog", "aria-label": title },
      el("h2", { text: title }),
      el("p", { text: message }),
      el("div", { class: "dialog-buttons" }, ok, cancel),
    );
    const close = (answer: boolean) => {
      dialog.close();
      dialog.remove();
      resolve(answer);
    };
    ok.onclick = () => close(true);
    cancel.onclick = () => close(false);
    dialog.addEventListener("cancel", (e) => {
      e.preventDefault();
      close(false);
    });
    document.body.append(dialog);
    dialog.showModal();
    cancel.focus();
  });
}
