// The pairing page: trades the one-time code (from the address's fragment, or typed) for this device's cookie and
// its page's secret, keeps the secret where the app's page looks for it, and opens the app.
"use strict";
(() => {
  const form = document.getElementById("pair-form");
  const input = document.getElementById("pair-code");
  const button = document.getElementById("pair-button");
  const status = document.getElementById("pair-status");
  const given = new URLSearchParams(location.hash.slice(1)).get("code");
  if (given) {
    input.value = given;
    // The code leaves the address bar (and the history) at once.
    history.replaceState(null, "", location.pathname);
  }
  async function pair() {
    const code = input.value.trim();
    if (!code) return;
    button.disabled = true;
    status.textContent = "Pairing…";
    try {
      const response = await fetch("/pair", {
        method: "POST",
        credentials: "same-origin",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ code }),
      });
      const body = await response.json().catch(() => null);
      if (!response.ok) {
        status.textContent = (body && body.error) || `The server answered ${response.status}.`;
        button.disabled = false;
        input.focus();
        return;
      }
      try {
        localStorage.setItem("quire-session", body.secret);
        location.replace("/");
      } catch {
        // Without storage the secret goes in the fragment; the app's page takes it from there.
        location.replace(`/#session=${body.secret}`);
      }
      status.textContent = `Paired as “${body.name}”. Opening quire…`;
    } catch {
      status.textContent = "The server cannot be reached: check that quire serve runs, then try again.";
      button.disabled = false;
    }
  }
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    pair();
  });
  if (given) pair();
})();
