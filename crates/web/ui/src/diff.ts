// A line diff (longest common subsequence) for the history view; notes are short enough for the quadratic table,
// and past a size the middle is shown as replaced rather than computed.
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
