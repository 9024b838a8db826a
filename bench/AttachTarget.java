/* AttachTarget.java - the target JVM of bench/attach_time.sh, started as a source file
 * (java -Xcomp ... -cp jflame-examples.jar bench/AttachTarget.java IDLE_MILLIS): the JVM
 * compiles this file with javac in memory, then runs Workload startup, so under -Xcomp its
 * code cache holds thousands of methods (javac's, the JDK libraries'). It waits until the
 * JIT has gone quiet, prints "attach-target: ready <System.nanoTime()>" (CLOCK_MONOTONIC on
 * Linux: the bench script's clock and the safepoint log's timenanos) and idles until killed. */
import java.lang.management.ManagementFactory;

public final class AttachTarget {
    public static void main(String[] args) throws Throwable {
        long idle = args.length > 0 ? Long.parseLong(args[0]) : 60_000;
        jflame.examples.Workload.main(new String[] {"startup", "5"});
        // quiet = total compilation time unchanged over 3 polls 200 ms apart (at most 30 s)
        var jit = ManagementFactory.getCompilationMXBean();
        long last = -1;
        int still = 0;
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (still < 3 && System.nanoTime() < deadline) {
            Thread.sleep(200);
            long t = jit.getTotalCompilationTime();
            still = t == last ? still + 1 : 0;
            last = t;
        }
        System.out.println("attach-target: ready " + System.nanoTime() + (still < 3 ? " jit-busy" : ""));
        System.out.flush();
        Thread.sleep(idle);
    }
}
