/* Example.java - shared plumbing for the field-case examples (KafkaStyle, CatalogService,
 * Jitter): options, the ready line, the run deadline, and one summary on exit or SIGTERM. */
package jflame.examples;

import java.lang.management.CompilationMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

final class Example {
    static final String PREFIX = "jflame-example: ";

    private final String usage;
    private final Map<String, String> options = new HashMap<>();
    private final List<Thread> workers = new ArrayList<>();
    private final AtomicBoolean finished = new AtomicBoolean();
    private volatile boolean stopping;
    private volatile boolean ready;
    private Runnable stopAction = () -> { };
    private Runnable summary = () -> { };
    final long startNanos = System.nanoTime();

    /** Parses {@code --name value} pairs; anything else prints the usage and exits 2. */
    Example(String usage, String[] args, String... known) {
        this.usage = usage;
        List<String> names = Arrays.asList(known);
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("-h") || a.equals("--help")) {
                System.out.println("usage: " + usage);
                System.exit(0);
            }
            if (!a.startsWith("--") || !names.contains(a.substring(2))) {
                fail("unknown argument '" + a + "'");
            }
            if (i + 1 >= args.length) {
                fail(a + " needs a value");
            }
            options.put(a.substring(2), args[++i]);
        }
    }

    void fail(String why) {
        System.err.println(why);
        System.err.println("usage: " + usage);
        System.exit(2);
    }

    int intOption(String name, int def, int min, int max) {
        String v = options.get(name);
        if (v == null) {
            return def;
        }
        try {
            int n = Integer.parseInt(v);
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException e) {
            // falls through to the usage line
        }
        fail("--" + name + " wants an integer in " + min + ".." + max + ", not '" + v + "'");
        return def;
    }

    String option(String name, String def) {
        return options.getOrDefault(name, def);
    }

    String choice(String name, String def, String... allowed) {
        String v = options.getOrDefault(name, def);
        if (!Arrays.asList(allowed).contains(v)) {
            fail("--" + name + " wants one of " + String.join("|", allowed) + ", not '" + v + "'");
        }
        return v;
    }

    static void say(String line) {
        synchronized (System.out) {
            System.out.println(PREFIX + line);
            System.out.flush();
        }
    }

    boolean stopping() {
        return stopping;
    }

    /** How long a run waits at most for the JIT to settle before it says ready: 10 s, or
     *  -Djflame.example.latest=SECONDS (the kernel tests' emulated CPUs compile for a minute). */
    static long latestSeconds() {
        try {
            return Math.max(1, Long.parseLong(System.getProperty("jflame.example.latest", "10")));
        } catch (NumberFormatException e) {
            return 10;
        }
    }

    /** Waits until the JIT has settled: the last second added under 10 ms of compilation
     *  (at least a second from now), or maxMillis passed. */
    static void awaitJitQuiet(long maxMillis) throws InterruptedException {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        if (jit == null || !jit.isCompilationTimeMonitoringSupported()) {
            return;
        }
        long[] ms = new long[10];
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(maxMillis);
        for (int tick = 0; System.nanoTime() - end < 0; tick++) {
            long now = jit.getTotalCompilationTime();
            if (tick >= 10 && now - ms[tick % 10] < 10) {
                return;
            }
            ms[tick % 10] = now;
            Thread.sleep(100);
        }
    }

    /** Whether the ready line is out (the JIT has settled). */
    boolean ready() {
        return ready;
    }

    double elapsedSeconds() {
        return (System.nanoTime() - startNanos) / 1e9;
    }

    /** Starts a worker thread; workers are daemons and are joined (briefly) on stop. */
    Thread start(String name, Runnable body) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        synchronized (workers) {
            workers.add(t);
        }
        t.start();
        return t;
    }

    /** Runs first when stopping (after the stop flag is set, before the workers are joined). */
    void onStop(Runnable r) {
        stopAction = r;
    }

    /** Prints the summary lines; runs once, on the deadline or on SIGTERM/SIGINT. */
    void onSummary(Runnable r) {
        summary = r;
        Runtime.getRuntime().addShutdownHook(new Thread(this::stop, "jflame-example-shutdown"));
    }

    private void stop() {
        if (!finished.compareAndSet(false, true)) {
            return;
        }
        stopping = true;
        try {
            stopAction.run();
        } catch (RuntimeException e) {
            System.err.println("stop: " + e);
        }
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        List<Thread> all;
        synchronized (workers) {
            all = new ArrayList<>(workers);
        }
        for (Thread t : all) {
            long left = until - System.nanoTime();
            if (left > 0) {
                try {
                    t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        summary.run();
    }

    /** The main thread's loop: prints the ready line once the JIT has settled and the work
     *  runs at a steady rate, calls {@code report} every {@code reportMs} (0: never), and
     *  returns at the deadline or when stopping; then stops the workers, prints the summary
     *  and exits 0. {@code progress} counts the units of work done so far. */
    void run(int seconds, long reportMs, LongSupplier progress, Runnable report) {
        long runNanos = TimeUnit.SECONDS.toNanos(seconds);
        long deadline = startNanos + runNanos;
        // Ready after at least 3 s (a third of short runs) once the last second added under
        // 10 ms of JIT compilation and did as much work as the second before it (within 20%, and
        // some: a JVM starved of CPU at its start does none, and compiles nothing, for a while),
        // and at the latest after 10 s (2/3 of short runs): a slow JIT on a busy machine can
        // take that long to compile String.format's code.
        long warmup = Math.min(TimeUnit.SECONDS.toNanos(3), runNanos / 3);
        long latest = Math.max(warmup, Math.min(TimeUnit.SECONDS.toNanos(latestSeconds()), runNanos * 2 / 3));
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        boolean jitTimes = jit != null && jit.isCompilationTimeMonitoringSupported();
        long[] jitMillis = new long[10];
        long[] done = new long[20];
        int tick = 0;
        long reportNanos = TimeUnit.MILLISECONDS.toNanos(reportMs);
        long nextReport = reportMs > 0 ? startNanos + reportNanos : Long.MAX_VALUE;
        long nextTick = startNanos;
        while (!stopping) {
            long now = System.nanoTime();
            if (now - deadline >= 0) {
                break;
            }
            if (now - nextReport >= 0) {
                report.run();
                nextReport += reportNanos;
            }
            if (now - nextTick >= 0) {
                nextTick += TimeUnit.MILLISECONDS.toNanos(100);
                long ms = jitTimes ? jit.getTotalCompilationTime() : 0;
                long compiled = ms - jitMillis[tick % 10];
                jitMillis[tick % 10] = ms;
                long work = progress.getAsLong();
                long lastSecond = work - done[(tick + 10) % 20];
                long secondBefore = done[(tick + 10) % 20] - done[tick % 20];
                done[tick % 20] = work;
                tick++;
                boolean steady = tick > 20 && lastSecond > 0
                        && Math.abs(lastSecond - secondBefore) * 5 <= lastSecond;
                long elapsed = now - startNanos;
                if (!ready && elapsed >= warmup && (compiled < 10 && steady || elapsed >= latest)) {
                    ready = true;
                    say("ready");
                }
            }
            long wake = Math.min(Math.min(nextReport, nextTick), deadline);
            LockSupport.parkNanos(Math.max(wake - System.nanoTime(), 1));
        }
        if (!ready && !stopping) {
            ready = true;
            say("ready");
        }
        stop();
        System.exit(0);
    }

    /** The JIT's compilation time so far in ms (CompilationMXBean), -1 when the JVM does not say. */
    static long jitMillis() {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        return jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : -1;
    }

    /** Total collections of all collectors so far. */
    static long gcCount() {
        long n = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            n += Math.max(0, gc.getCollectionCount());
        }
        return n;
    }

    /** The median of a run's periodic rates (those after the ready line), for the summary. */
    static long median(List<Long> values) {
        if (values.isEmpty()) {
            return 0;
        }
        List<Long> sorted = new ArrayList<>(values);
        sorted.sort(null);
        return sorted.get(sorted.size() / 2);
    }
}
