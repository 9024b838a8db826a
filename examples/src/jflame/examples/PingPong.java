/* PingPong.java - two threads handing a token back and forth with LockSupport.park/unpark:
 * each hand-over blocks one thread and wakes the other, a context switch each (tens of
 * thousands a second), for the cost of off-CPU and lock recording. --blocker object parks
 * with the pair as blocker (not a lock) instead of none. Prints round trips per second. */
package jflame.examples;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

public final class PingPong {
    static final String USAGE = "PingPong [--seconds N] [--pairs 1..8] [--blocker none|object]";

    public static void main(String[] args) {
        Example ex = new Example(USAGE, args, "seconds", "pairs", "blocker");
        int seconds = ex.intOption("seconds", 30, 1, 86_400);
        int pairs = ex.intOption("pairs", 1, 1, 8);
        boolean blocker = ex.choice("blocker", "none", "none", "object").equals("object");
        AtomicLong trips = new AtomicLong();
        long[] last = { 0, System.nanoTime() };
        for (int i = 0; i < pairs; i++) {
            Pair p = new Pair(ex, trips, blocker);
            p.ping = ex.start("ping-" + i, p::ping);
            p.pong = ex.start("pong-" + i, p::pong);
        }
        ex.onSummary(() -> Example.say("total roundtrips " + trips.get()));
        ex.run(seconds, 1000, trips::get, () -> {
            long now = System.nanoTime(), n = trips.get();
            Example.say("roundtrips/s " + Math.round((n - last[0]) * 1e9 / (now - last[1])));
            last[0] = n;
            last[1] = now;
        });
    }

    static final class Pair {
        final Example ex;
        final AtomicLong trips;
        final Object blocker; // null, or this: LockSupport's blocker while parked
        volatile Thread ping, pong;
        volatile int turn; // 0: ping's, 1: pong's

        Pair(Example ex, AtomicLong trips, boolean blocker) {
            this.ex = ex;
            this.trips = trips;
            this.blocker = blocker ? this : null;
        }

        void park() {
            if (blocker != null) {
                LockSupport.parkNanos(blocker, 1_000_000L);
            } else {
                LockSupport.parkNanos(1_000_000L);
            }
        }

        void ping() {
            while (pong == null) {
                Thread.onSpinWait();
            }
            while (!ex.stopping()) {
                while (turn != 0 && !ex.stopping()) {
                    park();
                }
                turn = 1;
                LockSupport.unpark(pong);
                trips.incrementAndGet();
            }
            LockSupport.unpark(pong);
        }

        void pong() {
            while (!ex.stopping()) {
                while (turn != 1 && !ex.stopping()) {
                    park();
                }
                turn = 0;
                LockSupport.unpark(ping);
            }
            LockSupport.unpark(ping);
        }
    }
}
