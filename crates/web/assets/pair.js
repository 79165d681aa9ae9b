// The pairing page: trades the one-time code (from the address's fragment, or typed) for this device's cookie and
// its page's secret, keeps the secret where the app's page looks for it, and opens the app. Where the browser makes
// passkeys (a secure page reached by a name, not an IP address), a device just paired is offered one, a device
// already signed in may add one, and a device whose cookie is gone signs in again with its passkey.
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const form = $("pair-form");
  const input = $("pair-code");
  const button = $("pair-button");
  const status = $("pair-status");
  const given = new URLSearchParams(location.hash.slice(1)).get("code");
  if (given) {
    input.value = given;
    // The code leaves the address bar (and the history) at once.
    history.replaceState(null, "", location.pathname);
  }
  let secret = null;
  try {
    secret = localStorage.getItem("quire-session");
  } catch {
    // No storage: the app's page gets the secret in its address.
  }

  /// Whether this browser makes passkeys for this page: WebAuthn, a secure context, and a host name (browsers
  /// refuse a passkey for an IP address).
  const passkeys =
    !!window.PublicKeyCredential && window.isSecureContext && !/^[\d.]+$|^\[|:/.test(location.hostname);

  const b64 = (buffer) =>
    btoa(String.fromCharCode(...new Uint8Array(buffer))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  const unb64 = (text) => Uint8Array.from(atob(text.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));

  /// A JSON request to this server, with this device's page secret; the answer's body, or an Error with its words.
  async function call(path, method, body) {
    const headers = { "content-type": "application/json" };
    if (secret) headers["x-quire-session"] = secret;
    const response = await fetch(path, {
      method,
      credentials: "same-origin",
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer = await response.json().catch(() => null);
    if (!response.ok) {
      const error = new Error((answer && answer.error) || `The server answered ${response.status}.`);
      error.status = response.status;
      throw error;
    }
    return answer;
  }

  /// Words for a browser's refusal to make or use a passkey.
  function said(error) {
    // The browser's own words say which (cancelled, timed out, or passkeys refused on a page whose certificate it
    // does not trust).
    if (error && error.name === "NotAllowedError")
      return `No passkey was used: cancelled, too slow, or refused by this browser here${error.message ? ` (${error.message})` : ""}.`;
    if (error && error.name === "SecurityError")
      return `This browser makes no passkey for this address${error.message ? ` (${error.message})` : ""}: this device stays signed in with its pairing.`;
    if (error && error.name === "InvalidStateError") return "This device has a passkey for quire already.";
    if (error instanceof TypeError) return "The server cannot be reached: check that quire serve runs, then try again.";
    return (error && error.message) || "The passkey did not work.";
  }

  function openApp() {
    if (secret) {
      try {
        localStorage.setItem("quire-session", secret);
        location.replace("/");
        return;
      } catch {
        // Without storage the secret goes in the fragment; the app's page takes it from there.
      }
      location.replace(`/#session=${secret}`);
    } else {
      location.replace("/");
    }
  }

  /// Signed in (by a code or a passkey) as `body.name`: a passkey is offered where the browser makes them.
  function signedIn(body, how) {
    secret = body.secret;
    try {
      localStorage.setItem("quire-session", secret);
    } catch {
      // Kept in memory until the app opens.
    }
    if (passkeys && how === "code") {
      offer(`Paired as “${body.name}”.`);
      return;
    }
    status.textContent = `Signed in as “${body.name}”. Opening quire…`;
    openApp();
  }

  function offer(words) {
    status.textContent = words;
    form.hidden = true;
    $("pair-intro").hidden = true;
    $("passkey-signin").hidden = true;
    $("passkey-offer").hidden = false;
    $("passkey-add").focus();
  }

  async function pair() {
    const code = input.value.trim();
    if (!code) return;
    button.disabled = true;
    status.textContent = "Pairing…";
    try {
      signedIn(await call("/pair", "POST", { code }), "code");
    } catch (error) {
      status.textContent = said(error);
      button.disabled = false;
      input.focus();
    }
  }

  async function addPasskey() {
    const add = $("passkey-add");
    add.disabled = true;
    status.textContent = "Making a passkey…";
    try {
      const options = await call("/api/passkeys/options", "POST");
      options.challenge = unb64(options.challenge);
      options.user.id = unb64(options.user.id);
      options.excludeCredentials = options.excludeCredentials.map((c) => ({ ...c, id: unb64(c.id) }));
      const made = await navigator.credentials.create({ publicKey: options });
      await call("/api/passkeys", "POST", {
        id: b64(made.rawId),
        client_data_json: b64(made.response.clientDataJSON),
        attestation_object: b64(made.response.attestationObject),
      });
      status.textContent = "Passkey added: this device can sign in with it. Opening quire…";
      openApp();
    } catch (error) {
      status.textContent = said(error);
      add.disabled = false;
    }
  }

  async function signInWithPasskey() {
    const start = $("passkey-signin-button");
    start.disabled = true;
    status.textContent = "Waiting for the passkey…";
    try {
      const options = await call("/pair/passkey/options", "POST");
      options.challenge = unb64(options.challenge);
      const used = await navigator.credentials.get({ publicKey: options });
      const body = await call("/pair/passkey", "POST", {
        id: b64(used.rawId),
        client_data_json: b64(used.response.clientDataJSON),
        authenticator_data: b64(used.response.authenticatorData),
        signature: b64(used.response.signature),
      });
      signedIn(body, "passkey");
    } catch (error) {
      status.textContent = said(error);
      start.disabled = false;
    }
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    pair();
  });
  $("passkey-add").addEventListener("click", addPasskey);
  $("passkey-skip").addEventListener("click", openApp);
  $("passkey-signin-button").addEventListener("click", signInWithPasskey);

  if (given) {
    pair();
  } else if (passkeys) {
    // Signed in already (this browser has the device's cookie): the page offers a passkey; else it offers to sign in
    // with one.
    call("/api/passkeys", "GET")
      .then((now) => {
        if (!now.device) return;
        const count = now.passkeys === 1 ? "one passkey" : `${now.passkeys} passkeys`;
        offer(`This device is paired as “${now.device}”${now.passkeys ? `, with ${count}` : ""}.`);
        $("passkey-offer-title").textContent = now.passkeys ? "Add another passkey?" : "Add a passkey?";
      })
      .catch((error) => {
        // Not signed in: a passkey may sign it in. Any other failure (the server down, sign-ins waiting) is said.
        if (error.status === 401) $("passkey-signin").hidden = false;
        else status.textContent = said(error);
      });
  }
})();
