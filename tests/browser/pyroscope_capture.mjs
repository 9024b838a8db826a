// pyroscope_capture.mjs - what Grafana Pyroscope's own Node.js client
// (@pyroscope/nodejs, a devDependency here) sends to a server's /ingest:
// starts an HTTP listener on 127.0.0.1 (a free port), points the client at it,
// burns some CPU, captures the first ingest requests whole (method, path, query,
// headers in wire order, body) and prints one JSON document describing them to
// stdout: body bytes left out, but their sizes and a summary of the decoded
// pprof (or of each multipart part) kept. Not a test: it makes the fixture
// tests/data/pyroscope/nodejs_request.json, for jflame's own pushes to copy.
//
//   cd tests/browser && node pyroscope_capture.mjs > ../data/pyroscope/nodejs_request.json
//
// Options (defaults make the fixture):
//   --requests N   how many ingest requests to capture (4: the first two flush
//                  rounds, each a wall/CPU profile and a heap profile)
//   --flush-ms N   the client's flushIntervalMs (3000)
//   --status N     the HTTP status the listener answers (200); with an error
//                  status the output shows whether the client retries
//   --auth KIND    basic (default: basicAuthUser/Password and tenantID set),
//                  token (authToken and tenantID), none
//   --no-cpu       leave wall.collectCpuTime at the client's default (false)
// Exits 0 with the JSON, 1 on an error, 2 if the requests did not come in 60 s.
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { gunzipSync } from "node:zlib";
import { Profile } from "pprof-format";

const HARD_TIMEOUT_MS = 60_000;

function parseArgs(argv) {
  const o = { requests: 4, flushMs: 3000, status: 200, auth: "basic", cpu: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i], next = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    const int = (v) => {
      if (!/^\d+$/.test(v)) throw new Error(`${a}: not a whole number: ${v}`);
      return Number(v);
    };
    if (a === "--requests") o.requests = Math.max(1, int(next()));
    else if (a === "--flush-ms") o.flushMs = Math.max(100, int(next()));
    else if (a === "--status") o.status = int(next());
    else if (a === "--auth") {
      o.auth = next();
      if (!["basic", "token", "none"].includes(o.auth)) throw new Error(`--auth: basic, token or none, not ${o.auth}`);
    } else if (a === "--no-cpu") o.cpu = false;
    else throw new Error(`unknown argument: ${a}`);
  }
  return o;
}

let opts;
try {
  opts = parseArgs(process.argv.slice(2));
} catch (e) {
  console.error(`pyroscope_capture: ${e.message}`);
  process.exit(1);
}

const captured = [];
const t0 = Date.now();
let done = false;

const hardTimeout = setTimeout(() => {
  console.error(`pyroscope_capture: timed out after ${HARD_TIMEOUT_MS / 1000} s with ` +
    `${captured.length} of ${opts.requests} ingest requests captured ` +
    `(is @pyroscope/nodejs installed: npm ci in tests/browser?)`);
  process.exit(2);
}, HARD_TIMEOUT_MS);

// ---- decoding -----------------------------------------------------------------

/** app{k=v,...} -> {app, labels} as Pyroscope's labelset.Parse reads it */
function parseName(name) {
  const m = /^([^{]*)(?:\{(.*)\})?$/.exec(name || "");
  if (!m) return { app: name, labels: null };
  const labels = [];
  if (m[2]) {
    for (const kv of m[2].split(",")) {
      const i = kv.indexOf("=");
      labels.push(i < 0 ? [kv, null] : [kv.slice(0, i), kv.slice(i + 1)]);
    }
  }
  return { app: m[1], labels };
}

function parseMultipart(buf, contentType) {
  const m = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  if (!m) return { error: "multipart content-type without a boundary" };
  const boundary = m[1] || m[2];
  const delim = Buffer.from(`--${boundary}`);
  const parts = [];
  let pos = buf.indexOf(delim);
  while (pos >= 0) {
    pos += delim.length;
    if (buf[pos] === 0x2d && buf[pos + 1] === 0x2d) break; // closing --boundary--
    if (buf[pos] === 0x0d && buf[pos + 1] === 0x0a) pos += 2;
    const headEnd = buf.indexOf("\r\n\r\n", pos);
    if (headEnd < 0) break;
    const headers = buf.subarray(pos, headEnd).toString("latin1").split("\r\n").map((l) => {
      const i = l.indexOf(":");
      return [l.slice(0, i).trim(), l.slice(i + 1).trim()];
    });
    const next = buf.indexOf(delim, headEnd + 4);
    const end = next < 0 ? buf.length : next - 2; // the CRLF before the delimiter
    const data = buf.subarray(headEnd + 4, end);
    const disp = (headers.find(([k]) => k.toLowerCase() === "content-disposition") || [])[1] || "";
    const ct = (headers.find(([k]) => k.toLowerCase() === "content-type") || [])[1] || null;
    parts.push({
      headers,
      name: (/\bname="([^"]*)"/.exec(disp) || [])[1] ?? null,
      filename: (/\bfilename="([^"]*)"/.exec(disp) || [])[1] ?? null,
      content_type: ct,
      size: data.length,
      data,
    });
    pos = next;
  }
  return { boundary, parts };
}

/** A summary of a (possibly gzipped) pprof body: what a server reads from it. */
function summarizePprof(buf) {
  const out = { size: buf.length, gzip: buf[0] === 0x1f && buf[1] === 0x8b };
  let raw = buf;
  try {
    if (out.gzip) raw = gunzipSync(buf);
  } catch (e) {
    return { ...out, error: `gunzip: ${e.message}` };
  }
  out.uncompressed_size = raw.length;
  let p;
  try {
    p = Profile.decode(raw);
  } catch (e) {
    return { ...out, is_pprof: false, error: `pprof decode: ${e.message}` };
  }
  out.is_pprof = true;
  const str = (i) => p.stringTable.strings[Number(i)];
  const vt = (v) => (v ? { type: str(v.type), unit: str(v.unit) } : null);
  out.sample_types = p.sampleType.map(vt);
  out.default_sample_type = str(p.defaultSampleType) || null;
  out.period_type = vt(p.periodType);
  out.period = Number(p.period);
  out.time_nanos = String(p.timeNanos);
  out.time_iso = Number(p.timeNanos) ? new Date(Number(BigInt(p.timeNanos) / 1000000n)).toISOString() : null;
  out.duration_nanos = String(p.durationNanos);
  out.counts = {
    samples: p.sample.length, locations: p.location.length, functions: p.function.length,
    mappings: p.mapping.length, strings: p.stringTable.strings.length,
  };
  out.value_totals = p.sampleType.map((_, i) => p.sample.reduce((s, x) => s + Number(x.value[i] || 0), 0));
  const labelKeys = new Map();
  let labelled = 0;
  for (const s of p.sample) {
    if (s.label.length) labelled++;
    for (const l of s.label) {
      const k = str(l.key);
      const e = labelKeys.get(k) || { key: k, kinds: new Set(), values: new Set() };
      if (Number(l.str)) { e.kinds.add("str"); e.values.add(str(l.str)); } else { e.kinds.add("num"); e.values.add(String(l.num)); }
      if (Number(l.numUnit)) e.kinds.add(`unit:${str(l.numUnit)}`);
      labelKeys.set(k, e);
    }
  }
  out.labels = {
    present: labelled > 0,
    samples_with_labels: labelled,
    keys: [...labelKeys.values()].map((e) => ({
      key: e.key, kinds: [...e.kinds], distinct_values: e.values.size, examples: [...e.values].slice(0, 3),
    })),
  };
  out.comments = p.comment.map(str);
  out.drop_frames = str(p.dropFrames) || null;
  out.keep_frames = str(p.keepFrames) || null;
  // frame naming: the leaf functions that carry the most of the first value
  const fns = new Map(p.function.map((f) => [Number(f.id), f]));
  const locs = new Map(p.location.map((l) => [Number(l.id), l]));
  const leaves = new Map();
  for (const s of p.sample) {
    const loc = locs.get(Number(s.locationId[0]));
    const line = loc && loc.line[0];
    const f = line && fns.get(Number(line.functionId));
    const name = f ? str(f.name) : "(none)";
    leaves.set(name, (leaves.get(name) || 0) + Number(s.value[0] || 0));
  }
  out.top_leaf_functions = [...leaves.entries()].sort((a, b) => b[1] - a[1]).slice(0, 5)
    .map(([name, value]) => ({ name, value }));
  const f0 = p.function.find((f) => /burn/.test(str(f.name))) || p.function[0];
  out.example_function = f0 ? {
    name: str(f0.name), system_name: str(f0.systemName) || null,
    filename: str(f0.filename) || null, start_line: Number(f0.startLine),
  } : null;
  out.mapping_example = p.mapping[0] ? {
    filename: str(p.mapping[0].filename) || null, build_id: str(p.mapping[0].buildId) || null,
    has_functions: !!p.mapping[0].hasFunctions,
  } : null;
  return out;
}

function describe(rec) {
  const url = new URL(rec.url, "http://capture.invalid");
  const query = [...url.searchParams.entries()];
  const q = Object.fromEntries(query);
  const ct = rec.headers["content-type"] || "";
  const body = { size: rec.body.length, content_type: ct || null };
  if (/^multipart\/form-data/i.test(ct)) {
    const mp = parseMultipart(rec.body, ct);
    body.kind = "multipart/form-data";
    body.boundary = mp.boundary;
    body.parts = (mp.parts || []).map(({ data, ...part }) => ({
      ...part,
      ...(/^(profile|prev_profile)$/.test(part.name) ? { pprof: summarizePprof(data) }
        : { text: data.length < 4096 ? data.toString("utf8") : null }),
    }));
    if (mp.error) body.error = mp.error;
  } else {
    body.kind = "raw";
    body.pprof = summarizePprof(rec.body);
  }
  const pprof = body.pprof || (body.parts || []).find((x) => x.name === "profile")?.pprof;
  const from = Number(q.from), until = Number(q.until);
  return {
    index: rec.index,
    received_ms_after_client_start: rec.at - t0,
    received_at_unix_ms: rec.at,
    method: rec.method,
    http_version: rec.httpVersion,
    path: url.pathname,
    raw_query: url.search.slice(1),
    query,
    query_object: q,
    name_parsed: parseName(q.name),
    timing: {
      from_until_unit: /^\d{10}$/.test(q.from || "") ? "unix seconds" :
        /^\d{19}$/.test(q.from || "") ? "unix nanoseconds" : "other",
      until_minus_from: until - from,
      received_minus_until_s: rec.at / 1000 - until,
      pprof_time_minus_from_s: pprof && pprof.time_nanos ? Number(BigInt(pprof.time_nanos) / 1000000n) / 1000 - from : null,
      pprof_duration_s: pprof ? Number(pprof.duration_nanos) / 1e9 : null,
    },
    headers_wire_order: rec.rawHeaders,
    headers: rec.headers,
    body,
    response_sent: { status: opts.status },
  };
}

// ---- the listener -------------------------------------------------------------

const others = [];
const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const rawHeaders = [];
    for (let i = 0; i < req.rawHeaders.length; i += 2) rawHeaders.push([req.rawHeaders[i], req.rawHeaders[i + 1]]);
    const rec = {
      index: captured.length + others.length, at: Date.now(), method: req.method, url: req.url,
      httpVersion: req.httpVersion, rawHeaders, headers: { ...req.headers }, body: Buffer.concat(chunks),
    };
    const isIngest = req.method === "POST" && new URL(req.url, "http://x").pathname.endsWith("/ingest");
    if (isIngest) {
      res.writeHead(opts.status, { "content-type": "text/plain" });
      res.end(opts.status >= 200 && opts.status < 300 ? "" : "pyroscope_capture: rejected on purpose\n");
      if (!done) captured.push(rec);
    } else {
      res.writeHead(404).end();
      if (!done) others.push({ method: rec.method, url: rec.url, at_ms: rec.at - t0 });
    }
    if (!done && captured.length >= opts.requests) finish();
  });
});
server.on("error", (e) => {
  console.error(`pyroscope_capture: listener: ${e.message}`);
  process.exit(1);
});

// ---- CPU to profile -------------------------------------------------------------

function burnFib(n) { return n < 2 ? n : burnFib(n - 1) + burnFib(n - 2); }
function burnStrings(n) {
  let h = 0;
  for (let i = 0; i < n; i++) h = (h * 31 + String(i * 7).length + (h >>> 7)) | 0;
  return h;
}
let sink = 0;
function burnSlice(Pyroscope) {
  // ~30 ms of work a turn, then the event loop runs: the client's timers and
  // its upload (fetch) need it
  const end = Date.now() + 30;
  while (Date.now() < end) {
    sink += burnFib(18);
    // some samples under a dynamic label, to see how labels come out in pprof
    Pyroscope.wrapWithLabels({ job: "burn_strings" }, () => { sink += burnStrings(20000); });
  }
  if (!done) setImmediate(() => burnSlice(Pyroscope));
}

// ---- the run --------------------------------------------------------------------

let config;
function finish() {
  done = true;
  clearTimeout(hardTimeout);
  const requests = captured.map(describe);
  // a re-sent window would repeat a (name, from, until, sample types) of an earlier request
  const keyOf = (r) => JSON.stringify([r.query_object.name, r.query_object.from, r.query_object.until,
    (r.body.pprof || r.body.parts?.find((x) => x.name === "profile")?.pprof || {}).sample_types]);
  const keys = requests.map(keyOf);
  const doc = {
    tool: "tests/browser/pyroscope_capture.mjs",
    client: { package: "@pyroscope/nodejs", version: clientVersion, node: process.version, platform: `${process.platform}-${process.arch}` },
    client_config: { ...config, serverAddress: "http://127.0.0.1:<port>", ...(config.basicAuthPassword ? { basicAuthPassword: "<set>" } : {}), ...(config.authToken ? { authToken: "<set>" } : {}) },
    credentials_used: { basicAuthUser: config.basicAuthUser ?? null, basicAuthPassword: config.basicAuthPassword ?? null, authToken: config.authToken ?? null, tenantID: config.tenantID ?? null },
    listener_status: opts.status,
    requests_captured: requests.length,
    resent_windows: keys.filter((k, i) => keys.indexOf(k) !== i).length,
    requests,
    other_requests: others,
  };
  process.stdout.write(JSON.stringify(doc, null, 2) + "\n", () => {
    server.close();
    process.exit(0);
  });
}

let clientVersion = null;
server.listen(0, "127.0.0.1", async () => {
  const { port } = server.address();
  try {
    // only this run's config counts: PYROSCOPE_* variables would override it
    // (PYROSCOPE_ADHOC_SERVER_ADDRESS even overrides serverAddress)
    for (const k of Object.keys(process.env)) if (k.startsWith("PYROSCOPE_")) delete process.env[k];
    const mod = await import("@pyroscope/nodejs");
    const Pyroscope = mod.default || mod;
    // its package.json is not among the package's exports: read the file
    clientVersion = JSON.parse(readFileSync(new URL("./node_modules/@pyroscope/nodejs/package.json",
      import.meta.url), "utf8")).version;
    config = {
      serverAddress: `http://127.0.0.1:${port}`,
      appName: "jflame.capture",
      tags: { region: "test", pod: "p1" },
      flushIntervalMs: opts.flushMs,
      ...(opts.cpu ? { wall: { collectCpuTime: true } } : {}),
      ...(opts.auth === "basic" ? { basicAuthUser: "capture-user", basicAuthPassword: "capture-pass", tenantID: "capture-tenant" } : {}),
      ...(opts.auth === "token" ? { authToken: "capture-token", tenantID: "capture-tenant" } : {}),
    };
    Pyroscope.init(config);
    Pyroscope.start(); // what the client's docs say to call: wall (+CPU time) and heap
    burnSlice(Pyroscope);
  } catch (e) {
    console.error(`pyroscope_capture: starting the client failed: ${e.stack || e}`);
    process.exit(1);
  }
});
