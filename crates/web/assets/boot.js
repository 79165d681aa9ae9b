// The page's first requests, sent while the app's script is still on its way (on a phone on a slow network, that is
// most of the wait): the answers are kept as they come, and api.ts takes each the first time the app asks for it
// (`quireEarly`). Each is a GET the app makes at start anyway, with the session's secret as api.ts sends it.
"use strict";
(() => {
  let secret = "";
  try {
    secret = new URLSearchParams(location.hash.slice(1)).get("session") ?? localStorage.getItem("quire-session") ?? "";
  } catch {}
  if (!secret) return;
  const first = ["/lock", "/notebooks", "/tags", "/settings", "/semantic", "/plugins", "/sync", "/reviews", "/notes?notebook_id=_root&offset=0&sort=updated&limit=100"];
  const early = new Map();
  for (const path of first) {
    const answer = fetch(`/api${path}`, { credentials: "same-origin", headers: { "x-quire-session": secret } });
    // Offline, the app asks again and takes what the device kept; nothing is reported here.
    answer.catch(() => {});
    early.set(path, answer);
  }
  window.quireEarly = early;
})();
