/* Workload.java - deterministic JVM workloads for jflame's tests and benchmarks
 * (as `perf test -w` does): known hot methods, inlining, class unloading. */
package jflame.examples;

import java.lang.invoke.MethodHandles;
import java.util.ArrayList;
import java.util.List;

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

    public static void main(String[] args) throws Throwable {
        String mode = args.length > 0 ? args[0] : "hot";
        long arg = args.length > 1 ? Long.parseLong(args[1]) : -1;
        switch (mode) {
            case "hot" -> hot(arg > 0 ? arg : 10_000);
            case "unload" -> unload(arg > 0 ? (int) arg : 5);
            case "threads" -> threads(arg > 0 ? (int) arg : 50);
            case "wait" -> {
                // Warm up, say ready, then idle until killed or the time runs out.
                hot(2_000);
                Thread.sleep(arg > 0 ? arg : 60_000);
            }
            default -> {
                System.err.println("usage: Workload hot|unload|threads|wait [millis|count]");
                System.exit(2);
            }
        }
    }
}
