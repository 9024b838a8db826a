// test_svg.mjs - jflame's SVG flame graph in headless Chromium: it draws every
// frame, zooms on click, resets, searches with "Matched: x%", toggles case, and
// keeps zoom and search in the URL as flamegraph.pl does.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { assert, jflameOk, launch, run, tmpDir } from "./lib.mjs";

const dir = tmpDir();
// 110 samples; "spin" under two parents, one branch ("other") apart
const stacks = [
  ["main;a;spin", 60],
  ["main;a;mix", 20],
  ["main;b;spin", 15],
  ["main;b;Other", 5],
  ["other;x", 10],
];
const total = stacks.reduce((s, [, n]) => s + n, 0);
const folded = join(dir, "in.folded");
writeFileSync(folded, stacks.map(([s, n]) => `${s} ${n}\n`).join(""));
const svg = join(dir, "graph.svg");
jflameOk(["svg", "--title", "browser test", "-o", svg, folded]);
const url = pathToFileURL(svg).href;

// every frame the folded input implies: "all" plus each unique path prefix
const paths = new Set();
for (const [s] of stacks) {
  const f = s.split(";");
  for (let i = 1; i <= f.length; i++) paths.add(f.slice(0, i).join(";"));
}

const { newPage } = await launch();

/** The drawn frames: name (from the title), x, width, fill, hidden. */
async function frames(page) {
  return page.$$eval("#frames > g", (gs) => gs.map((g) => {
    const r = g.querySelector("rect");
    return {
      title: g.querySelector("title").textContent,
      name: g.querySelector("title").textContent.replace(/ \(.*$/, ""),
      x: parseFloat(r.getAttribute("x")),
      w: parseFloat(r.getAttribute("width")),
      fill: r.getAttribute("fill"),
      hidden: getComputedStyle(g).display === "none",
    };
  }));
}

async function open(query = "") {
  const page = await newPage();
  await page.goto(url + query);
  await page.waitForSelector("#frames > g");
  return page;
}

function clean(page) {
  assert.deepEqual(page.jflameErrors, [], "page errors");
  assert.deepEqual(page.jflameNetwork, [], "network requests");
}

const groupOf = (page, name, nth = 0) =>
  page.locator("#frames > g", { has: page.locator(`title:text-matches("^${name} \\\\(")`) }).nth(nth);

await run({
  async draws_every_frame_with_counts() {
    const page = await open();
    const fs = await frames(page);
    assert.equal(fs.length, paths.size + 1, fs.map((f) => f.title).join("\n"));
    const all = fs.find((f) => f.name === "all");
    assert.match(all.title, new RegExp(`^all \\(${total} samples, 100%\\)$`));
    const full = all.w;
    // widths are proportional to counts: "a" holds 80 of 110 samples
    const a = fs.find((f) => f.name === "a");
    assert.ok(Math.abs(a.w - full * 80 / total) < 0.5, `a is ${a.w} wide of ${full}`);
    assert.equal(await page.textContent("#title"), "browser test");
    clean(page);
    await page.close();
  },

  async click_zooms_and_reset_restores() {
    const page = await open();
    const full = (await frames(page)).find((f) => f.name === "all").w;
    await groupOf(page, "a").locator("rect").click();
    let fs = await frames(page);
    const a = fs.find((f) => f.name === "a");
    assert.ok(Math.abs(a.w - full) < 0.5, `zoomed a is ${a.w} wide, want ${full}`);
    // the other branches are hidden; a's children fill it in proportion (60:20)
    assert.ok(fs.find((f) => f.name === "b").hidden, "b hidden when a is zoomed");
    assert.ok(fs.find((f) => f.name === "other").hidden, "other hidden when a is zoomed");
    const mix = fs.find((f) => f.name === "mix");
    assert.ok(Math.abs(mix.w - full * 20 / 80) < 0.5, `mix is ${mix.w} wide`);
    assert.match(page.url(), /[?&]x=[0-9.]+&y=[0-9.]+/);
    assert.ok(await page.isVisible("#unzoom"), "Reset Zoom shows");
    // hovering tells the frame's samples and share
    await groupOf(page, "mix").locator("rect").hover();
    assert.match(await page.textContent("#details"), /mix \(20 samples, 18\.18%\)/);
    await page.click("#unzoom");
    fs = await frames(page);
    assert.ok(Math.abs(fs.find((f) => f.name === "a").w - full * 80 / total) < 0.5);
    assert.ok(!fs.find((f) => f.name === "b").hidden);
    assert.doesNotMatch(page.url(), /[?&]x=/);
    assert.ok(!(await page.isVisible("#unzoom")));
    clean(page);
    await page.close();
  },

  async escape_resets_zoom() {
    const page = await open();
    await groupOf(page, "b").locator("rect").click();
    assert.ok((await frames(page)).find((f) => f.name === "a").hidden);
    await page.keyboard.press("Escape");
    assert.ok(!(await frames(page)).find((f) => f.name === "a").hidden);
    await page.close();
  },

  async search_paints_matches_and_says_matched() {
    const page = await open();
    page.on("dialog", (d) => d.accept("^spin$"));
    await page.click("#search");
    const fs = await frames(page);
    const painted = fs.filter((f) => f.fill === "rgb(230,0,230)").map((f) => f.name);
    assert.deepEqual(painted, ["spin", "spin"]);
    const pct = (100 * (60 + 15) / total).toFixed(1);
    assert.equal((await page.textContent("#matched")).trim(), `Matched: ${pct}%`);
    assert.match(decodeURIComponent(page.url()), /[?&]s=\^spin\$/);
    // the search button now resets the search
    await page.click("#search");
    assert.equal((await frames(page)).filter((f) => f.fill === "rgb(230,0,230)").length, 0);
    assert.doesNotMatch(page.url(), /[?&]s=/);
    clean(page);
    await page.close();
  },

  async ignorecase_toggle_changes_matches() {
    const page = await open();
    let answer = "other";
    page.on("dialog", (d) => d.accept(answer));
    await page.keyboard.press("Control+f");
    // case-sensitive: "other" only, not "Other"
    let names = (await frames(page)).filter((f) => f.fill === "rgb(230,0,230)").map((f) => f.name);
    assert.deepEqual(names, ["other"]);
    await page.click("#search"); // reset
    await page.click("#ignorecase");
    await page.keyboard.press("Control+f");
    names = (await frames(page)).filter((f) => f.fill === "rgb(230,0,230)").map((f) => f.name).sort();
    assert.deepEqual(names, ["Other", "other"]);
    const pct = (100 * (10 + 5) / total).toFixed(1);
    assert.equal((await page.textContent("#matched")).trim(), `Matched: ${pct}%`);
    await page.close();
  },

  async long_subtitle_fits_the_width() {
    // a recording's subtitle with the frame-pointer warning: wider than 1200 px on one line
    const sub = "3.0 s at 99 Hz (cpu-clock): 12345 samples, 0 lost, 3 truncated, 1 unwind failed, 0 failed stack " +
      "reads; WARNING frame pointers: off in pid 4242 and others: Java frames below compiled code are lost; " +
      "restart it with -XX:+PreserveFramePointer";
    // [width, warning style, copies of the text]: six copies take more than eight lines
    for (const [width, bold, copies] of [[1200, true, 1], [600, true, 1], [1200, false, 1], [1200, true, 6]]) {
      const text = Array(copies).fill(bold ? sub : sub.replace("WARNING frame pointers: off", "note")).join("; ");
      const out = join(dir, `sub-${width}-${bold}-${copies}.svg`);
      jflameOk(["svg", "--subtitle", text, "--width", String(width), "-o", out, folded]);
      const page = await newPage();
      await page.goto(pathToFileURL(out).href);
      await page.waitForSelector("#frames > g");
      const boxes = await page.$$eval("#subtitle tspan", (ts) => ts.map((t) => {
        const b = t.getBBox();
        return { x: b.x, w: b.width, y: b.y, h: b.height, text: t.textContent };
      }));
      assert.ok(boxes.length >= 2, `wrapped into lines: ${JSON.stringify(boxes)}`);
      for (const b of boxes) assert.ok(b.x >= 0 && b.x + b.w <= width, `a line runs off the ${width} px graph: ${JSON.stringify(b)}`);
      // every word is still there, in order, and lines do not overlap
      assert.equal(boxes.map((b) => b.text).join(" ").replace(/ +/g, " "), text.replace(/ +/g, " "));
      if (copies > 1) assert.ok(boxes.length > 8, `${boxes.length} lines`);
      // the warning's style on every line
      const fills = await page.$$eval("#subtitle tspan", (ts) => ts.map((t) => getComputedStyle(t).fill));
      for (const f of fills) assert.equal(f, bold ? "rgb(200, 0, 0)" : "rgb(60, 60, 60)");
      for (let i = 1; i < boxes.length; i++) assert.ok(boxes[i].y >= boxes[i - 1].y + boxes[i - 1].h - 1);
      // the graph starts below the last line
      const top = await page.$$eval("#frames > g rect", (rs) => Math.min(...rs.map((r) => r.getBBox().y)));
      const last = boxes[boxes.length - 1];
      assert.ok(top >= last.y + last.h, `frames (${top}) under the subtitle (${last.y + last.h})`);
      clean(page);
      await page.close();
    }
  },

  async url_restores_zoom_and_search() {
    const page = await open();
    await groupOf(page, "b").locator("rect").click();
    const zoomed = new URL(page.url()).search;
    await page.close();
    const again = await open(zoomed + "&s=mix");
    const fs = await frames(again);
    const full = fs.find((f) => f.name === "all").w;
    assert.ok(Math.abs(fs.find((f) => f.name === "b").w - full) < 0.5, "zoom restored from ?x=&y=");
    assert.ok(fs.find((f) => f.name === "a").hidden);
    assert.equal((await again.textContent("#matched")).trim(), `Matched: ${(100 * 20 / total).toFixed(1)}%`);
    clean(again);
    await again.close();
  },
});
