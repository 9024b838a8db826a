/* AllocMix.java - one thread ("alloc-mix") allocating byte[] and String objects in a known
 * byte ratio from two clearly named methods, for allocation profiles (-e alloc).
 *
 * Every round calls makeBytes() once, which allocates one byte[BYTES_LEN] (16 + 2288 = 2304
 * bytes with compressed oops; the sizes are this JVM's: see BYTES_OBJECT), and makeStrings() once, which allocates STRINGS_PER_ROUND (32)
 * Strings of 8 Latin-1 characters with new String(bytes, 0, 8, ISO_8859_1): 32 String objects of
 * 24 bytes = 768 bytes. So the bytes of byte[] allocated in makeBytes to the bytes of String
 * objects are 2304:768 = 3:1. Each String also has its own backing byte[8] (24 bytes), a
 * separate byte[] allocation made under String's constructor frames (String.<init> ...
 * Arrays.copyOfRange) below makeStrings, not under makeBytes. The results go to a sink (a ring
 * of references) so that they stay live briefly and the JIT cannot remove the allocations.
 * Prints a totals line every 200 ms and the counts at the end. */
package jflame.examples;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.locks.LockSupport;

public final class AllocMix {
    static final String USAGE = "AllocMix [--seconds N] [--pause-us US]";

    static final int BYTES_LEN = 2288;          /* byte[] object: 16 + 2288 = 2304 bytes */
    static final int STRINGS_PER_ROUND = 32;
    static final int STRING_LEN = 8;            /* Latin-1: a backing byte[8] of 24 bytes */
    /* The objects' sizes as this JVM lays them out: 2304 and 24 bytes with compressed
     * oops and class pointers (the default heaps); ZGC has no compressed oops, and a
     * String's value field takes 8 bytes: 32 (the ratio 2.25, not 3). */
    static final boolean COMPRESSED_OOPS = vmFlag("UseCompressedOops");
    static final boolean COMPRESSED_CLASSES = vmFlag("UseCompressedClassPointers");
    static final int HEADER = 8 + (COMPRESSED_CLASSES ? 4 : 8); /* mark word, class */
    static final int BYTES_OBJECT = align8(align8(HEADER + 4) + BYTES_LEN); /* + length, elements */
    /* value, hash, coder, and hashIsZero from JDK 13 */
    static final int STRING_OBJECT = align8(HEADER + (COMPRESSED_OOPS ? 4 : 8) + 4 + 1
            + (Runtime.version().feature() >= 13 ? 1 : 0));
    static final int ROUNDS_PER_BATCH = 500;

    static final Object[] sink = new Object[4096];
    static int sinkPos;
    static final byte[] SOURCE = "abcdefghijklmnopqrstuvwxyz0123456789".getBytes(StandardCharsets.ISO_8859_1);

    /* written by the alloc-mix thread only */
    static volatile long byteArrays, strings, rounds;

    public static void main(String[] args) {
        Example ex = new Example(USAGE, args, "seconds", "pause-us");
        int seconds = ex.intOption("seconds", 30, 1, 86_400);
        int pauseUs = ex.intOption("pause-us", 1000, 0, 1_000_000);
        Example.say("sizes byte[] " + BYTES_OBJECT + " String " + STRING_OBJECT + " per round byte[] 1 String "
                + STRINGS_PER_ROUND + " ratio " + ratio() + " start monotonic_ns " + ex.startNanos);
        ex.start("alloc-mix", () -> loop(ex, pauseUs));
        ex.onSummary(() -> Example.say("total " + counts()));
        ex.run(seconds, 200, () -> rounds, () -> Example.say("totals monotonic_ns " + System.nanoTime() + " "
                + counts()));
    }

    static boolean vmFlag(String name) {
        return Boolean.parseBoolean(java.lang.management.ManagementFactory
                .getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class).getVMOption(name).getValue());
    }

    static int align8(int n) {
        return (n + 7) & ~7;
    }

    /** Bytes of byte[] made in makeBytes per byte of String objects made in makeStrings. */
    static double ratio() {
        return (double) BYTES_OBJECT / ((double) STRING_OBJECT * STRINGS_PER_ROUND);
    }

    static String counts() {
        long b = byteArrays, s = strings;
        return "byte_arrays " + b + " byte_array_bytes " + b * BYTES_OBJECT + " strings " + s + " string_bytes "
                + s * STRING_OBJECT + " rounds " + rounds + " ratio " + ratio();
    }

    static void loop(Example ex, int pauseUs) {
        long r = 0, b = 0, s = 0;
        while (!ex.stopping()) {
            for (int i = 0; i < ROUNDS_PER_BATCH; i++) {
                makeBytes(r);
                makeStrings(r);
                r++;
            }
            b += ROUNDS_PER_BATCH;
            s += (long) ROUNDS_PER_BATCH * STRINGS_PER_ROUND;
            byteArrays = b;
            strings = s;
            rounds = r;
            if (pauseUs > 0) {
                LockSupport.parkNanos(pauseUs * 1000L);
            }
        }
    }

    static void keep(Object o) {
        sink[sinkPos] = o;
        sinkPos = (sinkPos + 1) & (sink.length - 1);
    }

    /** One byte[BYTES_LEN]. */
    static void makeBytes(long round) {
        byte[] a = new byte[BYTES_LEN];
        a[(int) (round % BYTES_LEN)] = (byte) round;
        keep(a);
    }

    /** STRINGS_PER_ROUND Strings of STRING_LEN Latin-1 characters (each a String and its byte[]). */
    static void makeStrings(long round) {
        int off = (int) (round % (SOURCE.length - STRING_LEN));
        for (int i = 0; i < STRINGS_PER_ROUND; i++) {
            keep(new String(SOURCE, off, STRING_LEN, StandardCharsets.ISO_8859_1));
        }
    }
}
