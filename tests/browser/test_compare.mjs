// test_compare.mjs - jflame diff's compare page in headless Chromium: BEFORE and
// AFTER drawn side by side with their own totals, the same frames in the same
// order and row on both sides, red where a frame grew and blue where it shrank,
// hover highlighting the twin, click zooming both sides, search on both.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { assert, jflame, jflameOk, launch, run, tmpDir } from "./lib.mjs";

const dir = tmpDir();
// the brief's regression: String.format() appears in the producer thread
const before = [
  ["[7] java;kafka-producer;Producer.run;Producer.buildRecord;StringBuilder.append_[j]", 50],
  ["[7] java;kafka-producer;Producer.run;Producer.buildRecord;Producer.crc_[j]", 30],
  ["[7] java;kafka-producer;Producer.run;Producer.idle_[j]", 20],
  ["[7] java;GC Thread#0;G1ParTask::work", 10],
];
const after = [
  ["[7] java;kafka-producer;Producer.run;Producer.buildRecord;StringBuilder.append_[j]", 20],
  ["[7] java;kafka-producer;Producer.run;Producer.buildRecord;String.format_[j];java/util/Formatter.format_[j]", 120],
  ["[7] java;kafka-producer;Producer.run;Producer.buildRecord;Producer.crc_[j]", 30],
  ["[7] java;GC Thread#0;G1ParTask::work", 10],
];
const write = (name, rows) => {
  const p = join(dir, name);
  writeFileSync(p, rows.map(([s, n]) => `${s} ${n}\n`).join(""));
  return p;
};
const a = write("before.folded", before), b = write("after.folded", after);
const html = join(dir, "compare.html");
jflameOk(["diff", a, b, "-o", html]);
const url = pathToFileURL(html).href;
const sum = (rows) => rows.reduce((s, [, n]) => s + n, 0);
const TB = sum(before), TA = sum(after);
// a frame's total on one side: the stacks through it (path given without annotations)
const strip = (s) => s.split(";").map((f) => f.replace(/_\[[jik0]\]$/, "")).join(";");
const under = (rows, path) => rows.filter(([s]) => (strip(s) + ";").startsWith(path + ";")).reduce((t, [, n]) => t + n, 0);

const { newPage } = await launch();

async function open() {
  const page = await newPage();
  await page.goto(url);
  await page.waitForSelector("#graph-after g.f");
  return page;
}

function clean(page) {
  assert.deepEqual(page.jflameErrors, [], "page errors");
  assert.deepEqual(page.jflameNetwork, [], "network requests");
}

/** The frames drawn on one side: {name, x, y, w, fill, cls}. */
async function frames(page, side) {
  return page.$$eval(`#graph-${side} g.f`, (gs) => gs.map((g) => {
    const r = g.querySelector("rect");
    return { name: g.getAttribute("data-name"), cls: g.getAttribute("class"), x: parseFloat(r.getAttribute("x")),
      y: parseFloat(r.getAttribute("y")), w: parseFloat(r.getAttribute("width")), fill: r.getAttribute("fill") };
  }));
}
const rgb = (f) => f.fill.match(/\d+/g).map(Number);
const fmt = (n) => n.toLocaleString("en-US");
const frameLoc = (page, side, name) => page.locator(`#graph-${side} g.f[data-name="${name}"]`);

await run({
  async both_sides_render_with_their_totals() {
    const page = await open();
    assert.equal(await page.textContent("#total-before"), `${fmt(TB)} samples`);
    assert.equal(await page.textContent("#total-after"), `${fmt(TA)} samples`);
    const fb = await frames(page, "before"), fa = await frames(page, "after");
    // each side: "all" and one frame per path with samples on that side
    const paths = (rows) => new Set(rows.flatMap(([s]) => strip(s).split(";").map((_, i, f) => f.slice(0, i + 1).join(";"))));
    assert.equal(fb.length, paths(before).size + 1);
    assert.equal(fa.length, paths(after).size + 1);
    // widths from each side's own counts: both roots span the same width
    const rb = fb.find((f) => f.name === "all"), ra = fa.find((f) => f.name === "all");
    assert.ok(Math.abs(rb.w - ra.w) < 1);
    const pb = fb.find((f) => f.name === "Producer.buildRecord"), pa = fa.find((f) => f.name === "Producer.buildRecord");
    assert.ok(Math.abs(pb.w / rb.w - 80 / TB) < 0.01, `before ${pb.w / rb.w}`);
    assert.ok(Math.abs(pa.w / ra.w - 170 / TA) < 0.01, `after ${pa.w / ra.w}`);
    await frameLoc(page, "before", "all").hover();
    assert.match(await page.textContent("#details"), new RegExp(`^all: before ${fmt(TB)} samples \\(100.00%\\), after ${fmt(TA)} samples \\(100.00%\\)`));
    clean(page);
    await page.close();
  },

  async aligned_same_order_and_rows() {
    const page = await open();
    const fb = await frames(page, "before"), fa = await frames(page, "after");
    for (const f of fb) {
      const twin = fa.find((g) => g.name === f.name);
      if (twin) assert.equal(twin.y, f.y, `${f.name} on the same row`);
    }
    // the children of buildRecord, common to both sides, in the same order
    const kids = ["Producer.crc", "StringBuilder.append"];
    const order = (fs) => fs.filter((f) => kids.includes(f.name)).sort((x, y) => x.x - y.x).map((f) => f.name);
    assert.deepEqual(order(fb), kids);
    assert.deepEqual(order(fa), kids);
    // and on the after side String.format sits between them, by name
    const all3 = fa.filter((f) => [...kids, "String.format"].includes(f.name)).sort((x, y) => x.x - y.x).map((f) => f.name);
    assert.deepEqual(all3, ["Producer.crc", "String.format", "StringBuilder.append"]);
    clean(page);
    await page.close();
  },

  async coloured_by_change() {
    const page = await open();
    const fa = await frames(page, "after"), fb = await frames(page, "before");
    const grew = fa.find((f) => f.name === "String.format");
    const [r1, g1, b1] = rgb(grew);
    assert.ok(r1 === 255 && g1 < 100 && b1 < 100, `String.format red: ${grew.fill}`);
    assert.match(grew.cls, /\bonly\b/, "new frame marked");
    const shrank = fa.find((f) => f.name === "StringBuilder.append");
    const [r2, g2, b2] = rgb(shrank);
    assert.ok(b2 === 255 && r2 < 200 && g2 < 200, `StringBuilder.append blue: ${shrank.fill}`);
    // the same node has the same colour on both sides
    assert.equal(fb.find((f) => f.name === "StringBuilder.append").fill, shrank.fill);
    // gone frames: only on the before side, blue, marked
    const gone = fb.find((f) => f.name === "Producer.idle");
    assert.ok(gone && /\bonly\b/.test(gone.cls));
    assert.ok(rgb(gone)[2] === 255 && rgb(gone)[0] < 255);
    assert.ok(!fa.some((f) => f.name === "Producer.idle"));
    assert.ok(!fb.some((f) => f.name === "String.format"));
    // the root, 100% on both sides, is unchanged: white
    const root = fa.find((f) => f.name === "all");
    assert.equal(root.fill, "rgb(255,255,255)");
    // the tooltip's numbers
    await frameLoc(page, "after", "String.format").hover();
    const d = ((under(after, "[7] java;kafka-producer;Producer.run;Producer.buildRecord;String.format") / TA) * 100).toFixed(2);
    assert.equal(await page.textContent("#details"),
      `String.format: before 0 samples (0.00%), after 120 samples (${d}%), change +${d}% of all samples \u2014 new: absent in BEFORE`);
    await frameLoc(page, "after", "StringBuilder.append").hover();
    const sb = 100 * (20 / TA - 50 / TB);
    assert.match(await page.textContent("#details"), new RegExp(`change ${sb.toFixed(2)}% of all samples; samples -60.00%$`));
    clean(page);
    await page.close();
  },

  async hover_highlights_the_twin() {
    const page = await open();
    await frameLoc(page, "before", "Producer.crc").hover();
    assert.match(await frameLoc(page, "after", "Producer.crc").getAttribute("class"), /\bhl\b/);
    assert.equal(await page.locator("#graph-after g.f.hl").count(), 1);
    await frameLoc(page, "after", "G1ParTask::work").hover();
    assert.match(await frameLoc(page, "before", "G1ParTask::work").getAttribute("class"), /\bhl\b/);
    assert.doesNotMatch(await frameLoc(page, "after", "Producer.crc").getAttribute("class"), /\bhl\b/);
    clean(page);
    await page.close();
  },

  async click_zooms_both_sides() {
    const page = await open();
    const width = async (side, name) => (await frames(page, side)).find((f) => f.name === name).w;
    const full = await width("before", "all");
    await frameLoc(page, "before", "Producer.buildRecord").click();
    for (const side of ["before", "after"]) {
      assert.ok(Math.abs((await width(side, "Producer.buildRecord")) - full) < 1, `${side} zoomed`);
      const fs = await frames(page, side);
      assert.ok(!fs.some((f) => f.name === "G1ParTask::work"), `${side}: other branches hidden`);
      assert.match(fs.find((f) => f.name === "all").cls, /\banc\b/);
    }
    // a frame only in AFTER: BEFORE zooms to its nearest ancestor there
    await frameLoc(page, "after", "String.format").click();
    assert.ok(Math.abs((await width("after", "String.format")) - full) < 1);
    assert.ok(Math.abs((await width("before", "Producer.buildRecord")) - full) < 1);
    await page.click("#unzoom");
    for (const side of ["before", "after"])
      assert.ok((await frames(page, side)).some((f) => f.name === "G1ParTask::work"), `${side} reset`);
    clean(page);
    await page.close();
  },

  async search_matches_on_both_sides() {
    const page = await open();
    await page.fill("#search-input", "^Producer\\.(crc|idle)$");
    await page.click("#search-btn");
    assert.equal(await page.textContent("#matched-before"), `Matched: ${(100 * 50 / TB).toFixed(1)}%`);
    assert.equal(await page.textContent("#matched-after"), `Matched: ${(100 * 30 / TA).toFixed(1)}%`);
    const painted = async (side) => (await frames(page, side)).filter((f) => f.fill === "rgb(230,0,230)").map((f) => f.name).sort();
    assert.deepEqual(await painted("before"), ["Producer.crc", "Producer.idle"]);
    assert.deepEqual(await painted("after"), ["Producer.crc"]);
    await page.click("#search-clear");
    assert.equal(await page.textContent("#matched-after"), "");
    assert.deepEqual(await painted("after"), []);
    clean(page);
    await page.close();
  },

  async bad_input_is_one_line() {
    const two = write("two.folded", [["a;b 1", 2]]);
    const r = jflame(["diff", two, b, "-o", join(dir, "x.html")]);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /^jflame: .*two\.folded.*differential profile.*\n$/);
  },
});
