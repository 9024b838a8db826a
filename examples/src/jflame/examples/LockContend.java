/* LockContend.java - a contended lock, for lock profiles (-e lock): the thread "ledger-holder"
 * holds the ledger's lock most of the time (in hold, 9 ms by default, then 1 ms outside it), and
 * the thread "ledger-waiter" calls post in a loop (with a 100 us pause between calls), so it is
 * blocked on the lock ~90% of its time. --lock monitor (default): Ledger's synchronized methods;
 * --lock juc: LockedLedger's ReentrantLock, plus threads that park without contention (a
 * Condition's awaitNanos, an idle single-thread executor, a CountDownLatch's await). The waiter
 * times each call to post (System.nanoTime around it) and prints the sum: a totals line every
 * 200 ms and at the end. The totals also give the JVM's own account of the waiter's time blocked
 * on monitors (ThreadMXBean contention monitoring, jvm_blocked_ms): a thread starved of CPU
 * spends time in post() runnable, spinning before it blocks, that no lock profiler counts. */
package jflame.examples;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

public final class LockContend {
    static final String USAGE = "LockContend [--seconds N] [--hold-ms MS] [--release-ms MS] [--lock monitor|juc]";

    /* written by the waiter only: ns inside post() calls (blocked and not), calls, calls over 1 ms */
    static volatile long blockedNanos, calls, slowCalls;
    static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    static volatile long waiterId = -1;

    public static void main(String[] args) {
        Example ex = new Example(USAGE, args, "seconds", "hold-ms", "release-ms", "lock");
        int seconds = ex.intOption("seconds", 30, 1, 86_400);
        int holdMs = ex.intOption("hold-ms", 9, 1, 10_000);
        int releaseMs = ex.intOption("release-ms", 1, 1, 10_000);
        String kind = ex.choice("lock", "monitor", "monitor", "juc");
        Book ledger = kind.equals("juc") ? new LockedLedger() : new Ledger();
        Example.say("lock " + kind + " hold-ms " + holdMs + " release-ms " + releaseMs + " start monotonic_ns "
                + ex.startNanos);
        if (MX.isThreadContentionMonitoringSupported()) {
            MX.setThreadContentionMonitoringEnabled(true);
        }
        Thread holder = ex.start("ledger-holder", () -> holderLoop(ex, ledger, holdMs, releaseMs));
        Thread waiter = ex.start("ledger-waiter", () -> waiterLoop(ex, ledger));
        waiterId = waiter.getId();
        ExecutorService pool = kind.equals("juc") ? Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "ledger-pool");
            t.setDaemon(true);
            return t;
        }) : null;
        CountDownLatch never = new CountDownLatch(1);
        Thread idle = pool != null ? ex.start("ledger-idle", () -> idleLoop(ex, pool)) : null;
        Thread latch = pool != null ? ex.start("ledger-latch", () -> latchLoop(ex, never)) : null;
        ex.onStop(() -> {
            holder.interrupt();
            waiter.interrupt();
            if (pool != null) {
                idle.interrupt();
                latch.interrupt();
                pool.shutdownNow();
            }
        });
        ex.onSummary(() -> Example.say("total " + totals()));
        ex.run(seconds, 200, () -> calls, () -> Example.say("totals " + totals()));
    }

    static String totals() {
        long now = System.nanoTime();
        ThreadInfo w = waiterId >= 0 && MX.isThreadContentionMonitoringEnabled() ? MX.getThreadInfo(waiterId) : null;
        return "monotonic_ns " + now + " blocked_ns " + blockedNanos + " calls " + calls + " slow_calls "
                + slowCalls + " jvm_blocked_ms " + (w != null ? w.getBlockedTime() : -1);
    }

    static void holderLoop(Example ex, Book ledger, int holdMs, int releaseMs) {
        while (!ex.stopping()) {
            ledger.hold(holdMs);
            sleep(releaseMs);
        }
    }

    static void waiterLoop(Example ex, Book ledger) {
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

    /** Parks on a Condition of a lock nobody else takes (2 ms at a time), then hands the
     *  executor's idle worker a task: waiting, not contention; -e lock shows none of it. */
    static void idleLoop(Example ex, ExecutorService pool) {
        ReentrantLock own = new ReentrantLock();
        Condition nothing = own.newCondition();
        while (!ex.stopping()) {
            own.lock();
            try {
                nothing.awaitNanos(2_000_000L);
            } catch (InterruptedException e) {
                return;
            } finally {
                own.unlock();
            }
            pool.execute(() -> { });
        }
    }

    /** Waits on a CountDownLatch that never opens, 2 ms at a time. */
    static void latchLoop(Example ex, CountDownLatch never) {
        while (!ex.stopping()) {
            try {
                never.await(2, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                return;
            }
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

/** What the holder holds and the waiter posts to. */
interface Book {
    void hold(int ms);

    void post(long amount);
}

/** The contended object: its monitor is what the waiter blocks on (class jflame/examples/Ledger). */
final class Ledger implements Book {
    private long balance, entries;

    /** Holds the monitor for ms milliseconds (sleeping inside it). */
    @Override
    public synchronized void hold(int ms) {
        entries++;
        LockContend.sleep(ms);
    }

    /** A short update; blocks while the holder is in hold(). */
    @Override
    public synchronized void post(long amount) {
        balance += amount;
        entries++;
    }
}

/** The same with a java.util.concurrent ReentrantLock (non-fair): the waiter parks in
 *  ReentrantLock.lock with the lock's ReentrantLock$NonfairSync as its blocker. */
final class LockedLedger implements Book {
    private final ReentrantLock lock = new ReentrantLock();
    private long balance, entries;

    /** Holds the lock for ms milliseconds (sleeping inside it). */
    @Override
    public void hold(int ms) {
        lock.lock();
        try {
            entries++;
            LockContend.sleep(ms);
        } finally {
            lock.unlock();
        }
    }

    /** A short update; blocks while the holder is in hold(). */
    @Override
    public void post(long amount) {
        lock.lock();
        try {
            balance += amount;
            entries++;
        } finally {
            lock.unlock();
        }
    }
}
