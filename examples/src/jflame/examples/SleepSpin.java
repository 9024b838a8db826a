/* SleepSpin.java - one thread that sleeps in Thread.sleep most of the time and spins the
 * rest (9 ms and 1 ms by default), timing both itself, for off-CPU and wall-clock profiles. */
package jflame.examples;

public final class SleepSpin {
    static final String USAGE = "SleepSpin [--seconds N] [--sleep-ms MS] [--spin-ms MS]";

    static volatile long sink;
    /* written by the sleep-spin thread only: nanoseconds in sleep() and spin(), rounds */
    static volatile long sleptNanos, spunNanos, rounds;

    public static void main(String[] args) {
        Example ex = new Example(USAGE, args, "seconds", "sleep-ms", "spin-ms");
        int seconds = ex.intOption("seconds", 30, 1, 86_400);
        int sleepMs = ex.intOption("sleep-ms", 9, 1, 10_000);
        int spinMs = ex.intOption("spin-ms", 1, 1, 10_000);
        Example.say("sleep-ms " + sleepMs + " spin-ms " + spinMs + " start monotonic_ns " + ex.startNanos);
        Thread worker = ex.start("sleep-spin", () -> loop(ex, sleepMs, spinMs));
        ex.onStop(worker::interrupt);
        ex.onSummary(() -> Example.say(totals()));
        // a totals line every 200 ms: a test takes the two around its recording
        ex.run(seconds, 200, () -> rounds, () -> Example.say(totals()));
    }

    static String totals() {
        return "totals monotonic_ns " + System.nanoTime() + " sleep_ns " + sleptNanos + " spin_ns " + spunNanos
                + " rounds " + rounds;
    }

    static void loop(Example ex, int sleepMs, int spinMs) {
        while (!ex.stopping()) {
            long t0 = System.nanoTime();
            sleep(sleepMs);
            long t1 = System.nanoTime();
            spin(t1 + spinMs * 1_000_000L);
            long t2 = System.nanoTime();
            sleptNanos += t1 - t0;
            spunNanos += t2 - t1;
            rounds++;
        }
    }

    static void sleep(int ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Integer work until the deadline: on the CPU the whole time. */
    static void spin(long until) {
        long x = sink | 1;
        while (System.nanoTime() - until < 0) {
            for (int i = 0; i < 1000; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
        }
        sink = x;
    }
}
