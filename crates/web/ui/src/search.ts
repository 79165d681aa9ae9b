// The search box: a word search as you type (the last word as a prefix), or by meaning; its results show in the note
// list, and clearing it goes back to what the list showed before. A tag chip searches for its tag.
import { $ } from "./dom";
import type { SemanticModel } from "./semantic";
import type { Source, Store } from "./store";

/// How long typing in the search box pauses before the search runs.
const SEARCH_DELAY_MS = 300;

export class SearchBox {
  private timer: number | undefined;

  /// `show` puts a source in the note list.
  constructor(
    private readonly store: Store,
    private readonly semantic: SemanticModel,
    private readonly show: (source: Source) => Promise<void>,
  ) {
    $("search-form").onsubmit = (e) => {
      e.preventDefault();
      // Enter searches again even for the same words: new notes, or an attachment read since, may match now.
      this.search(true);
    };
    // Search as you type, once the typing pauses.
    $("search").addEventListener("input", () => {
      window.clearTimeout(this.timer);
      this.timer = window.setTimeout(() => this.search(), SEARCH_DELAY_MS);
    });
    $("semantic").onchange = () => {
      this.semantic.render();
      // The same words, searched the other way.
      if ($<HTMLInputElement>("search").value.trim()) this.search();
    };
    document.addEventListener("quire:search", (e) => {
      const query = (e as CustomEvent<{ query?: string }>).detail?.query;
      if (!query) return;
      $<HTMLInputElement>("search").value = query;
      this.search();
    });
  }

  /// Searches for what the box holds (the notebook list again when it is empty); nothing when it already shows that,
  /// unless `again`.
  search(again = false) {
    window.clearTimeout(this.timer);
    const semantic = $<HTMLInputElement>("semantic").checked;
    const query = semantic ? $<HTMLInputElement>("search").value.trim() : asYouType($<HTMLInputElement>("search").value);
    const s = this.store.source;
    if (query) {
      if (!again && s.kind === "search" && s.query === query && s.semantic === semantic) return;
      void this.show({ kind: "search", query, semantic });
    } else if (s.kind === "search") void this.show(this.store.beforeSearch);
  }
}

/// A word search as the box is typed in: the last word, while it is plain letters and digits, matches as a prefix
/// (`alph` finds "alpha"), as people expect of a search box; quoted phrases, `tag:` and other filters stay as typed.
export function asYouType(text: string): string {
  const query = text.trim();
  if (!query || /\s$/.test(text)) return query;
  const words = query.split(/\s+/);
  const last = words[words.length - 1];
  if (!/^[\p{L}\p{N}]{2,}$/u.test(last)) return query;
  words[words.length - 1] = `${last}*`;
  return words.join(" ");
}
