/* Workload.java - deterministic JVM workloads for jflame's tests and benchmarks
 * (as `perf test -w` does): known hot methods, inlining, class unloading. */
package jflame.examples;

import java.lang.invoke.MethodHandles;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.time.LocalDate;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

public final class Workload {
    /** The hot thread's name: longer than the kernel's 15-character comm. */
    public static final String HOT_THREAD = "jflame-hot-worker-thread-with-a-long-name";

    static volatile long sink;

    /** Small and called from a hot loop: C2 inlines it into {@link #spin}. */
    static int mix(int x) {
        x ^= x << 13;
        x ^= x >>> 17;
        return x ^ (x << 5);
    }

    /** The hot method: a loop around {@link #mix} and {@link HotMath#scramble}. */
    static long spin(int rounds) {
        long acc = 0;
        int x = 0x2545F491;
        for (int i = 0; i < rounds; i++) {
            x = mix(x + i);
            acc += HotMath.scramble(x);
        }
        return acc;
    }

    /** Runs the hot loop on a named thread until the deadline. */
    static void hot(long millis) throws InterruptedException {
        long deadline = System.nanoTime() + millis * 1_000_000L;
        Thread t = new Thread(() -> {
            long rounds = 0;
            boolean told = false;
            while (System.nanoTime() < deadline) {
                sink += spin(100_000);
                if (!told && ++rounds == 2000) {
                    System.out.println("jflame-workload: ready");
                    System.out.flush();
                    told = true;
                }
            }
            if (!told) {
                System.out.println("jflame-workload: ready");
            }
        }, HOT_THREAD);
        t.start();
        t.join();
    }

    /** The second thread of {@link #mixed}: a long name too. */
    public static final String MIXED_WORK_THREAD = "jflame-mixed-work-thread-with-a-long-name";

    /** The hot loop on {@link #HOT_THREAD} and units of {@link #workUnit} on
     *  {@link #MIXED_WORK_THREAD} side by side until the deadline: inlined
     *  callees, JDK code (sorting, hash tables), the GC, two long thread names. */
    static void mixed(long millis) throws InterruptedException {
        long deadline = System.nanoTime() + millis * 1_000_000L;
        Thread work = new Thread(() -> {
            long acc = 0;
            for (long u = 0; System.nanoTime() < deadline; u++) {
                acc += workUnit(u);
            }
            sink += acc;
        }, MIXED_WORK_THREAD);
        work.start();
        // short rounds: the loop itself is compiled within a second, so the
        // stacks are the same from then on (hot's long rounds reach that later)
        CountDownLatch warm = new CountDownLatch(1);
        Thread hot = new Thread(() -> {
            long rounds = 0;
            while (System.nanoTime() < deadline) {
                sink += spin(2_000);
                if (++rounds == 200_000) {
                    warm.countDown();
                }
            }
            warm.countDown();
        }, HOT_THREAD);
        hot.start();
        // ready once the loops ran and the JIT has settled (a slow machine, an
        // emulated CPU, compiles their inlined code seconds later)
        warm.await();
        Example.awaitJitQuiet(Math.max(30, Example.latestSeconds()) * 1000);
        // -Djflame.workload.gc=N: N collections first, which a moving collector
        // moves the Thread objects in (generational ZGC: its roots to them stale
        // until it next marks, what an outside reader follows its forwarding for)
        for (int i = Integer.getInteger("jflame.workload.gc", 0); i > 0; i--)
            System.gc();
        System.out.println("jflame-workload: ready");
        System.out.flush();
        hot.join();
        work.join();
    }

    /** Compiles code in classes of a throwaway loader, then drops it so the
     *  JVM unloads the classes and their compiled code. */
    static void unload(int generations) throws Throwable {
        byte[] bytes;
        try (var in = Workload.class.getResourceAsStream("Workload$Disposable.class")) {
            bytes = in.readAllBytes();
        }
        for (int g = 0; g < generations; g++) {
            ClassLoader loader = new ClassLoader(null) {
                @Override
                protected Class<?> findClass(String name) throws ClassNotFoundException {
                    if (name.equals("jflame.examples.Workload$Disposable")) {
                        return defineClass(name, bytes, 0, bytes.length);
                    }
                    throw new ClassNotFoundException(name);
                }
            };
            Class<?> c = loader.loadClass("jflame.examples.Workload$Disposable");
            var m = MethodHandles.publicLookup().findStatic(c, "work",
                    java.lang.invoke.MethodType.methodType(long.class, int.class));
            for (int i = 0; i < 20_000; i++) {
                sink += (long) m.invokeExact(1000);
            }
            loader = null;
            c = null;
            m = null;
            System.gc();
        }
        System.out.println("jflame-workload: unloaded " + generations);
    }

    public static final class Disposable {
        public static long work(int n) {
            long s = 0;
            for (int i = 0; i < n; i++) {
                s += (i * 31L) ^ (s >>> 3);
            }
            return s;
        }
    }

    /** Many small writes to /dev/null from a named thread: each one a write(2),
     *  so samples land in the kernel under the Java frames that made them. */
    static void io(long millis) throws Exception {
        long deadline = System.nanoTime() + millis * 1_000_000L;
        Thread t = new Thread(() -> {
            byte[] buf = new byte[64];
            long rounds = 0;
            try (var out = new java.io.FileOutputStream("/dev/null")) {
                while (System.nanoTime() < deadline) {
                    writeRecord(out, buf, rounds);
                    if (++rounds == 200_000) {
                        System.out.println("jflame-workload: ready");
                        System.out.flush();
                    }
                }
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }, "jflame-io-writer");
        t.start();
        t.join();
    }

    static void writeRecord(java.io.OutputStream out, byte[] buf, long n) throws java.io.IOException {
        buf[0] = (byte) n;
        out.write(buf);
    }

    /** The page-fault thread's name. */
    public static final String FAULT_THREAD = "jflame-page-toucher";

    /** Bytes mapped afresh each round by {@link #faults}. */
    static final int FAULT_BYTES = 8 << 20;

    /** Maps a file privately again and again and writes a byte in each of its
     *  pages: a fresh mapping has no page table entries, so every write is a
     *  page fault (a copy-on-write page), which the kernel counts for the
     *  thread (minflt in /proc/PID/task/TID/stat): the referee of -e page-faults. */
    static void faults(long millis) throws Exception {
        long deadline = System.nanoTime() + millis * 1_000_000L;
        java.io.File file = java.io.File.createTempFile("jflame-faults-", ".bin");
        file.deleteOnExit();
        Thread t = new Thread(() -> {
            try (java.io.RandomAccessFile raf = new java.io.RandomAccessFile(file, "rw")) {
                raf.setLength(FAULT_BYTES);
                java.nio.channels.FileChannel ch = raf.getChannel();
                long rounds = 0;
                while (System.nanoTime() < deadline) {
                    sink += touchPages(ch.map(java.nio.channels.FileChannel.MapMode.PRIVATE, 0, FAULT_BYTES));
                    if (++rounds % 32 == 0) {
                        System.gc(); // the mappings let go are unmapped
                    }
                    if (rounds == 64) {
                        System.out.println("jflame-workload: ready");
                        System.out.flush();
                    }
                }
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }, FAULT_THREAD);
        t.start();
        t.join();
    }

    /** Writes one byte in each 4 KiB page of m: a page fault each. */
    static long touchPages(java.nio.MappedByteBuffer m) {
        long acc = 0;
        for (int off = 0; off < m.capacity(); off += 4096) {
            m.put(off, (byte) off);
            acc += off;
        }
        return acc;
    }

    /** The clock thread's name. */
    public static final String CLOCK_THREAD = "jflame-clock-reader";

    /** Reads the clocks in a hot loop on a named thread: System.nanoTime() and
     *  System.currentTimeMillis() are clock_gettime(2) calls that the vDSO
     *  serves in user space, so samples land in the [vdso] under them. */
    static void clock(long millis) throws InterruptedException {
        long deadline = System.nanoTime() + millis * 1_000_000L;
        Thread t = new Thread(() -> {
            long rounds = 0;
            while (readClocks() < deadline) {
                if (++rounds == 2_000_000) {
                    System.out.println("jflame-workload: ready");
                    System.out.flush();
                }
            }
        }, CLOCK_THREAD);
        t.start();
        t.join();
    }

    /** Both clocks read once; the monotonic one returned. */
    static long readClocks() {
        sink += System.currentTimeMillis();
        return System.nanoTime();
    }

    /** Allocation pressure: short-lived garbage with a slowly changing live
     *  set, so the GC threads work throughout. */
    static void alloc(long millis) throws InterruptedException {
        long deadline = System.nanoTime() + millis * 1_000_000L;
        Thread t = new Thread(() -> {
            Object[] live = new Object[50_000];
            long rounds = 0;
            while (System.nanoTime() < deadline) {
                for (int i = 0; i < 1000; i++) {
                    live[(int) ((rounds * 7919 + i) % live.length)] = new long[32 + i % 64];
                }
                if (++rounds == 5000) {
                    System.out.println("jflame-workload: ready");
                    System.out.flush();
                }
            }
            sink += live.length;
        }, "jflame-allocator");
        t.start();
        t.join();
    }

    /** Starts many short-lived threads, for thread-name bookkeeping. */
    static void threads(int count) throws InterruptedException {
        List<Thread> all = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Thread t = new Thread(() -> sink += spin(1000), "jflame-short-lived-thread-" + i);
            t.start();
            all.add(t);
        }
        for (Thread t : all) {
            t.join();
        }
        System.out.println("jflame-workload: threads " + count);
    }

    /** A fixed amount of everyday library work (formatting, regex, streams,
     *  collections, big numbers, dates) that loads a few hundred classes and
     *  gives the JIT a few hundred methods, then exits: for startup benchmarks. */
    static void startup(int rounds) {
        Pattern kv = Pattern.compile("(\\w+)=(\\d+)(?:ms)?");
        DateTimeFormatter iso = DateTimeFormatter.ISO_LOCAL_DATE;
        long check = 0;
        for (int r = 0; r < rounds; r++) {
            List<String> lines = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                lines.add(String.format("key%03d=%d%s", i % 37, i * 7 + r, i % 3 == 0 ? "ms" : ""));
            }
            Map<String, Long> sums = new HashMap<>();
            for (String line : lines) {
                Matcher m = kv.matcher(line);
                if (m.matches()) {
                    sums.merge(m.group(1), Long.parseLong(m.group(2)), Long::sum);
                }
            }
            Map<Integer, List<String>> byLength = lines.stream()
                    .filter(l -> !l.endsWith("ms"))
                    .map(l -> l.toUpperCase().replace('=', ':'))
                    .collect(Collectors.groupingBy(String::length, TreeMap::new, Collectors.toList()));
            String top = sums.entrySet().stream()
                    .sorted(Map.Entry.<String, Long>comparingByValue(Comparator.reverseOrder()))
                    .limit(5)
                    .map(e -> e.getKey() + "=" + e.getValue())
                    .collect(Collectors.joining(",", "[", "]"));
            BigInteger f = IntStream.rangeClosed(1, 60).mapToObj(BigInteger::valueOf)
                    .reduce(BigInteger.ONE, BigInteger::multiply);
            BigDecimal ratio = new BigDecimal(f).divide(BigDecimal.valueOf(7 + r), 20, RoundingMode.HALF_EVEN);
            String date = LocalDate.of(2024, 1, 1).plusDays(r * 13L).format(iso);
            StringBuilder sb = new StringBuilder();
            for (String part : String.join(";", lines).split(";")) {
                sb.append(part.charAt(0)).append(part.length());
            }
            check += sums.size() + byLength.size() + top.hashCode() + ratio.scale()
                    + date.hashCode() + sb.length() + Double.toString(Math.sqrt(r + 2.0)).length();
        }
        System.out.println("jflame-workload: startup " + rounds + " " + check);
    }

    /** The default units of {@link #work}: about 20 s of CPU (0.8 ms a unit on
     *  a 2-CPU VM, JDK 17). */
    public static final long WORK_UNITS = 25_000;

    /** THREADS threads named jflame-work-N share exactly UNITS units of
     *  deterministic work (each unit's work depends only on its number, not on
     *  the thread or the timing), then the JVM says how long it took: a fixed
     *  amount of work for comparing what profilers add to it. */
    static void work(long units, int threads) throws InterruptedException {
        var next = new java.util.concurrent.atomic.AtomicLong();
        long t0 = System.nanoTime();
        List<Thread> all = new ArrayList<>();
        for (int i = 0; i < Math.max(threads, 1); i++) {
            Thread t = new Thread(() -> {
                long acc = 0;
                for (long u = next.getAndIncrement(); u < units; u = next.getAndIncrement()) {
                    acc += workUnit(u);
                }
                sink += acc;
            }, "jflame-work-" + i);
            t.start();
            all.add(t);
        }
        for (Thread t : all) {
            t.join();
        }
        long ms = (System.nanoTime() - t0) / 1_000_000L;
        System.out.println("jflame-workload: done " + units + " units in " + ms + " ms");
    }

    /** One unit: the hot loop, then three levels of calls down to sorting and
     *  a hash table (short-lived garbage, so the GC runs too). */
    static long workUnit(long u) {
        long acc = spin(150_000 + (int) (u % 7) * 10_000);
        for (int stage = 0; stage < 4; stage++) {
            acc += workStage(u * 4 + stage);
        }
        return acc;
    }

    static long workStage(long seed) {
        int x = (int) (seed * 0x9E3779B97F4A7C15L >>> 32) | 1;
        return workSort(x) + workTable(x);
    }

    /** Sorts 2,000 pseudo-random ints (Arrays.sort: JDK code in the stacks). */
    static long workSort(int x) {
        int[] a = new int[2000];
        for (int i = 0; i < a.length; i++) {
            x = mix(x);
            a[i] = x;
        }
        java.util.Arrays.sort(a);
        return a[a.length / 2];
    }

    /** Fills a HashMap with 300 boxed entries and folds it into a string. */
    static long workTable(int x) {
        Map<Integer, String> table = new HashMap<>();
        for (int i = 0; i < 300; i++) {
            x = mix(x);
            table.merge(x & 1023, Integer.toHexString(x), String::concat);
        }
        StringBuilder sb = new StringBuilder();
        for (String v : table.values()) {
            sb.append(v, 0, Math.min(v.length(), 4));
        }
        return sb.toString().hashCode();
    }

    public static void main(String[] args) throws Throwable {
        String mode = args.length > 0 ? args[0] : "hot";
        long arg = args.length > 1 ? Long.parseLong(args[1]) : -1;
        switch (mode) { // classic cases: the JDK matrix runs this class on Java 11
            case "hot": hot(arg > 0 ? arg : 10_000); break;
            case "mixed": mixed(arg > 0 ? arg : 10_000); break;
            case "unload": unload(arg > 0 ? (int) arg : 5); break;
            case "threads": threads(arg > 0 ? (int) arg : 50); break;
            case "startup": startup(arg > 0 ? (int) arg : 300); break;
            case "io": io(arg > 0 ? arg : 10_000); break;
            case "alloc": alloc(arg > 0 ? arg : 10_000); break;
            case "clock": clock(arg > 0 ? arg : 10_000); break;
            case "faults": faults(arg > 0 ? arg : 10_000); break;
            case "work": work(arg > 0 ? arg : WORK_UNITS, args.length > 2 ? Integer.parseInt(args[2]) : 2); break;
            case "wait":
                // Warm up, say ready, then idle until killed or the time runs out.
                hot(2_000);
                Thread.sleep(arg > 0 ? arg : 60_000);
                break;
            default:
                System.err.println("usage: Workload hot|mixed|unload|threads|wait|startup|io|alloc|clock|faults [millis|count] [exit-code]\n"
                        + "       Workload work [units [threads [exit-code]]]");
                System.exit(2);
        }
        // an exit code to end with (jflame record -- java ... passes it through)
        int exitAt = mode.equals("work") ? 3 : 2;
        if (args.length > exitAt) {
            System.exit(Integer.parseInt(args[exitAt]));
        }
    }
}
