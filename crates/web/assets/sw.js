// quire's service worker: the app's shell (the page, its script and style, the pairing page, the icons) kept for
// when the server cannot be reached, and the phone's share sheet (Web Share Target). The notes themselves are kept
// by the page (offline.ts), which knows which it may keep; this worker never stores an API answer.
"use strict";

const SHELL = "quire-shell-v1";
const SHELL_FILES = [
  "/",
  "/assets/boot.js",
  "/assets/app.js",
  "/assets/math.js",
  "/assets/app.css",
  "/manifest.webmanifest",
  "/assets/icon.svg",
  "/assets/icon-192.png",
  "/pair",
  "/assets/pair.js",
];

self.addEventListener("install", (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(SHELL);
      // One at a time and each on its own: a file that fails (the page without a session) does not stop the rest.
      for (const url of SHELL_FILES) {
        try {
          const response = await fetch(url, { credentials: "same-origin", cache: "no-store" });
          if (response.ok) await cache.put(url, response);
        } catch {}
      }
      await self.skipWaiting();
    })(),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) if (name !== SHELL) await caches.delete(name);
      await self.clients.claim();
    })(),
  );
});

/// The network first, so that a new version of quire is used at once; the kept copy when the network fails.
async function shell(request, key) {
  const cache = await caches.open(SHELL);
  try {
    const response = await fetch(request);
    if (response.ok) await cache.put(key, response.clone());
    return response;
  } catch (e) {
    const kept = await cache.match(key);
    if (kept) return kept;
    throw e;
  }
}

/// A share from the phone's share sheet: kept in the browser's database for the page, which saves it as a note
/// (with the session's secret, which only the page has) as soon as it opens, or once the server is back.
async function share(request) {
  const form = await request.formData();
  const files = [];
  for (const file of form.getAll("files")) {
    if (file instanceof File && file.size > 0) files.push({ name: file.name, type: file.type, data: await file.arrayBuffer() });
  }
  const item = {
    title: String(form.get("title") || ""),
    text: String(form.get("text") || ""),
    url: String(form.get("url") || ""),
    files,
    at: Date.now(),
  };
  const db = await new Promise((resolve, reject) => {
    const open = indexedDB.open("quire-offline", 1);
    open.onupgradeneeded = () => {
      for (const store of ["kept", "queue", "shared"]) {
        if (!open.result.objectStoreNames.contains(store)) open.result.createObjectStore(store, store === "kept" ? undefined : { autoIncrement: true });
      }
    };
    open.onsuccess = () => resolve(open.result);
    open.onerror = () => reject(open.error);
  });
  await new Promise((resolve, reject) => {
    const tx = db.transaction("shared", "readwrite");
    tx.objectStore("shared").add(item);
    tx.oncomplete = resolve;
    tx.onerror = () => reject(tx.error);
  });
  db.close();
  return Response.redirect("/?shared=1", 303);
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.method === "POST" && url.pathname === "/share") {
    event.respondWith(share(request));
    return;
  }
  if (request.method !== "GET" || url.pathname.startsWith("/api/")) return;
  if (request.mode === "navigate" && url.pathname === "/") {
    // The address's query (`?token=`, `?shared=1`) is the server's business; offline, the page is the page.
    event.respondWith(url.search.includes("token=") ? fetch(request) : shell(request, "/"));
    return;
  }
  if (SHELL_FILES.includes(url.pathname)) event.respondWith(shell(request, url.pathname));
});
