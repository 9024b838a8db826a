/* HotMath.java - a callee in another class, so inlined chains cross classes. */
package jflame.examples;

final class HotMath {
    private HotMath() {
    }

    /** Small enough for C2 to inline into Workload.spin. */
    static int scramble(int x) {
        return Integer.rotateLeft(x * 0x9E3779B9, 7) ^ (x >>> 11);
    }
}
