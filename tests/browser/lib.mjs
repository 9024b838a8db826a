// lib.mjs - shared by jflame's Node.js tests: headless Chromium through
// playwright-core, jflame's binary, temporary files and plain assertions.
import { chromium } from "playwright-core";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import assert from "node:assert/strict";

export { assert };

export const JFLAME = process.env.JFLAME_BIN || "jflame";
export const DATA = process.env.JFLAME_TEST_DATA || new URL("../data", import.meta.url).pathname;
export const CHROMIUM = process.env.JFLAME_CHROMIUM || "/usr/bin/chromium";
export const CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
  "--disable-background-networking"];

/** Runs jflame with args; returns {status, stdout, stderr}. */
export function jflame(args, opts = {}) {
  const r = spawnSync(JFLAME, args, { encoding: "utf8", maxBuffer: 1 << 28, ...opts });
  if (r.error) throw r.error;
  return r;
}

/** Like jflame() but fails the test on a nonzero exit. */
export function jflameOk(args, opts = {}) {
  const r = jflame(args, opts);
  assert.equal(r.status, 0, `jflame ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return r;
}

export function tmpDir() {
  const d = mkdtempSync(join(process.env.JFLAME_TEST_TMP || tmpdir(), "jflame-browser-"));
  process.on("exit", () => rmSync(d, { recursive: true, force: true }));
  return d;
}

/** Starts Debian's Chromium headless; pages record console errors and
 *  uncaught exceptions in page.jflameErrors, and requests other than file:
 *  and data: in page.jflameNetwork (a self-contained page makes none). */
const browsers = [];
export async function launch() {
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
  browsers.push(browser);
  const newPage = async (viewport = { width: 1400, height: 1000 }) => {
    const page = await browser.newPage({ viewport });
    page.jflameErrors = [];
    page.jflameNetwork = [];
    page.on("pageerror", (e) => page.jflameErrors.push(String(e)));
    page.on("console", (m) => { if (m.type() === "error") page.jflameErrors.push(m.text()); });
    page.on("request", (req) => {
      const u = req.url();
      if (!u.startsWith("file:") && !u.startsWith("data:") && !u.startsWith("about:")) page.jflameNetwork.push(u);
    });
    return page;
  };
  return { browser, newPage };
}

/** Runs the named async test functions in order; prints one line each, closes
 *  the browsers launch() started, exits 1 on any failure. */
export async function run(tests) {
  let failed = 0;
  for (const [name, fn] of Object.entries(tests)) {
    const t0 = Date.now();
    try {
      await fn();
      console.log(`ok   ${name} (${Date.now() - t0} ms)`);
    } catch (e) {
      failed++;
      console.log(`FAIL ${name}: ${e && e.stack ? e.stack : e}`);
    }
  }
  for (const b of browsers) await b.close().catch(() => {});
  console.log(failed ? `${failed} failed` : "all passed");
  process.exit(failed ? 1 : 0);
}
