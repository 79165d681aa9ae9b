// The math bundle (assets/math.js): Temml, a quarter of the app's script, loaded the first time a text holds a
// formula (see markdown.ts), so that the first screen, on a phone on a slow network above all, waits for less.
import temml from "temml";

(globalThis as { quireTemml?: typeof temml }).quireTemml = temml;
document.dispatchEvent(new Event("quire:math"));
