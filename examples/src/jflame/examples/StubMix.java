/* StubMix.java - a thread per family of HotSpot's generated stubs and intrinsics
 * (TLS with AES-GCM, digests, checksums, Base64, RSA, copies, fills, compares,
 * math), each named stub-<family>, for unwinding out of stubs (#34). */
package jflame.examples;

import java.io.File;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.math.BigInteger;
import java.net.InetAddress;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.Random;
import java.util.zip.Adler32;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

public final class StubMix {
    static final String USAGE = "StubMix [--seconds N] [--families all|a,b,...]";
    static final String[] FAMILIES = { "tls", "sha256", "sha512", "md5", "crc32", "crc32c", "adler32", "base64",
        "rsa", "arraycopy", "fill", "mismatch", "math" };

    static volatile long sink;
    static volatile long rounds;

    public static void main(String[] args) throws Exception {
        Example ex = new Example(USAGE, args, "seconds", "families");
        int seconds = ex.intOption("seconds", 30, 1, 86_400);
        String fam = ex.option("families", "all");
        java.util.List<String> want = fam.equals("all") ? Arrays.asList(FAMILIES) : Arrays.asList(fam.split(","));
        for (String f : want) {
            if (!Arrays.asList(FAMILIES).contains(f)) {
                ex.fail("--families: no family '" + f + "' (" + String.join(",", FAMILIES) + ")");
            }
        }
        SSLContext tls = want.contains("tls") ? tlsContext() : null;
        for (String f : want) {
            ex.start("stub-" + f, () -> {
                try {
                    loop(ex, f, tls);
                } catch (Exception e) {
                    if (!ex.stopping()) {
                        throw new RuntimeException(e);
                    }
                }
            });
        }
        ex.run(seconds, 1000, () -> rounds, () -> Example.say("rounds " + rounds));
    }

    static void loop(Example ex, String family, SSLContext tls) throws Exception {
        byte[] data = new byte[16 * 1024];
        new Random(42).nextBytes(data);
        if (family.equals("tls")) {
            tlsLoop(ex, tls, data);
            return;
        }
        MessageDigest md = family.startsWith("sha") || family.equals("md5")
                ? MessageDigest.getInstance(family.equals("sha256") ? "SHA-256" : family.equals("sha512") ? "SHA-512" : "MD5")
                : null;
        BigInteger base = new BigInteger(2048, new Random(1)), exp = new BigInteger(2048, new Random(2)),
                mod = new BigInteger(2048, new Random(3)).setBit(0);
        long[] big = new long[1 << 16], other = new long[1 << 16];
        byte[] b1 = data.clone(), b2 = data.clone();
        while (!ex.stopping()) {
            switch (family) {
                case "sha256":
                case "sha512":
                case "md5":
                    md.update(data);
                    sink += md.digest()[0];
                    break;
                case "crc32": {
                    CRC32 c = new CRC32();
                    c.update(data, 0, data.length);
                    sink += c.getValue();
                    break;
                }
                case "crc32c": {
                    CRC32C c = new CRC32C();
                    c.update(data, 0, data.length);
                    sink += c.getValue();
                    break;
                }
                case "adler32": {
                    Adler32 c = new Adler32();
                    c.update(data, 0, data.length);
                    sink += c.getValue();
                    break;
                }
                case "base64": {
                    byte[] enc = Base64.getEncoder().encode(data);
                    sink += Base64.getDecoder().decode(enc).length;
                    break;
                }
                case "rsa":
                    sink += base.modPow(exp, mod).bitLength();
                    break;
                case "arraycopy":
                    System.arraycopy(big, 0, other, 0, big.length);
                    System.arraycopy(other, 1, big, 0, big.length - 1);
                    sink += big[7];
                    break;
                case "fill":
                    Arrays.fill(big, sink);
                    Arrays.fill(b1, (byte) sink);
                    sink += big[3] + b1[5];
                    break;
                case "mismatch":
                    b2[data.length - 1] ^= 1;
                    sink += Arrays.mismatch(data, b2) + (Arrays.equals(data, b1) ? 1 : 0);
                    break;
                case "math": {
                    double x = 0;
                    for (int i = 1; i < 4096; i++) {
                        x += Math.log(i) + Math.sin(i) + Math.exp(-i * 1e-3);
                    }
                    sink += (long) x;
                    break;
                }
                default:
                    throw new IllegalStateException(family);
            }
            rounds++;
        }
    }

    /** A TLS 1.3 server and client over loopback: handshakes and 16 KiB records (AES-GCM, GHASH). */
    static void tlsLoop(Example ex, SSLContext tls, byte[] data) throws Exception {
        SSLServerSocket server = (SSLServerSocket) tls.getServerSocketFactory().createServerSocket(0, 8,
                InetAddress.getLoopbackAddress());
        server.setEnabledCipherSuites(new String[] { "TLS_AES_128_GCM_SHA256" });
        ex.onStop(() -> {
            try {
                server.close();
            } catch (IOException e) {
                // closing anyway
            }
        });
        Thread echo = ex.start("stub-tls-server", () -> {
            byte[] buf = new byte[64 * 1024];
            while (!ex.stopping()) {
                try (SSLSocket s = (SSLSocket) server.accept()) {
                    InputStream in = s.getInputStream();
                    OutputStream out = s.getOutputStream();
                    for (int n; (n = in.read(buf)) > 0;) {
                        out.write(buf, 0, n);
                    }
                } catch (IOException e) {
                    // the client went away, or the server was closed
                }
            }
        });
        byte[] back = new byte[data.length];
        while (!ex.stopping()) {
            try (SSLSocket s = (SSLSocket) tls.getSocketFactory().createSocket(InetAddress.getLoopbackAddress(),
                    server.getLocalPort())) {
                s.setEnabledCipherSuites(new String[] { "TLS_AES_128_GCM_SHA256" });
                OutputStream out = s.getOutputStream();
                InputStream in = s.getInputStream();
                for (int i = 0; i < 64 && !ex.stopping(); i++) {
                    out.write(data);
                    for (int got = 0; got < back.length;) {
                        int n = in.read(back, got, back.length - got);
                        if (n < 0) {
                            throw new IOException("echo closed");
                        }
                        got += n;
                    }
                    rounds++;
                }
            }
        }
        echo.interrupt();
    }

    /** A self-signed RSA key made by the JDK's keytool, for both ends. */
    static SSLContext tlsContext() throws Exception {
        File ks = File.createTempFile("jflame-stubmix-", ".p12");
        ks.delete();
        ks.deleteOnExit();
        String keytool = System.getProperty("java.home") + File.separator + "bin" + File.separator + "keytool";
        Process p = new ProcessBuilder(keytool, "-genkeypair", "-alias", "k", "-keyalg", "RSA", "-keysize", "2048",
                "-storetype", "PKCS12", "-keystore", ks.getPath(), "-storepass", "changeit", "-dname", "CN=localhost",
                "-validity", "2").redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (p.waitFor() != 0) {
            throw new IOException("keytool failed (exit " + p.exitValue() + ")");
        }
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (FileInputStream in = new FileInputStream(ks)) {
            store.load(in, "changeit".toCharArray());
        }
        ks.delete();
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(store, "changeit".toCharArray());
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(store);
        SSLContext ctx = SSLContext.getInstance("TLSv1.3");
        ctx.init(kmf.getKeyManagers(), tmf.getTrustManagers(), new SecureRandom());
        return ctx;
    }
}
