// The first page of quire's web app: the notes at the top level, read through the JSON API with the session cookie.
"use strict";
(async () => {
  const status = document.getElementById("status");
  const list = document.getElementById("notes");
  try {
    const response = await fetch("/api/notes", { credentials: "same-origin" });
    const page = await response.json();
    if (!response.ok) {
      status.textContent = page.error || "The notes could not be loaded.";
      return;
    }
    status.textContent = `${page.total} note${page.total === 1 ? "" : "s"} at the top level`;
    for (const note of page.notes) {
      const item = document.createElement("li");
      item.textContent = note.title;
      list.append(item);
    }
  } catch (error) {
    status.textContent = `The notes could not be loaded: ${error}`;
  }
})();
