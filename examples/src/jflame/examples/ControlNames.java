/* ControlNames.java - a JVM whose thread and method names hold control
 * characters, for the test that jflame shows target text escaped, never raw. */
package jflame.examples;

public final class ControlNames {
    /** A terminal escape, ';' (the folded separator), a newline and BEL. */
    public static final String THREAD = "evil\u001b[31mred\u001b[0m;semi\nline\u0007bell";
    /** CSI as a C1 control, then a Chinese name: printable UTF-8 stays. */
    public static final String THREAD_C1 = "c1\u009b31m\u4e3b\u7ebf\u7a0b";

    static volatile long sink;

    /** Hot; its name holds ESC, BEL and the C1 CSI (identifier-ignorable in Java). */
    static long spin\u001b\u0007\u009bHot(int rounds) {
        long acc = 0;
        int x = 0x2545F491;
        for (int i = 0; i < rounds; i++) {
            x ^= x << 13;
            x ^= x >>> 17;
            x ^= x << 5;
            acc += x;
        }
        return acc;
    }

    static Thread spinner(String name, long deadline, boolean tell) {
        Thread t = new Thread(() -> {
            long rounds = 0;
            while (System.nanoTime() < deadline) {
                sink += spin\u001b\u0007\u009bHot(100_000);
                if (tell && ++rounds == 2000) {
                    System.out.println("jflame-workload: ready");
                    System.out.flush();
                }
            }
        }, name);
        t.start();
        return t;
    }

    /** Two busy threads with those names for the given milliseconds (default 60 s). */
    public static void main(String[] args) throws InterruptedException {
        long millis = args.length > 0 ? Long.parseLong(args[0]) : 60_000;
        long deadline = System.nanoTime() + millis * 1_000_000L;
        Thread a = spinner(THREAD, deadline, true);
        Thread b = spinner(THREAD_C1, deadline, false);
        a.join();
        b.join();
    }
}
