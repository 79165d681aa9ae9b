// Settings: setting up a passphrase and sync from the page, as `quire lock init` and `quire sync init` / `join` do in
// a terminal (which stays the way for scripts). The recovery key is shown once, and the dialog closes only when the
// person has typed its last group back. A passphrase travels in a request's body only; a WebDAV password or S3 keys
// are not typed here: quire serve takes them from its environment.
import { api, type LockState } from "./api";
import { confirmDialog } from "./dialog";
import { describeError, el, readable, status } from "./dom";

/// What the sections ask of the rest of the page.
export interface SetupNeeds {
  /// The lock changed (a passphrase set, or the workspace unlocked by joining): the top bar and the list follow.
  lockChanged(): Promise<void>;
  /// Sync started or stopped: the top bar's sync button follows.
  syncChanged(): void;
  /// Settings drawn again (a passphrase set changes what Sync says, a join sets the passphrase).
  redraw(): void;
}

/// The Passphrase section.
export async function passphraseSettings(box: HTMLElement, page: SetupNeeds) {
  let lock: LockState;
  try {
    lock = await api.lock();
  } catch (e) {
    box.replaceChildren(el("p", { class: "error", text: describeError(e) }));
    return;
  }
  if (lock.initialized) {
    box.replaceChildren(
      el("p", { text: "A passphrase is set: protected notes are sealed, encrypted in the workspace file, and open with it." }),
      el(
        "p",
        { class: "hint" },
        "Change it in a terminal with ",
        el("code", { text: "quire lock passwd" }),
        ", or set a new one with the recovery key with ",
        el("code", { text: "quire lock recover" }),
        ".",
      ),
    );
    return;
  }
  const button = el("button", { type: "button", id: "set-passphrase", text: "Set a passphrase…" });
  button.onclick = () => void setPassphrase(page);
  box.replaceChildren(
    el("p", { text: "No passphrase is set: protected notes are kept from the assistant and AI clients, but their text is not encrypted in the file." }),
    el("p", { class: "hint", text: "A passphrase seals them: their text, revisions and attachments are encrypted, and open only with it (or the recovery key you get now). Sync needs one too." }),
    button,
  );
}

/// Two fields for the new passphrase, then the recovery key, shown once.
async function setPassphrase(page: SetupNeeds) {
  const first = el("input", { id: "new-passphrase", type: "password", autocomplete: "new-password" });
  const again = el("input", { id: "new-passphrase-again", type: "password", autocomplete: "new-password" });
  const error = el("p", { class: "error dialog-error", role: "alert" });
  error.hidden = true;
  const ok = el("button", { type: "submit", text: "Set the passphrase" });
  const cancel = el("button", { type: "button", text: "Cancel" });
  const form = el(
    "form",
    { method: "dialog" },
    el("h2", { text: "Set a passphrase" }),
    el("p", { class: "hint", text: "At least 8 characters. Protected notes are sealed with it now." }),
    el("label", { for: "new-passphrase", text: "Passphrase" }),
    first,
    el("label", { for: "new-passphrase-again", text: "The same again" }),
    again,
    error,
    el("div", { class: "dialog-buttons" }, ok, cancel),
  );
  const dialog = el("dialog", { class: "app-dialog", "aria-label": "Set a passphrase" }, form);
  const close = () => {
    first.value = "";
    again.value = "";
    dialog.close();
    dialog.remove();
  };
  cancel.onclick = close;
  dialog.addEventListener("cancel", close);
  form.onsubmit = async (e) => {
    e.preventDefault();
    const refuse = (message: string) => {
      error.textContent = message;
      error.hidden = false;
      first.focus();
    };
    if (first.value !== again.value) return refuse("The two differ: type the same passphrase twice.");
    ok.disabled = true;
    ok.textContent = "Setting it…";
    try {
      const done = await api.initLock(first.value);
      close();
      await showRecoveryKey(done.recovery_key, done.file_rewritten);
      status(done.sealed_notes ? `Passphrase set; ${done.sealed_notes} protected note(s) sealed` : "Passphrase set");
      await page.lockChanged();
      page.redraw();
    } catch (e) {
      refuse(readable(describeError(e)));
    } finally {
      ok.disabled = false;
      ok.textContent = "Set the passphrase";
    }
  };
  document.body.append(dialog);
  dialog.showModal();
  first.focus();
}

/// The recovery key, once: the dialog closes when its last group is typed back (so it was written down).
function showRecoveryKey(key: string, rewritten: boolean): Promise<void> {
  return new Promise((resolve) => {
    const last = key.split("-").at(-1) ?? "";
    const field = el("input", { id: "recovery-check", type: "text", autocomplete: "off", spellcheck: "false" });
    const done = el("button", { type: "submit", text: "I wrote it down" });
    done.disabled = true;
    field.oninput = () => (done.disabled = field.value.trim().toLowerCase() !== last);
    const form = el(
      "form",
      { method: "dialog" },
      el("h2", { text: "Your recovery key" }),
      el(
        "p",
        {},
        "Write it down now and keep it apart from this computer: it is shown this once. If you forget the passphrase, it sets a new one (",
        el("code", { text: "quire lock recover" }),
        "). Without either, sealed notes are gone for good.",
      ),
      el("pre", { class: "recovery-key", id: "recovery-key", text: key }),
      ...(rewritten ? [] : [el("p", { class: "hint", text: "Another quire process was using the workspace file, so it was not rewritten: text an older quire deleted may stay in its free space until it is reused. Stop the other process (quire mcp, chat) before copying the file anywhere." })]),
      el("label", { for: "recovery-check", text: "To confirm, type its last group" }),
      field,
      el("div", { class: "dialog-buttons" }, done),
    );
    const dialog = el("dialog", { class: "app-dialog", "aria-label": "Your recovery key" }, form);
    // Not closed by Escape: the key would be gone unseen.
    dialog.addEventListener("cancel", (e) => e.preventDefault());
    form.onsubmit = (e) => {
      e.preventDefault();
      if (done.disabled) return;
      dialog.close();
      dialog.remove();
      resolve();
    };
    document.body.append(dialog);
    dialog.showModal();
    field.focus();
  });
}

/// The Sync section: where it stands, and starting, joining or stopping.
export async function syncSettings(box: HTMLElement, page: SetupNeeds) {
  let settings;
  try {
    settings = await api.syncSettings();
  } catch (e) {
    box.replaceChildren(el("p", { class: "error", text: describeError(e) }));
    return;
  }
  const said = settings.done ? [el("p", { class: "hint", role: "status", text: settings.done })] : [];
  if (settings.syncing) {
    const leave = el("button", { type: "button", id: "sync-leave", text: "Stop syncing…" });
    leave.onclick = async () => {
      if (!(await confirmDialog("Stop syncing?", "This device stops syncing; its notes stay as they are, and the other devices go on. You can join again later.", "Stop syncing"))) return;
      try {
        await api.leaveSync();
        page.syncChanged();
        page.redraw();
        status("Stopped syncing");
      } catch (e) {
        status(describeError(e), true);
      }
    };
    box.replaceChildren(
      el("p", { id: "sync-summary", text: `This device, “${settings.name}”, syncs with ${settings.target}.` }),
      el("p", { class: "hint", text: settings.devices.length ? `Other devices: ${settings.devices.join(", ")}.` : "No other device has synced there yet." }),
      ...(settings.last_error ? [el("p", { class: "error", text: `Last problem: ${settings.last_error}` })] : []),
      leave,
    );
    return;
  }
  const target = el("input", { id: "sync-target", type: "text", autocomplete: "off", placeholder: "/path/to/a/shared/folder" });
  const name = el("input", { id: "sync-name", type: "text", autocomplete: "off", placeholder: settings.host_name });
  const passphrase = el("input", { id: "sync-passphrase", type: "password", autocomplete: "current-password" });
  // A remote target's password or keys, asked for when the target is one (never shown again once kept).
  const davPassword = el("input", { id: "sync-webdav-password", type: "password", autocomplete: "off" });
  const s3Key = el("input", { id: "sync-s3-key", type: "text", autocomplete: "off", spellcheck: "false" });
  const s3Secret = el("input", { id: "sync-s3-secret", type: "password", autocomplete: "off" });
  const s3Region = el("input", { id: "sync-s3-region", type: "text", autocomplete: "off", placeholder: "us-east-1" });
  const s3Endpoint = el("input", { id: "sync-s3-endpoint", type: "text", autocomplete: "off", placeholder: "https://… (R2, MinIO, Garage; empty for AWS)" });
  const kept = el("p", { class: "hint", text: "Kept by quire serve in sync-credentials.json of its configuration folder, readable by you only, where quire sync finds them too; never shown again here. Variables in quire's environment (QUIRE_WEBDAV_PASSWORD, AWS_ACCESS_KEY_ID, …) come first." });
  const dav = el("div", { id: "sync-webdav", class: "credentials" }, el("label", { for: "sync-webdav-password", text: "WebDAV password (the user goes in the address: webdav://me@host/…)" }), davPassword);
  const s3 = el(
    "div",
    { id: "sync-s3", class: "credentials" },
    el("label", { for: "sync-s3-key", text: "Access key id" }),
    s3Key,
    el("label", { for: "sync-s3-secret", text: "Secret access key" }),
    s3Secret,
    el("label", { for: "sync-s3-region", text: "Region (optional)" }),
    s3Region,
    el("label", { for: "sync-s3-endpoint", text: "Endpoint (optional)" }),
    s3Endpoint,
  );
  const showCredentials = () => {
    const kind = target.value.trim().toLowerCase();
    dav.hidden = !kind.startsWith("webdav");
    s3.hidden = !kind.startsWith("s3://");
    kept.hidden = dav.hidden && s3.hidden;
  };
  target.oninput = showCredentials;
  showCredentials();
  const credentials = () => {
    const kind = target.value.trim().toLowerCase();
    if (kind.startsWith("webdav")) return { webdav_password: davPassword.value };
    if (kind.startsWith("s3://")) {
      return { s3_access_key_id: s3Key.value, s3_secret_access_key: s3Secret.value, s3_region: s3Region.value, s3_endpoint: s3Endpoint.value };
    }
    return {};
  };
  const error = el("p", { class: "error", role: "alert" });
  error.hidden = true;
  const start = el("button", { type: "button", id: "sync-start", text: "Start syncing" });
  const join = el("button", { type: "button", id: "sync-join", text: "Join" });
  const run = async (action: "init" | "join", button: HTMLButtonElement) => {
    error.hidden = true;
    const label = button.textContent ?? "";
    button.disabled = true;
    button.textContent = action === "init" ? "Starting…" : "Joining…";
    try {
      const done = await api.setUpSync({ action, target: target.value, name: name.value, passphrase: passphrase.value, credentials: credentials() });
      passphrase.value = "";
      davPassword.value = "";
      s3Secret.value = "";
      if (action === "join" && !settings.passphrase_set) await page.lockChanged();
      page.syncChanged();
      status(done.done ?? "Syncing");
      page.redraw();
    } catch (e) {
      error.textContent = readable(describeError(e));
      error.hidden = false;
    } finally {
      button.disabled = false;
      button.textContent = label;
    }
  };
  start.onclick = () => void run("init", start);
  join.onclick = () => void run("join", join);
  box.replaceChildren(
    ...said,
    el("p", { text: "This workspace does not sync. Start with a new target (a folder a file-sync tool shares, or a WebDAV or S3 address), or join the one another device of yours syncs with." }),
    el("label", { for: "sync-target", text: "Target" }),
    target,
    dav,
    s3,
    kept,
    el("label", { for: "sync-name", text: "This device's name" }),
    name,
    ...(settings.passphrase_set
      ? []
      : [el("label", { for: "sync-passphrase", text: "To join: the passphrase of the workspace that syncs there" }), passphrase]),
    error,
    el("div", { class: "dialog-buttons" }, start, join),
    el("p", {
      class: "hint",
      text: `${settings.passphrase_set ? "" : "Starting needs a passphrase set above. "}A folder: its whole path. WebDAV: webdav://user@host/path (webdav+http:// for a server without TLS). S3: s3://bucket/prefix.`,
    }),
  );
}
