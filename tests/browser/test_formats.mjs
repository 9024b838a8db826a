// test_formats.mjs - `jflame convert`'s pprof and speedscope outputs read by
// other people's code: pprof-format decodes the .pb.gz, ajv checks the JSON
// against speedscope's schema, and speedscope itself (in Chromium) opens both.
import { readFileSync, readdirSync } from "node:fs";
import { createServer } from "node:http";
import { extname, join } from "node:path";
import { gunzipSync } from "node:zlib";
import Ajv from "ajv";
import { Profile } from "pprof-format";
import { DATA, assert, jflameOk, launch, run, tmpDir } from "./lib.mjs";

const dir = tmpDir();
const FOLDED = join(DATA, "convert", "jvm.folded");
const PERF = join(DATA, "collapse", "sys-pid.perf");
const SPEEDSCOPE = new URL("./node_modules/speedscope/dist/release/", import.meta.url).pathname;
const ANNOTATION = /_\[[ji0k]\]$/;

/** folded text -> Map(stack -> count), duplicate lines summed */
function parseFolded(text) {
  const m = new Map();
  for (const line of text.split("\n")) {
    if (!line) continue;
    const i = line.lastIndexOf(" ");
    const k = line.slice(0, i);
    m.set(k, (m.get(k) || 0) + Number(line.slice(i + 1)));
  }
  return m;
}

/** perf script text -> per-thread sample counts and period sums, as the file says */
function parsePerf(text) {
  const threads = new Map();
  let samples = 0, periods = 0, first = Infinity, last = -Infinity;
  for (const line of text.split("\n")) {
    if (!line || /^\s|^#/.test(line)) continue;
    const m = line.match(/^(.+?)\s+(?:(-?\d+)\/)?(\d+)\s+(?:\[\d+\]\s+)?(\d+\.\d+):\s+(?:(\d+)\s+)?(\S+?):/);
    assert.ok(m, `not a perf script header: ${line}`);
    const [, comm, pid, tid, time, period] = m;
    const key = pid !== undefined ? `${comm} pid: ${pid} tid: ${tid}` : `${comm} tid: ${tid}`;
    const t = threads.get(key) || { n: 0, w: 0, times: [] };
    t.n++;
    t.w += Number(period || 1);
    t.times.push(Number(time));
    threads.set(key, t);
    samples++;
    periods += Number(period || 1);
    first = Math.min(first, Number(time));
    last = Math.max(last, Number(time));
  }
  return { threads, samples, periods, first, last };
}

function decodePprof(path) {
  const raw = readFileSync(path);
  assert.equal(raw[0], 0x1f, "gzip magic");
  assert.equal(raw[1], 0x8b, "gzip magic");
  return Profile.decode(gunzipSync(raw));
}

/** The profile's samples as folded stacks (root first) -> summed values,
 *  checking every id on the way. */
function pprofStacks(p) {
  const str = (i) => {
    const n = Number(i);
    assert.ok(n >= 0 && n < p.stringTable.strings.length, `string index ${n} in range`);
    return p.stringTable.strings[n];
  };
  const funcs = new Map(p.function.map((f) => [Number(f.id), f]));
  const locs = new Map(p.location.map((l) => [Number(l.id), l]));
  assert.equal(funcs.size, p.function.length, "function ids are unique");
  assert.equal(locs.size, p.location.length, "location ids are unique");
  const stacks = new Map();
  for (const s of p.sample) {
    assert.equal(s.value.length, p.sampleType.length, "one value per sample type");
    const leafFirst = [];
    for (const id of s.locationId) {
      const loc = locs.get(Number(id));
      assert.ok(loc, `location ${id} exists`);
      assert.equal(loc.line.length, 1);
      const f = funcs.get(Number(loc.line[0].functionId));
      assert.ok(f, `function ${loc.line[0].functionId} exists`);
      const name = str(f.name), sys = str(f.systemName);
      // the name pprof shows has no annotation; system_name is the folded frame
      assert.equal(name, sys.replace(ANNOTATION, ""));
      leafFirst.push(sys);
    }
    const key = leafFirst.reverse().join(";");
    const vals = s.value.map(Number);
    const had = stacks.get(key);
    stacks.set(key, had ? had.map((v, i) => v + vals[i]) : vals);
  }
  return { stacks, str };
}

function checkStringTable(p) {
  const strings = p.stringTable.strings;
  assert.equal(strings[0], "", 'string_table[0] is ""');
  assert.equal(new Set(strings).size, strings.length, "each string once");
}

const ajv = new Ajv({ allErrors: true });
const schema = JSON.parse(readFileSync(join(SPEEDSCOPE, "file-format-schema.json"), "utf8"));
assert.equal(schema.$schema, "http://json-schema.org/draft-07/schema#", "ajv 8's default draft");
const validate = ajv.compile(schema);

function readSpeedscope(path) {
  const doc = JSON.parse(readFileSync(path, "utf8"));
  assert.ok(validate(doc), `schema: ${ajv.errorsText(validate.errors)}`);
  assert.equal(doc.$schema, "https://www.speedscope.app/file-format-schema.json");
  assert.match(doc.exporter, /^jflame \d+\.\d+\.\d+$/);
  return doc;
}

/** A sampled profile as folded stacks -> summed weights. */
function speedscopeStacks(doc, prof) {
  const m = new Map();
  prof.samples.forEach((stack, i) => {
    const key = stack.map((f) => doc.shared.frames[f].name).join(";");
    m.set(key, (m.get(key) || 0) + prof.weights[i]);
  });
  return m;
}

const folded = parseFolded(readFileSync(FOLDED, "utf8"));
const foldedTotal = [...folded.values()].reduce((a, b) => a + b, 0);
const perf = parsePerf(readFileSync(PERF, "utf8"));

await run({
  "pprof from folded stacks": () => {
    const out = join(dir, "f.pb.gz");
    jflameOk(["convert", FOLDED, "-o", out]);
    const p = decodePprof(out);
    checkStringTable(p);
    const { stacks, str } = pprofStacks(p);
    assert.deepEqual(p.sampleType.map((t) => [str(t.type), str(t.unit)]), [["samples", "count"]]);
    assert.deepEqual(new Map([...stacks].map(([k, v]) => [k, v[0]])), folded);
    assert.equal([...stacks.values()].reduce((a, v) => a + v[0], 0), foldedTotal);
    // one function and one location per distinct frame
    const frames = new Set([...folded.keys()].flatMap((s) => s.split(";")));
    assert.equal(p.function.length, frames.size);
    assert.equal(p.location.length, frames.size);
  },

  "pprof from folded stacks with a rate: cpu nanoseconds": () => {
    const out = join(dir, "f99.pb.gz");
    jflameOk(["convert", "-F", "99", FOLDED, "-o", out]);
    const p = decodePprof(out);
    const { stacks, str } = pprofStacks(p);
    assert.deepEqual(p.sampleType.map((t) => [str(t.type), str(t.unit)]), [["samples", "count"], ["cpu", "nanoseconds"]]);
    assert.deepEqual([str(p.periodType.type), str(p.periodType.unit)], ["cpu", "nanoseconds"]);
    assert.equal(Number(p.period), Math.floor(1e9 / 99));
    for (const [k, [n, ns]] of stacks) {
      assert.equal(n, folded.get(k));
      assert.equal(ns, n * Math.floor(1e9 / 99));
    }
  },

  "pprof from perf script text (.stacks)": () => {
    const out = join(dir, "s.pb.gz");
    jflameOk(["convert", PERF, "-o", out]);
    const p = decodePprof(out);
    checkStringTable(p);
    const { stacks, str } = pprofStacks(p);
    assert.deepEqual(p.sampleType.map((t) => [str(t.type), str(t.unit)]), [["samples", "count"], ["cpu", "nanoseconds"]]);
    const vals = [...stacks.values()];
    assert.equal(vals.reduce((a, v) => a + v[0], 0), perf.samples);
    assert.equal(vals.reduce((a, v) => a + v[1], 0), perf.periods);
    assert.equal(Number(p.period), 10101010);
    assert.ok(Math.abs(Number(p.durationNanos) - (perf.last - perf.first) * 1e9) < 1e3, "duration");
    // the same stacks as jflame collapse --all, whose counts are the periods
    const collapsed = parseFolded(jflameOk(["collapse", "--all", PERF]).stdout);
    assert.deepEqual(new Map([...stacks].map(([k, v]) => [k, v[1]])), collapsed);
  },

  "speedscope from folded stacks matches the schema": () => {
    const out = join(dir, "f.json");
    jflameOk(["convert", FOLDED, "-o", out]);
    const doc = readSpeedscope(out);
    assert.equal(doc.profiles.length, 1);
    const prof = doc.profiles[0];
    assert.equal(prof.type, "sampled");
    assert.equal(prof.unit, "none");
    assert.equal(prof.startValue, 0);
    assert.equal(prof.endValue, foldedTotal);
    assert.equal(prof.samples.length, prof.weights.length);
    assert.deepEqual(speedscopeStacks(doc, prof), folded);
    const frames = new Set([...folded.keys()].flatMap((s) => s.split(";")));
    assert.equal(doc.shared.frames.length, frames.size);
  },

  "speedscope from .stacks: a profile per thread, samples in time order": () => {
    const out = join(dir, "s.json");
    jflameOk(["convert", PERF, "-o", out]);
    const doc = readSpeedscope(out);
    assert.deepEqual(doc.profiles.map((p) => p.name).sort(), [...perf.threads.keys()].sort());
    for (const prof of doc.profiles) {
      const t = perf.threads.get(prof.name);
      assert.equal(prof.unit, "nanoseconds");
      assert.equal(prof.samples.length, t.n, prof.name);
      assert.equal(prof.weights.reduce((a, b) => a + b, 0), t.w, prof.name);
      assert.equal(prof.endValue, t.w);
    }
    // all threads together are the folded stacks, weighted by period
    const all = new Map();
    for (const prof of doc.profiles)
      for (const [k, v] of speedscopeStacks(doc, prof)) all.set(k, (all.get(k) || 0) + v);
    assert.deepEqual(all, parseFolded(jflameOk(["collapse", "--all", PERF]).stdout));
  },

  "speedscope opens both files": async () => {
    const files = { "/f.json": join(dir, "f.json"), "/s.json": join(dir, "s.json"), "/f.pb.gz": join(dir, "f.pb.gz") };
    const types = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".json": "application/json",
      ".wasm": "application/wasm", ".png": "image/png", ".woff2": "font/woff2" };
    const release = new Set(readdirSync(SPEEDSCOPE));
    const server = createServer((req, res) => {
      const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
      const file = files[path] || (release.has(path.slice(1)) ? join(SPEEDSCOPE, path.slice(1)) : null);
      if (!file) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { "content-type": types[extname(file)] || "application/octet-stream" });
      res.end(readFileSync(file));
    });
    await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
    const base = `http://127.0.0.1:${server.address().port}`;
    const { browser, newPage } = await launch();
    try {
      for (const [file, title] of [["/f.json", "jvm.folded"], ["/s.json", "sys-pid.perf"], ["/f.pb.gz", "f.pb.gz"]]) {
        const page = await newPage();
        await page.goto(`${base}/index.html#profileURL=${encodeURIComponent(base + file)}`);
        // speedscope names the tab after what it loaded, and draws a flame chart
        await page.waitForFunction((t) => document.title.startsWith(t), title, { timeout: 20000 });
        await page.waitForSelector("canvas");
        const text = await page.evaluate(() => document.body.innerText);
        assert.doesNotMatch(text, /Something went wrong|Unrecognized format/i, file);
        assert.deepEqual(page.jflameErrors, [], `${file}: page errors`);
        await page.close();
      }
    } finally {
      await browser.close();
      server.close();
    }
  },
});
