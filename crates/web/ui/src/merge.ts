// The browser's merge rule, one of quire's three text merges (ARCHITECTURE.md names them: lines for staged review and
// chars for proposals in core, loro's for sync): a version written elsewhere is brought into the open editor around
// what was typed here, by whole words, and refused when both changed the same words (the save then shows the
// conflict). tests/merge-rules.test.mjs runs it over the cases the three share (tests/fixtures/merge-rules.json).
import { ChangeSet } from "@codemirror/state";
import { wordChanges } from "./diff";

/// The changes that carry `theirs` (a version of `base` written elsewhere) into `mine` (`base` as typed here), to
/// apply to `mine`; null when their changes touch the words typed here.
export function wordMerge(base: string, theirs: string, mine: string): ChangeSet | null {
  const theirChanges = ChangeSet.of(wordChanges(base, theirs), base.length);
  const myChanges = ChangeSet.of(wordChanges(base, mine), base.length);
  let overlap = false;
  theirChanges.iterChangedRanges((fromA, toA) => {
    myChanges.iterChangedRanges((fromB, toB) => {
      if (fromA <= toB && fromB <= toA) overlap = true;
    });
  });
  return overlap ? null : theirChanges.map(myChanges);
}
