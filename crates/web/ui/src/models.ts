// The form that adds a chat model from the page (Settings, and the "Set up a model" card): name, provider:model, base
// URL and key. The server checks the model can be used and keeps it in its config.toml; the key is never sent back.
import { api } from "./api";
import { describeError, el, readable, status } from "./dom";

/// Models people commonly start with; the field takes any `provider:model`.
const EXAMPLES = ["ollama:qwen3", "openai:gpt-4.1-mini", "anthropic:claude-sonnet-4-5", "openai-compatible:local"];

/// How many forms were made: each form's ids are its own (the setup card's and Settings' can be shown at once).
let forms = 0;

/// A form that adds a model and then calls `added` (to reload the picker and the screen).
export function modelForm(added: () => void): HTMLElement {
  const n = ++forms;
  const id = (name: string) => `add-model-${n}-${name}`;
  const field = (name: string, label: string, input: HTMLInputElement, hint?: string) =>
    el(
      "div",
      { class: "form-row" },
      el("label", { for: id(name), text: label }),
      input,
      ...(hint ? [el("small", { class: "hint", text: hint })] : []),
    );
  const name = el("input", { id: id("name"), type: "text", autocomplete: "off", placeholder: "Local Qwen" });
  const model = el("input", { id: id("model"), type: "text", autocomplete: "off", list: id("examples"), placeholder: "ollama:qwen3" });
  const baseUrl = el("input", { id: id("base-url"), type: "url", autocomplete: "off", placeholder: "http://127.0.0.1:11434" });
  const key = el("input", { id: id("key"), type: "password", autocomplete: "off" });
  const error = el("p", { class: "error", role: "alert" });
  error.hidden = true;
  const save = el("button", { type: "submit", text: "Add the model" });
  const form = el(
    "form",
    { class: "model-form", "aria-label": "Add a chat model" },
    el("datalist", { id: id("examples") }, ...EXAMPLES.map((value) => el("option", { value }))),
    field("name", "Name", name, "What the model picker shows."),
    field("model", "Model", model, "provider:model: ollama, openai, anthropic, or openai-compatible for llama.cpp, vLLM, LM Studio or OpenRouter."),
    field("base-url", "Base URL (optional)", baseUrl, "Needed for openai-compatible servers; otherwise the provider's own."),
    field("key", "API key (optional)", key, "Kept by the server in its config.toml, readable by you only; never shown again here."),
    error,
    save,
  );
  form.onsubmit = async (e) => {
    e.preventDefault();
    const say = (message: string) => {
      error.textContent = readable(message);
      error.hidden = false;
    };
    if (!model.value.trim()) return say("Say which model: provider:model, such as ollama:qwen3.");
    save.disabled = true;
    try {
      const chosen = name.value.trim() || model.value.trim();
      await api.addModel({
        name: chosen,
        model: model.value.trim(),
        base_url: baseUrl.value.trim() || null,
        api_key: key.value || null,
      });
      key.value = "";
      status(`The assistant now offers ${chosen}.`);
      added();
    } catch (err) {
      say(describeError(err));
    } finally {
      save.disabled = false;
    }
  };
  return form;
}
