// A line diff (longest common subsequence) for the history view, and a word diff for proposed edits; notes are short
// enough for the quadratic table, and past a size the middle is shown as replaced rather than computed.
export interface DiffLine {
  kind: "same" | "add" | "del";
  text: string;
}

const MAX_CELLS = 4_000_000;

export function lineDiff(before: string, after: string): DiffLine[] {
  // A final newline is not a line of its own.
  const lines = (text: string) => (text.endsWith("\n") ? text.slice(0, -1) : text).split("\n");
  const a = lines(before);
  const b = lines(after);
  // Common head and tail cost nothing.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  const out: DiffLine[] = a.slice(0, head).map((text) => ({ kind: "same", text }));
  if (midA.length * midB.length > MAX_CELLS) {
    out.push(...midA.map((text) => ({ kind: "del" as const, text })), ...midB.map((text) => ({ kind: "add" as const, text })));
  } else {
    const n = midA.length;
    const m = midB.length;
    const table = new Uint32Array((n + 1) * (m + 1));
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        table[i * (m + 1) + j] =
          midA[i] === midB[j] ? table[(i + 1) * (m + 1) + j + 1] + 1 : Math.max(table[(i + 1) * (m + 1) + j], table[i * (m + 1) + j + 1]);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && midA[i] === midB[j]) {
        out.push({ kind: "same", text: midA[i] });
        i++;
        j++;
      } else if (j < m && (i === n || table[i * (m + 1) + j + 1] >= table[(i + 1) * (m + 1) + j])) {
        out.push({ kind: "add", text: midB[j++] });
      } else {
        out.push({ kind: "del", text: midA[i++] });
      }
    }
  }
  out.push(...a.slice(a.length - tail).map((text) => ({ kind: "same" as const, text })));
  return out;
}

/// Words, runs of spaces, and single other characters (punctuation): what a word diff compares.
const TOKEN = /[\p{L}\p{N}\p{M}_'’]+|\s+|[\s\S]/gu;
const isWord = (token: string) => /[\p{L}\p{N}]/u.test(token);

/// The changes that turn `before` into `after`, by whole words: each is a range of `before` (UTF-16 offsets) and
/// its replacement. Changes separated only by spaces and punctuation are one change, so "Hello." to "Hi everyone!"
/// reads as one replacement, never as letters kept inside a word.
export function wordChanges(before: string, after: string): { from: number; to: number; insert: string }[] {
  const a = before.match(TOKEN) ?? [];
  const b = after.match(TOKEN) ?? [];
  const n = a.length;
  const m = b.length;
  if (!n && !m) return [];
  if (n * m > MAX_CELLS) return [{ from: 0, to: before.length, insert: after }];
  const table = new Uint32Array((n + 1) * (m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      table[i * (m + 1) + j] =
        a[i] === b[j] ? table[(i + 1) * (m + 1) + j + 1] + 1 : Math.max(table[(i + 1) * (m + 1) + j], table[i * (m + 1) + j + 1]);
    }
  }
  // Walk the table: runs of kept tokens between changed ones. `kept` holds, per kept run, where it starts in both.
  type Change = { fromA: number; toA: number; fromB: number; toB: number };
  const changes: Change[] = [];
  let [i, j, posA, posB] = [0, 0, 0, 0];
  let open: Change | null = null;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      open = null;
      posA += a[i++].length;
      posB += b[j++].length;
      continue;
    }
    if (!open) {
      open = { fromA: posA, toA: posA, fromB: posB, toB: posB };
      changes.push(open);
    }
    if (j < m && (i === n || table[i * (m + 1) + j + 1] >= table[(i + 1) * (m + 1) + j])) posB += b[j++].length;
    else posA += a[i++].length;
    open.toA = posA;
    open.toB = posB;
  }
  // Join changes whose gap holds no word.
  const joined: Change[] = [];
  for (const change of changes) {
    const last = joined[joined.length - 1];
    if (last && !isWord(before.slice(last.toA, change.fromA))) {
      last.toA = change.toA;
      last.toB = change.toB;
    } else joined.push({ ...change });
  }
  // A change that starts or ends on spaces only moves them: keep spaces shared on both sides out of it.
  return joined.map((c) => {
    let { fromA, toA, fromB, toB } = c;
    while (fromA < toA && fromB < toB && /\s/.test(before[fromA]) && before[fromA] === after[fromB]) [fromA, fromB] = [fromA + 1, fromB + 1];
    while (fromA < toA && fromB < toB && /\s/.test(before[toA - 1]) && before[toA - 1] === after[toB - 1]) [toA, toB] = [toA - 1, toB - 1];
    return { from: fromA, to: toA, insert: after.slice(fromB, toB) };
  });
}
