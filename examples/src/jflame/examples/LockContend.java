/* LockContend.java - a contended synchronized monitor, for lock profiles (-e lock): the thread
 * "ledger-holder" holds the Ledger's monitor most of the time (in Ledger.hold, 9 ms by default,
 * then 1 ms outside it), and the thread "ledger-waiter" calls the synchronized Ledger.post in a
 * loop (with a 100 us pause between calls), so it is blocked on the monitor ~90% of its time.
 * The waiter times each call to post (System.nanoTime around it) and prints the sum: a totals
 * line every 200 ms and at the end. */
package jflame.examples;

import java.util.concurrent.locks.LockSupport;

public final class LockContend {
    static final String USAGE = "LockContend [--seconds N] [--hold-ms MS] [--release-ms MS]";

    /* written by the waiter only: ns inside post() calls (blocked and not), calls, calls over 1 ms */
    static volatile long blockedNanos, calls, slowCalls;

    public static void main(String[] args) {
        Example ex = new Example(USAGE, args, "seconds", "hold-ms", "release-ms");
        int seconds = ex.intOption("seconds", 30, 1, 86_400);
        int holdMs = ex.intOption("hold-ms", 9, 1, 10_000);
        int releaseMs = ex.intOption("release-ms", 1, 1, 10_000);
        Ledger ledger = new Ledger();
        Example.say("hold-ms " + holdMs + " release-ms " + releaseMs + " start monotonic_ns " + ex.startNanos);
        Thread holder = ex.start("ledger-holder", () -> holderLoop(ex, ledger, holdMs, releaseMs));
        Thread waiter = ex.start("ledger-waiter", () -> waiterLoop(ex, ledger));
        ex.onStop(() -> {
            holder.interrupt();
            waiter.interrupt();
        });
        ex.onSummary(() -> Example.say("total " + totals()));
        ex.run(seconds, 200, () -> calls, () -> Example.say("totals " + totals()));
    }

    static String totals() {
        return "monotonic_ns " + System.nanoTime() + " blocked_ns " + blockedNanos + " calls " + calls
                + " slow_calls " + slowCalls;
    }

    static void holderLoop(Example ex, Ledger ledger, int holdMs, int releaseMs) {
        while (!ex.stopping()) {
            ledger.hold(holdMs);
            sleep(releaseMs);
        }
    }

    static void waiterLoop(Example ex, Ledger ledger) {
        long blocked = 0, n = 0, slow = 0;
        while (!ex.stopping()) {
            long t0 = System.nanoTime();
            ledger.post(n);
            long dt = System.nanoTime() - t0;
            blocked += dt;
            n++;
            if (dt > 1_000_000L) {
                slow++;
            }
            blockedNanos = blocked;
            calls = n;
            slowCalls = slow;
            LockSupport.parkNanos(100_000L);
        }
    }

    static void sleep(int ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

/** The contended object: its monitor is what the waiter blocks on (class jflame/examples/Ledger). */
final class Ledger {
    private long balance, entries;

    /** Holds the monitor for ms milliseconds (sleeping inside it). */
    synchronized void hold(int ms) {
        entries++;
        LockContend.sleep(ms);
    }

    /** A short update; blocks while the holder is in hold(). */
    synchronized void post(long amount) {
        balance += amount;
        entries++;
    }
}
