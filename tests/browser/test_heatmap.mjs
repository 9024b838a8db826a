// test_heatmap.mjs - jflame heatmap's page in headless Chromium: the heat map
// draws every cell with samples, hover gives time and count, selecting a start
// and an end cell draws the flame graph of exactly that range (its total
// computed here from the .stacks input), which zooms and searches; "Back to
// heat map" returns. No errors, no network.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { assert, jflame, jflameOk, launch, run, tmpDir } from "./lib.mjs";

const dir = tmpDir();
const ROWS = 50;
const US = 1000000;

// A deterministic recording, 5 s at 99 Hz: a steady worker all along, a burst
// on "cache-refresh" in the second second (2.300 s to 2.500 s, 1 kHz), and the
// idle task on the other CPU (left out by the heat map).
let seed = 12345;
const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const T0 = 4242 * US + 137000; // the recording starts at 4242.137 s on perf's clock
const samples = []; // {us, comm, tid, frames (leaf first), idle}
const steady = ["jflame/examples/Jitter.steady", "java/lang/Thread.run"];
const burst = [
  ["java/util/HashMap.putVal", "jflame/examples/Jitter.rebuild", "jflame/examples/Jitter.refresh", "java/lang/Thread.run"],
  ["java/util/Arrays.copyOf", "jflame/examples/Jitter.rebuild", "jflame/examples/Jitter.refresh", "java/lang/Thread.run"],
  ["G1ParScanThreadState::trim_queue", "G1ParEvacuateFollowersClosure::do_void", "GangWorker::loop", "thread_native_entry"],
];
for (let i = 0; i < 5 * 99; i++) {
  const us = T0 + Math.round(i * US / 99) + Math.floor(rand() * 300);
  samples.push({ us, comm: "steady-worker-0", tid: 11, frames: steady });
  samples.push({ us: us + 500, comm: "swapper", pid: 0, tid: 0, idle: true,
    frames: ["native_safe_halt", "default_idle", "cpu_startup_entry"] });
}
const burstStart = Math.ceil(T0 / US) * US + 1 * US + 300000; // second 2 of the map (t0 = 4242): 4244.300
for (let us = burstStart; us < burstStart + 200000; us += 1000) {
  const k = Math.floor(rand() * 3);
  samples.push({ us: us + Math.floor(rand() * 200), comm: k === 2 ? "GC Thread#0" : "cache-refresh", tid: k === 2 ? 13 : 12,
    frames: burst[k] });
}
samples.sort((a, b) => a.us - b.us);
const fmtTime = (us) => `${Math.floor(us / US)}.${String(us % US).padStart(6, "0")}`;
const text = samples.map((s) => `${s.comm} ${s.idle ? 0 : 4000}/${s.tid} [000] ${fmtTime(s.us)}: 10101010 cpu-clock:\n` +
  s.frames.map((f, j) => `\t    7f00000${j}1000 ${f} (/tmp/perf-4000.map)\n`).join("") + "\n").join("");
const stacksFile = join(dir, "run.stacks");
writeFileSync(stacksFile, text);

// expected cells, computed from the input: column = second - first second,
// row = offset in the second * ROWS
const busy = samples.filter((s) => !s.idle);
const t0sec = Math.floor(Math.min(...busy.map((s) => s.us)) / US);
const binOf = (us) => (Math.floor(us / US) - t0sec) * ROWS + Math.floor((us % US) * ROWS / US);
const cells = new Map();
for (const s of busy) cells.set(binOf(s.us), (cells.get(binOf(s.us)) || 0) + 1);
const inRange = (a, z) => busy.filter((s) => binOf(s.us) >= a && binOf(s.us) <= z);

const html = join(dir, "run.html");
jflameOk(["heatmap", stacksFile, "-o", html]);
const url = pathToFileURL(html).href;
const { newPage } = await launch();

async function open() {
  const page = await newPage();
  await page.goto(url);
  await page.waitForSelector("#heatmap rect.cell");
  return page;
}

function clean(page) {
  assert.deepEqual(page.jflameErrors, [], "page errors");
  assert.deepEqual(page.jflameNetwork, [], "network requests");
}

const cellLoc = (page, bin) => page.locator(`rect.cell[data-col="${Math.floor(bin / ROWS)}"][data-row="${bin % ROWS}"]`);
const fmt = (n) => n.toLocaleString("en-US");
const secs = (bin, end) => (Math.floor(bin / ROWS) + (bin % ROWS + (end ? 1 : 0)) / ROWS).toFixed(3);

/** Clicks the cell of bin (empty cells too: by position in the grid). */
async function clickBin(page, bin) {
  const box = await page.locator("#heatmap rect.bg").boundingBox();
  const cols = Number(await page.evaluate(() => window.jflame.cols));
  const cw = box.width / cols, ch = box.height / ROWS;
  const col = Math.floor(bin / ROWS), row = bin % ROWS;
  await page.mouse.click(box.x + (col + 0.5) * cw, box.y + (ROWS - 1 - row + 0.5) * ch);
}

/** The range's flame graph: frames as {name, x, w, fill}. */
async function frames(page) {
  return page.$$eval("#graph g.f", (gs) => gs.map((g) => {
    const r = g.querySelector("rect");
    return { name: g.getAttribute("data-name"), cls: g.getAttribute("class"), x: parseFloat(r.getAttribute("x")),
      w: parseFloat(r.getAttribute("width")), fill: r.getAttribute("fill") };
  }));
}

const burstBin = binOf(burstStart);
const startBin = burstBin - 3, endBin = burstBin + 12; // the burst and a little around it

await run({
  async draws_the_cells_with_samples() {
    const page = await open();
    const drawn = await page.$$eval("rect.cell", (rs) => rs.map((r) => [+r.dataset.col, +r.dataset.row, +r.dataset.n, r.getAttribute("fill")]));
    assert.equal(drawn.length, cells.size, "one rect per cell with samples");
    for (const [c, r, n] of drawn) assert.equal(n, cells.get(c * ROWS + r), `cell ${c}/${r}`);
    const cols = Math.floor(Math.max(...busy.map((s) => s.us)) / US) - t0sec + 1;
    assert.equal(await page.evaluate(() => window.jflame.cols), cols);
    // the busiest cell is the darkest, in the burst's column
    const max = Math.max(...cells.values());
    const darkest = drawn.filter(([, , n]) => n === max);
    assert.ok(darkest.every(([c]) => c === Math.floor(burstBin / ROWS)), "the burst is the hottest column");
    assert.ok(darkest.every(([, , , f]) => f === "rgb(160,16,16)"), darkest.map((d) => d[3]).join());
    assert.match(await page.textContent("#hm-summary"), new RegExp(`${fmt(cells.size)} cells with samples`));
    assert.match(await page.textContent("#hm-summary"), /495 samples of the idle task left out/);
    assert.match(await page.textContent("#subtitle"), new RegExp(`run.stacks: ${busy.length} samples over ${cols} s`));
    clean(page);
    await page.close();
  },

  async hover_shows_time_and_count() {
    const page = await open();
    const bin = burstBin + 2;
    await cellLoc(page, bin).hover();
    const n = cells.get(bin);
    assert.equal(await page.textContent("#hm-details"),
      `time ${secs(bin)} s \u2013 ${secs(bin, true)} s, ${n} sample${n === 1 ? "" : "s"}`);
    assert.match(await page.textContent(".jf-tip"), new RegExp(`^time ${secs(bin)} s`));
    clean(page);
    await page.close();
  },

  async a_range_draws_its_flame_graph() {
    const page = await open();
    await clickBin(page, startBin);
    assert.ok(await page.isVisible("#heatmap-view"), "one click only marks the start");
    await clickBin(page, endBin);
    await page.waitForSelector("#graph g.f");
    assert.ok(await page.isHidden("#heatmap-view"));
    const want = inRange(startBin, endBin);
    assert.ok(want.length > 100, `${want.length} samples in the range`);
    assert.equal(await page.textContent("#range-title"),
      `Range ${secs(startBin)} s \u2013 ${secs(endBin, true)} s: ${fmt(want.length)} samples`);
    await page.locator('#graph g.f[data-name="all"]').hover();
    assert.equal(await page.textContent("#details"), `all (${fmt(want.length)} samples, 100.00%)`);
    // every thread of the range is a root frame (blanks as '_', as jflame
    // collapse writes it), with its own count
    const fs = await frames(page);
    for (const comm of new Set(want.map((s) => s.comm))) {
      const n = want.filter((s) => s.comm === comm).length, root = comm.replace(/[ \t]/g, "_");
      await page.locator(`#graph g.f[data-name="${root}"]`).hover();
      assert.match(await page.textContent("#details"), new RegExp(`^${root} \\(${fmt(n)} samples?, `));
    }
    assert.ok(!fs.some((f) => f.name === "swapper" || f.name === "native_safe_halt"), "idle left out");
    // Java frames in the java palette's JIT green, the legend says so
    const rebuild = fs.find((f) => f.name === "jflame/examples/Jitter.rebuild");
    const [r, g, b] = rebuild.fill.match(/\d+/g).map(Number);
    assert.ok(g > r && g > b, `JIT green: ${rebuild.fill}`);
    assert.match(await page.textContent("#legend"), /JIT-compiled Java/);
    clean(page);
    await page.close();
  },

  async end_before_start_and_empty_cells_select_the_same() {
    const page = await open();
    // from an empty cell before the burst's column to one after it, clicked backwards
    const a = burstBin - (burstBin % ROWS) - 1, z = burstBin + ROWS - (burstBin % ROWS);
    await clickBin(page, z);
    await clickBin(page, a);
    await page.waitForSelector("#graph g.f");
    const want = inRange(a, z).length;
    assert.match(await page.textContent("#range-title"), new RegExp(`: ${fmt(want)} samples$`));
    assert.equal(await page.evaluate(() => window.jflame.graph.tree.v[0][0]), want);
    clean(page);
    await page.close();
  },

  async zoom_search_and_back() {
    const page = await open();
    await clickBin(page, startBin);
    await clickBin(page, endBin);
    await page.waitForSelector("#graph g.f");
    const want = inRange(startBin, endBin);
    const full = (await frames(page)).find((f) => f.name === "all").w;
    // zoom: the clicked frame fills the width, other branches go
    await page.locator('#graph g.f[data-name="jflame/examples/Jitter.rebuild"]').click();
    let fs = await frames(page);
    const z = fs.find((f) => f.name === "jflame/examples/Jitter.rebuild");
    assert.ok(Math.abs(z.w - full) < 1, `zoomed frame ${z.w} of ${full}`);
    assert.ok(!fs.some((f) => f.name === "steady-worker-0"), "other branches hidden");
    assert.ok(fs.find((f) => f.name === "all").cls.includes("anc"), "ancestors greyed");
    assert.ok(fs.some((f) => f.name === "java/util/HashMap.putVal"), "children stay");
    assert.equal(await page.isDisabled("#unzoom"), false);
    await page.click("#unzoom");
    fs = await frames(page);
    assert.ok(fs.some((f) => f.name === "steady-worker-0"), "reset zoom");
    assert.equal(await page.isDisabled("#unzoom"), true);
    // search: matching frames painted, Matched: share of all samples in the range
    await page.fill("#search-input", "HashMap\\.put");
    await page.click("#search-btn");
    const hits = want.filter((s) => s.frames[0] === "java/util/HashMap.putVal").length;
    assert.equal(await page.textContent("#matched"), `Matched: ${(100 * hits / want.length).toFixed(1)}%`);
    fs = await frames(page);
    assert.deepEqual(fs.filter((f) => f.fill === "rgb(230,0,230)").map((f) => f.name), ["java/util/HashMap.putVal"]);
    await page.fill("#search-input", "jitter");
    await page.check("#ic");
    await page.click("#search-btn");
    const jit = want.filter((s) => s.frames.some((f) => /jitter/i.test(f))).length;
    assert.equal(await page.textContent("#matched"), `Matched: ${(100 * jit / want.length).toFixed(1)}%`);
    await page.click("#search-clear");
    assert.equal(await page.textContent("#matched"), "");
    // back to the map, the selection still marked
    await page.click("#back");
    assert.ok(await page.isVisible("#heatmap-view"));
    assert.ok(await page.isHidden("#flame-view"));
    assert.ok(await page.locator("#sel rect.chosen").count() > 0);
    // and a second range works from there
    await clickBin(page, 0);
    await clickBin(page, ROWS - 1);
    await page.waitForSelector("#graph g.f");
    assert.match(await page.textContent("#range-title"), new RegExp(`: ${fmt(inRange(0, ROWS - 1).length)} samples$`));
    await page.locator('#graph g.f[data-name="steady-worker-0"]').click();
    fs = await frames(page);
    assert.ok(Math.abs(fs.find((f) => f.name === "steady-worker-0").w - full) < 1, "the new range zooms");
    clean(page);
    await page.close();
  },

  async bad_input_is_one_line() {
    const r = jflame(["heatmap", join(dir, "missing.stacks"), "-o", join(dir, "x.html")]);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /^jflame: failed to open .*missing\.stacks: No such file or directory\n$/);
  },
});
