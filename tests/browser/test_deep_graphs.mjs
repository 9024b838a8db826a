// test_deep_graphs.mjs - Java stacks are deep (a hundred frames and more):
// the HTML views' flame graphs scroll in a box that opens at the root, so the
// widest frames are on screen without scrolling; the compare page's two sides
// scroll together. Checked in headless Chromium on a 900 px high window.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { assert, jflameOk, launch, run, tmpDir } from "./lib.mjs";

const dir = tmpDir();
const DEPTH = 160;
const deep = (leaf) => Array.from({ length: DEPTH }, (_, i) => `pkg/C${i}.m`).concat([leaf]);
const before = join(dir, "before.folded"), after = join(dir, "after.folded");
writeFileSync(before, `[11] java;main;${deep("a").join(";")} 30\n[11] java;main;b 10\n`);
writeFileSync(after, `[22] java;main;${deep("a").join(";")} 10\n[22] java;main;b 30\n`);
const compare = join(dir, "compare.html");
jflameOk(["diff", before, after, "-o", compare]);

// the same deep stack as timestamped samples, for the heat map
let stacks = "";
for (let i = 0; i < 40; i++) {
  const t = (1000 + i * 0.025).toFixed(6);
  stacks += `java 11/11 [000] ${t}: 10101010 cpu-clock:\n`;
  for (const f of deep("a").reverse()) stacks += `\t    7f0000001000 ${f} (/tmp/perf-11.map)\n`;
  stacks += "\n";
}
const stacksFile = join(dir, "deep.stacks");
writeFileSync(stacksFile, stacks);
const heatmap = join(dir, "deep.html");
jflameOk(["heatmap", stacksFile, "-o", heatmap]);

const { newPage } = await launch();
const VIEW = { width: 1300, height: 900 };

/** The root frame ("all", node 0) of the graph in el: on screen? */
async function rootOnScreen(page, graphSel) {
  const box = await page.locator(`${graphSel} g.f[data-i="0"] rect`).boundingBox();
  assert.ok(box, "root frame drawn");
  return box.y >= 0 && box.y + box.height <= VIEW.height;
}

await run({
  async compare_opens_at_the_roots_and_sides_scroll_together() {
    const page = await newPage(VIEW);
    await page.goto(pathToFileURL(compare).href);
    await page.waitForSelector("#graph-after g.f");
    const tall = await page.$eval("#graph-after svg", (s) => +s.getAttribute("height"));
    assert.ok(tall > VIEW.height * 2, `the graph is ${tall} px tall`);
    assert.ok(await rootOnScreen(page, "#graph-before"), "BEFORE's root on screen");
    assert.ok(await rootOnScreen(page, "#graph-after"), "AFTER's root on screen");
    // scrolling one side up to the tip scrolls the other
    await page.$eval("#graph-after", (el) => { el.scrollTop = 0; });
    await page.waitForFunction(() => document.getElementById("graph-before").scrollTop === 0);
    // a click on a frame (zoom) keeps the place in the graph
    await page.$eval("#graph-after", (el) => { el.scrollTop = el.scrollHeight; });
    await page.locator('#graph-after g.f', { hasText: "main" }).first().click();
    assert.ok(await rootOnScreen(page, "#graph-after"), "still at the root after zooming");
    assert.deepEqual(page.jflameErrors, []);
    await page.close();
  },

  async heatmap_range_graph_opens_at_the_root() {
    const page = await newPage(VIEW);
    await page.goto(pathToFileURL(heatmap).href);
    await page.waitForSelector("#heatmap rect.cell");
    await page.evaluate(() => { const j = window.jflame; j.select(0, j.bin(j.cols - 1, j.rows - 1)); });
    await page.waitForSelector("#graph g.f");
    assert.match(await page.textContent("#range-title"), /40 samples/);
    assert.ok(await rootOnScreen(page, "#graph"), "the range's root on screen");
    assert.deepEqual(page.jflameErrors, []);
    await page.close();
  },
});
