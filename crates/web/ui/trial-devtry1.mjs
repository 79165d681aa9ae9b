import { chromium } from "playwright-core";
const S = "/tmp/trial-dev/shots/";
const browser = await chromium.launch({executablePath: "/usr/bin/chromium", args: ["--no-sandbox"]});
const ctx = await browser.newContext({viewport:{width:390,height:844}, isMobile:true, hasTouch:true, ignoreHTTPSErrors:true, storageState:"/tmp/trial-dev/phone-state.json"});
const page = await ctx.newPage();
page.on("response", r => { if (r.status() >= 400) console.log("HTTP", r.status(), r.request().method(), r.url()); });
page.on("pageerror", e => console.log("PAGEERROR", e.message));
const shot = async n => { await page.waitForTimeout(700); await page.screenshot({path: S+n+".png"}); };
await page.goto("https://127.0.0.1:18473/");
await page.waitForTimeout(1500);
await page.getByRole("button", {name:"Settings"}).first().tap();
await page.waitForTimeout(1000);
await page.getByText("Your phone and other devices").scrollIntoViewIfNeeded();
await shot("09-settings-devices");
await page.getByText("Plugins", {exact:true}).scrollIntoViewIfNeeded();
await shot("09b-settings-bottom");
// Try "Set a passphrase" from phone? just open dialog
await page.getByRole("button", {name:"Notebooks"}).last().tap();
await page.waitForTimeout(500);
// Tags cut-off: scroll the tree
const tags = page.getByRole("heading", {name:"Tags"});
console.log("tags box", await tags.boundingBox());
await tags.scrollIntoViewIfNeeded();
await shot("10-tags");
// Create notebook + note from phone
await page.getByRole("button", {name:"+ Notebook"}).tap();
await shot("11-newnb-dialog");
await browser.close();
