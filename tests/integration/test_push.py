# test_push.py - `jflame record --push`: a real HTTP server on 127.0.0.1
# (Python's http.server in a thread) receives every window as Pyroscope's
# /ingest would; each pprof is decoded by protoc and checked (series per JVM,
# labels, time ranges, samples adding up to the recording's); a server that
# answers 500, hangs, or is not there does not slow the sampling and is
# retried or counted. Its request is compared field by field with one captured
# from Pyroscope's own @pyroscope/nodejs client (stored, and captured afresh).
# ctest: first JDK only (nothing here depends on the JDK)
import base64
import gzip
import json
import http.server
import os
import re
import shutil
import ssl
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.parse

import jvmtest
from jvmtest import Jvm, read_folded

JFLAME = os.environ.get("JFLAME_BIN", "")
WINDOW = re.compile(r"jflame: window (\d+) from \S+, ([\d.]+) s: (\d+) samples \((\d+) lost")
PUSHED = re.compile(r"jflame: pushed (\d+) of (\d+) profiles to Pyroscope \((\d+) failed, (\d+) dropped, "
                    r"(\d+) retries\)")
NAME = re.compile(r"^([^{}]+)\{(.*)\}$")


class Ingest(http.server.ThreadingHTTPServer):
    """Records each request answered 200; answers with `plan`'s statuses in
    turn (then 200), where a negative one hangs for that many seconds."""

    def __init__(self, plan=(), tls=None):
        self.requests, self.plan, self.lock = [], list(plan), threading.Lock()
        super().__init__(("127.0.0.1", 0), Handler)
        self.scheme = "http"
        if tls:  # (certificate, key): https
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(*tls)
            self.socket = ctx.wrap_socket(self.socket, server_side=True)
            self.scheme = "https"

    @property
    def url(self):
        return "%s://127.0.0.1:%d" % (self.scheme, self.server_address[1])


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        srv = self.server
        with srv.lock:
            step = srv.plan.pop(0) if srv.plan else 200
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if step < 0:  # too late: the client has given up on this one and tries again
            time.sleep(-step)
            step = 299
        if step == 200:
            with srv.lock:
                srv.requests.append((self.path, dict(self.headers), body))
        self.send_response(step)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


NODEJS_CAPTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "pyroscope",
                              "nodejs_request.json")


def header(headers, name):
    """A header's value, whatever its case on the wire."""
    return {k.lower(): v for k, v in headers.items()}.get(name.lower())


def profile_body(headers, body):
    """The request's profile: the whole body, gzip-compressed pprof, as
    Pyroscope's clients send it (application/octet-stream, not a form)."""
    assert header(headers, "Content-Type") == "application/octet-stream", headers
    assert body[:2] == b"\x1f\x8b", body[:16]
    return body


class PushTest(unittest.TestCase):
    def setUp(self):
        jvmtest.check_setup()
        jvmtest.require(os.access(JFLAME, os.X_OK), "jflame not built (JFLAME_BIN=%r)" % JFLAME)
        self.tmp = tempfile.mkdtemp(prefix="jflame-push-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def out(self, name):
        return os.path.join(self.tmp, name)

    def server(self, plan=(), tls=None):
        srv = Ingest(plan, tls)
        t = threading.Thread(target=srv.serve_forever, daemon=True)
        t.start()
        self.addCleanup(srv.server_close)
        self.addCleanup(srv.shutdown)
        return srv

    def jvm(self, flags=()):
        j = Jvm(["hot", "60000"], agent_opts="", jvm_flags=list(flags))
        self.addCleanup(j.cleanup)
        return j

    def record(self, *args, env=None, timeout=120):
        return jvmtest.record(args, timeout=timeout, env=env, cwd=self.tmp)

    def record_share(self, jvm, *args):
        """record(*args), and the share of a CPU the JVM got meanwhile by the
        kernel's count (utime + stime): on a loaded machine its hot thread gets
        less than a whole CPU, and a window's samples are measured against it."""
        def cpu():
            with open("/proc/%d/stat" % jvm.pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        c0, t0 = cpu(), time.monotonic()
        r = self.record(*args)
        return r, (cpu() - c0) / (time.monotonic() - t0)

    def decode(self, srv):
        """Each request as (query dict, headers, series name, labels dict, protoc-decoded profile)."""
        out = []
        for i, (path, headers, body) in enumerate(srv.requests):
            u = urllib.parse.urlparse(path)
            self.assertEqual(u.path, "/ingest")
            q = dict(urllib.parse.parse_qsl(u.query))
            m = NAME.match(q["name"])
            self.assertIsNotNone(m, q["name"])
            labels = dict(kv.split("=", 1) for kv in m.group(2).split(",") if kv)
            pb = self.out("req%d.pb.gz" % i)
            data = profile_body(headers, body)
            gzip.decompress(data)  # gzip-compressed, as the clients send it
            with open(pb, "wb") as f:
                f.write(data)
            out.append((q, headers, m.group(1), labels, jvmtest.protoc_pprof(pb)))
        return out

    def test_one_series_per_jvm_with_labels_and_windows(self):
        srv = self.server()
        a = self.jvm(["-Dpyroscope.application.name=orders"])
        b = self.jvm()
        r = self.record("-p", "%d,%d" % (a.pid, b.pid), "--window", "2", "-d", "6.5", "--push", srv.url,
                        "--label", "env=ci", "-o", self.out("w-%n.folded"), env={"JFLAME_PUSH_TOKEN": "s3cr3t-t0ken"})
        self.assertNotIn("s3cr3t-t0ken", r.stderr)
        ws = WINDOW.findall(r.stderr)
        self.assertEqual(len(ws), 4, r.stderr)
        pushed = PUSHED.search(r.stderr)
        self.assertIsNotNone(pushed, r.stderr)
        self.assertEqual(pushed.group(1), pushed.group(2))
        self.assertEqual(int(pushed.group(1)), 8)  # 4 windows x 2 JVMs
        reqs = self.decode(srv)
        self.assertEqual(len(reqs), 8)
        by_app = {}
        for q, headers, app, labels, prof in reqs:
            self.assertEqual(headers.get("Authorization"), "Bearer s3cr3t-t0ken")
            self.assertEqual(q["format"], "pprof")
            self.assertEqual(q["sampleRate"], "99")
            self.assertEqual(labels["env"], "ci")
            self.assertEqual(labels["service_name"], app)
            self.assertEqual(labels["process"], "java")
            self.assertIn("host", labels)
            strs = prof["string_table"]
            self.assertEqual([strs[t["type"][0]] for t in prof["sample_type"]], ["samples", "cpu"])
            by_app.setdefault(app, []).append((int(q["from"]), int(q["until"]), labels["pid"], prof))
        self.assertEqual(set(by_app), {"orders", "jflame.examples.Workload"})
        self.assertEqual({x[2] for x in by_app["orders"]}, {str(a.pid)})
        self.assertEqual({x[2] for x in by_app["jflame.examples.Workload"]}, {str(b.pid)})
        total_pushed = 0
        for app, xs in by_app.items():
            xs.sort(key=lambda x: x[0])
            for x, y in zip(xs, xs[1:]):
                self.assertEqual(x[1], y[0], "windows of %s do not meet: %s" % (app, xs))
            for _, _, _, prof in xs:
                strs = prof["string_table"]
                fns = {f["id"][0]: strs[f["name"][0]] for f in prof["function"]}
                self.assertNotIn("java", {n for n in fns.values() if n.startswith("[")})
                total_pushed += sum(s["value"][0] for s in prof.get("sample", []))
                # a JVM's series has Java frames named, its root frames are labels now
                self.assertTrue(any(n.startswith("jflame/examples/") for n in fns.values()), app)
                self.assertFalse(any(re.match(r"^\[\d+\] ", n) for n in fns.values()))
        folded = sum(c for i in range(1, 5) for _, c in read_folded(self.out("w-%d.folded" % i)))
        self.assertEqual(total_pushed, folded)

    def test_request_matches_the_pyroscope_nodejs_client(self):
        """Field by field against a request captured from @pyroscope/nodejs
        (tests/browser/pyroscope_capture.mjs wrote tests/data/pyroscope/
        nodejs_request.json): the same method, path, query keys in the same
        order and units, content type, auth and tenant headers, and a gzip
        pprof body whose time lies in the window."""
        with open(NODEJS_CAPTURE) as f:
            capture = json.load(f)
        self.assertEqual(capture["client"]["package"], "@pyroscope/nodejs")
        # a fresh capture from the client installed (scripts/deps.sh: npm ci in
        # tests/browser) must still have the stored one's shape
        browser = os.path.join(jvmtest.SOURCE_DIR, "tests", "browser")
        jvmtest.require(shutil.which("node") and os.path.isdir(
            os.path.join(browser, "node_modules", "@pyroscope", "nodejs")),
            "node and @pyroscope/nodejs (scripts/deps.sh runs npm ci in tests/browser)")
        # the client's first flush sends its CPU and its heap profile, in either order
        live = subprocess.run(["node", "pyroscope_capture.mjs", "--requests", "2"], cwd=browser,
                              capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL)
        self.assertEqual(live.returncode, 0, live.stderr)
        live = json.loads(live.stdout)
        self.assertEqual(live["client"]["version"], capture["client"]["version"])
        cpu = [r for r in live["requests"] if "sampleRate" in r["query_object"]]
        self.assertTrue(cpu, [r["raw_query"] for r in live["requests"]])
        lq, cq = cpu[0], next(r for r in capture["requests"] if "sampleRate" in r["query_object"])
        self.assertEqual([k for k, _ in lq["query"]], [k for k, _ in cq["query"]])
        self.assertEqual(lq["headers"]["content-type"], cq["headers"]["content-type"])
        self.assertEqual(lq["body"]["kind"], cq["body"]["kind"])
        capture["requests"].insert(0, lq)
        # the client's CPU profile request (the one with a sample rate; the other is its heap)
        ref = next(r for r in capture["requests"] if "sampleRate" in r["query_object"])
        srv = self.server()
        a = self.jvm()
        self.record("-p", str(a.pid), "--window", "2", "-d", "2.5", "--push", srv.url, "--app", "jflame.capture",
                    "--label", "region=test", "--label", "pod=p1", "--push-tenant", "capture-tenant",
                    env={"JFLAME_PUSH_BASIC_AUTH": "capture-user:capture-pass"})
        self.assertGreaterEqual(len(srv.requests), 1)
        path, headers, body = srv.requests[0]
        u = urllib.parse.urlparse(path)
        # method and path (do_POST is the only handler; the capture says POST too)
        self.assertEqual(ref["method"], "POST")
        self.assertEqual(u.path, ref["path"])
        # the query: the same keys in the same order
        q = urllib.parse.parse_qsl(u.query)
        self.assertEqual([k for k, _ in q], [k for k, _ in ref["query"]])
        q = dict(q)
        self.assertEqual(q["format"], ref["query_object"]["format"])
        # from/until in unix seconds, until - from the window's length
        for key in ("from", "until"):
            self.assertEqual(len(q[key]), len(ref["query_object"][key]), key)
        self.assertEqual(ref["timing"]["from_until_unit"], "unix seconds")
        self.assertAlmostEqual(int(q["until"]) - int(q["from"]), 2, delta=1)
        self.assertTrue(abs(int(q["from"]) - time.time()) < 60)
        self.assertTrue(q["sampleRate"].isdigit() and ref["query_object"]["sampleRate"].isdigit())
        # the series name: app{k=v,...} with the labels given
        m, rm = NAME.match(q["name"]), NAME.match(ref["query_object"]["name"])
        self.assertIsNotNone(m, q["name"])
        self.assertIsNotNone(rm)
        self.assertEqual(m.group(1), ref["name_parsed"]["app"])
        labels = dict(kv.split("=", 1) for kv in m.group(2).split(","))
        for k, v in ref["name_parsed"]["labels"]:
            if k in ("region", "pod"):
                self.assertEqual(labels.get(k), v, k)
        # headers: content type, basic auth as user:password in base64, the tenant
        self.assertEqual(header(headers, "Content-Type"), ref["headers"]["content-type"])
        self.assertIsNone(header(headers, "Content-Encoding"))
        self.assertIsNone(ref["headers"].get("content-encoding"))
        scheme, _, cred = ref["headers"]["authorization"].partition(" ")
        self.assertEqual(base64.b64decode(cred).decode(), "capture-user:capture-pass")
        self.assertEqual(header(headers, "Authorization"), scheme + " " + cred)
        self.assertEqual(header(headers, "X-Scope-OrgID"), ref["headers"]["x-scope-orgid"])
        # the body: a whole gzip-compressed pprof, its time inside the window
        self.assertEqual(ref["body"]["kind"], "raw")
        self.assertTrue(ref["body"]["pprof"]["gzip"])
        self.assertEqual(int(header(headers, "Content-Length")), len(body))
        pb = self.out("req.pb.gz")
        with open(pb, "wb") as f:
            f.write(profile_body(headers, body))
        prof = jvmtest.protoc_pprof(pb)
        t = int(prof["time_nanos"][0]) / 1e9
        self.assertTrue(int(q["from"]) <= t < int(q["until"]) + 1, (t, q))
        self.assertGreater(int(prof["duration_nanos"][0]), 0)
        self.assertIn("period_type", prof)
        self.assertGreater(int(prof["period"][0]), 0)
        self.assertTrue(prof.get("sample"))

    def test_https_with_its_ca_and_not_without(self):
        """--push-ca trusts a server's certificate; without it the same server
        is refused (one warning, counted as failed, never retried forever)."""
        openssl = shutil.which("openssl")
        jvmtest.require(openssl, "openssl (Debian's openssl package)")
        cert, key = self.out("cert.pem"), self.out("key.pem")
        r = subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                            "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        srv = self.server(tls=(cert, key))
        self.assertTrue(srv.url.startswith("https://"))
        a = self.jvm()
        r = self.record("-p", str(a.pid), "--window", "2", "-d", "4.5", "--push", srv.url, "--push-ca", cert,
                        env={"JFLAME_PUSH_TOKEN": "tls-s3cr3t"})
        pushed = PUSHED.search(r.stderr)
        self.assertIsNotNone(pushed, r.stderr)
        self.assertEqual((int(pushed.group(1)), int(pushed.group(2))), (3, 3), r.stderr)
        self.assertEqual(len(srv.requests), 3)
        self.assertEqual(header(srv.requests[0][1], "Authorization"), "Bearer tls-s3cr3t")
        self.assertNotIn("tls-s3cr3t", r.stderr)
        # the same server, its certificate not trusted: refused, said once
        n = len(srv.requests)
        r = self.record("-p", str(a.pid), "--window", "2", "-d", "2.5", "--push", srv.url, "--push-timeout", "2")
        pushed = PUSHED.search(r.stderr)
        self.assertIsNotNone(pushed, r.stderr)
        self.assertEqual(int(pushed.group(1)), 0, r.stderr)
        self.assertEqual(len(srv.requests), n)
        self.assertEqual(len(re.findall("cannot send a window's profile to https://127.0.0.1", r.stderr)), 1, r.stderr)
        self.assertIn("--push-ca FILE", r.stderr)

    def test_failing_and_hanging_server_is_retried(self):
        srv = self.server(plan=[500, 503, -3])  # two errors, then an answer after 3 s
        a = self.jvm()
        r, share = self.record_share(a, "-p", str(a.pid), "--window", "2", "-d", "6.5", "--push", srv.url,
                                     "--push-timeout", "1")
        pushed = PUSHED.search(r.stderr)
        self.assertIsNotNone(pushed, r.stderr)
        sent, total, failed, dropped, retries = (int(pushed.group(i)) for i in range(1, 6))
        self.assertEqual(total, 4)
        self.assertEqual(sent, 4, r.stderr)
        self.assertGreaterEqual(retries, 3)
        self.assertEqual(len(srv.requests), 4)
        # with --push and no -o, no file is written (no jflame.svg in the working directory)
        self.assertEqual(os.listdir(self.tmp), [])
        # sampling went on meanwhile: full windows as full as the JVM's CPU time
        # makes them (99 Hz of the CPU share the kernel counted for it), none lost
        ws = WINDOW.findall(r.stderr)
        self.assertTrue(all(int(n) > 0.6 * 2 * 99 * share and lost == "0" for _, secs, n, lost in ws[:3]),
                        (ws, share))

    def test_dead_server_never_slows_recording(self):
        a = self.jvm()
        start = time.monotonic()
        r, share = self.record_share(a, "-p", str(a.pid), "--window", "1", "-d", "4.5", "--push",
                                     "http://127.0.0.1:9", "-o", self.out("w-%n.folded"))
        self.assertLess(time.monotonic() - start, 4.5 + 12)  # the pushes' last 10 s at most
        ws = WINDOW.findall(r.stderr)
        self.assertEqual(len(ws), 5, r.stderr)
        # each full window as full as the JVM's CPU share makes it (a busy machine
        # gives its hot thread less than a CPU), none lost
        self.assertTrue(all(int(n) > 0.6 * 99 * share and lost == "0" for _, secs, n, lost in ws[:4]), (ws, share))
        pushed = PUSHED.search(r.stderr)
        self.assertEqual(int(pushed.group(1)), 0)
        self.assertEqual(len(re.findall("cannot send a window's profile to http://127.0.0.1:9", r.stderr)), 1)
        self.assertEqual(len(os.listdir(self.tmp)), 5)

    def test_bad_push_options(self):
        for args, expect in (
            (["--push", "ftp://x"], "--push takes the server's URL"),
            (["--push", "not a url"], "--push takes the server's URL"),
            (["--label", "env=ci"], "go with --push URL"),
            (["--push", "http://127.0.0.1:9", "--label", "novalue"], "--label takes KEY=VALUE"),
            (["--push", "http://127.0.0.1:9", "--push-basic-auth", "secretwithoutcolon"], "USER:PASSWORD"),
            (["--push", "http://127.0.0.1:9", "--push-timeout", "0"], "--push-timeout takes"),
        ):
            r = jvmtest.record(["-p", os.getpid(), "-d", "1"] + args, timeout=60, check=False, cwd=self.tmp)
            self.assertEqual(os.listdir(self.tmp), [], "%s wrote something" % args)
            self.assertNotEqual(r.returncode, 0, args)
            lines = r.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, r.stderr)
            self.assertIn(expect, lines[0])
            self.assertNotIn("secretwithoutcolon", r.stderr)


if __name__ == "__main__":
    jvmtest.main()
