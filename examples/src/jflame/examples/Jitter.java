/* Jitter.java - steady CPU load plus a short allocation-heavy burst every few seconds
 * (a cache refresh, and the GC it causes), for the profiler's heat map. */
package jflame.examples;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

public final class Jitter {
    static final String USAGE = "Jitter [--seconds N] [--period-ms MS] [--burst-ms MS] [--steady-threads 1..8]"
            + " [--cache-entries N]";

    static volatile long sink;
    /** The cache the bursts rebuild, replaced whole by each rebuild. */
    static volatile Map<String, Entry> cache = new HashMap<>();

    record Entry(String key, long version, byte[] payload, int[] scores) {
    }

    public static void main(String[] args) {
        Example ex = new Example(USAGE, args, "seconds", "period-ms", "burst-ms", "steady-threads", "cache-entries");
        int seconds = ex.intOption("seconds", 30, 1, 86_400);
        int periodMs = ex.intOption("period-ms", 3000, 10, 3_600_000);
        int burstMs = ex.intOption("burst-ms", 200, 1, 3_600_000);
        int steadyThreads = ex.intOption("steady-threads", 1, 1, 8);
        int cacheEntries = ex.intOption("cache-entries", 50_000, 1, 10_000_000);
        if (burstMs >= periodMs) {
            ex.fail("--burst-ms must be shorter than --period-ms");
        }

        long gcsAtStart = Example.gcCount();
        AtomicLong steadyOps = new AtomicLong();
        AtomicLong bursts = new AtomicLong();
        AtomicLong burstGcs = new AtomicLong();
        Example.say("steady-threads " + steadyThreads + " period-ms " + periodMs + " burst-ms " + burstMs
                + " cache-entries " + cacheEntries + " start monotonic_ns " + ex.startNanos);
        for (int i = 0; i < steadyThreads; i++) {
            int seed = i;
            ex.start("steady-worker-" + i, () -> steady(ex, seed, steadyOps));
        }
        Thread refresher = ex.start("cache-refresh",
                () -> refresh(ex, periodMs, burstMs, cacheEntries, bursts, burstGcs));
        ex.onStop(() -> LockSupport.unpark(refresher)); // it sleeps between bursts
        ex.onSummary(() -> {
            Example.say("bursts " + bursts.get() + " gcs in bursts " + burstGcs.get() + " gcs "
                    + (Example.gcCount() - gcsAtStart) + " steady-ops " + steadyOps.get()
                    + " cache entries " + cache.size());
            Example.say("total bursts " + bursts.get() + " steady-ops/s "
                    + Math.round(steadyOps.get() / ex.elapsedSeconds()));
        });
        ex.run(seconds, 0, steadyOps::get, () -> { });
    }

    /** The steady load: allocation-free integer work, one op per 64 Ki rounds. */
    static void steady(Example ex, int seed, AtomicLong ops) {
        int[] table = new int[4096];
        for (int i = 0; i < table.length; i++) {
            table[i] = i * 0x9E3779B9 + seed;
        }
        int x = 0x2545F491 + seed;
        while (!ex.stopping()) {
            for (int r = 0; r < 65_536; r++) {
                x ^= x << 13;
                x ^= x >>> 17;
                x ^= x << 5;
                int j = x & (table.length - 1);
                table[j] = Integer.rotateLeft(table[j] + x, 7);
            }
            sink += table[x & (table.length - 1)];
            ops.incrementAndGet();
        }
    }

    /** The cache-refresh thread: every period, rebuilds the cache for the burst's length. */
    static void refresh(Example ex, int periodMs, int burstMs, int entries, AtomicLong bursts, AtomicLong burstGcs) {
        long period = TimeUnit.MILLISECONDS.toNanos(periodMs);
        long burst = TimeUnit.MILLISECONDS.toNanos(burstMs);
        long next = ex.startNanos + period;
        long version = 0;
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        while (!ex.stopping()) {
            long now = System.nanoTime();
            if (now - next < 0) {
                LockSupport.parkNanos(next - now);
                continue;
            }
            long start = System.nanoTime();
            long end = start + burst;
            long gcs = Example.gcCount();
            long cpu = threads.getCurrentThreadCpuTime();
            int built = 0;
            int rebuilds = 0;
            // Rebuild from scratch until the burst's time is up (the last one may be partial).
            while (System.nanoTime() - end < 0 && !ex.stopping()) {
                Map<String, Entry> fresh = rebuild(++version, entries, end);
                cache = fresh;
                built += fresh.size();
                rebuilds++;
            }
            long stop = System.nanoTime();
            long n = bursts.incrementAndGet();
            long g = Example.gcCount() - gcs;
            burstGcs.addAndGet(g);
            Example.say("burst " + n + " start monotonic_ns " + start + " end monotonic_ns " + stop
                    + " at_ms " + TimeUnit.NANOSECONDS.toMillis(start - ex.startNanos)
                    + " ms " + TimeUnit.NANOSECONDS.toMillis(stop - start)
                    + " cpu_ms " + TimeUnit.NANOSECONDS.toMillis(threads.getCurrentThreadCpuTime() - cpu)
                    + " rebuilds " + rebuilds + " entries " + built + " gcs " + g);
            next += period;
            while (next - System.nanoTime() < 0) {
                next += period; // missed periods (a stalled machine) are skipped, not bunched
            }
        }
    }

    /** Builds up to {@code entries} cache entries, stopping early at {@code deadline}. */
    static Map<String, Entry> rebuild(long version, int entries, long deadline) {
        Map<String, Entry> fresh = new HashMap<>();
        for (int i = 0; i < entries; i++) {
            if ((i & 63) == 0 && System.nanoTime() - deadline >= 0) {
                break;
            }
            String key = "product:" + i + ":v" + version;
            // The row as fetched (garbage once copied) and the part the cache keeps.
            byte[] row = new byte[16_384];
            for (int k = 0; k < row.length; k += 256) {
                row[k] = (byte) (i + k + version);
            }
            byte[] payload = Arrays.copyOf(row, 512 + (i & 511));
            int[] scores = new int[16];
            for (int k = 0; k < scores.length; k++) {
                scores[k] = (int) (i * 31L + k * version);
            }
            fresh.put(key, new Entry(key, version, payload, scores));
        }
        return fresh;
    }
}
