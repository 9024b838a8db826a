// ArmSmoke: the arm64 guest's smoke workload (tests/kernel/smoke-arm64.sh).
//
//   java -cp armsmoke.jar ArmSmoke [SECONDS [loop|objects]]
//
// Runs SECONDS seconds (default 20) of a workload in chunks and prints one line a
// second: the second, the chunks' iterations done in it and the wall clock (ms
// since the epoch), after a first line "start MS" printed as main() begins, so that
// the JVM's start-up (the shell's clock before java against that line) and its
// speed under TCG against the host's (the same jar, the same work) can be read
// off. loop (the default): a plain integer loop (xorshift), 100,000 iterations a
// chunk, bound by its chain of dependent operations; objects: 1,000 strings made,
// put in a HashMap and looked up again a chunk (allocation, hashing, calls, the
// garbage collector).
import java.util.HashMap;

public final class ArmSmoke {
	static long state = 0x9E3779B97F4A7C15L;

	static long loop() {
		long s = state, acc = 0;
		for (int i = 0; i < 100_000; i++) {
			s ^= s << 13;
			s ^= s >>> 7;
			s ^= s << 17;
			acc += s & 0xff;
		}
		state = s;
		return acc;
	}

	static long objects() {
		HashMap<String, Integer> map = new HashMap<>();
		long acc = 0;
		for (int i = 0; i < 1_000; i++) {
			map.put("key-" + (state + i), i);
		}
		for (int i = 0; i < 1_000; i++) {
			Integer v = map.get("key-" + (state + i));
			acc += v == null ? 0 : v;
		}
		state += acc;
		return acc;
	}

	public static void main(String[] args) {
		int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 20;
		boolean objects = args.length > 1 && args[1].equals("objects");
		int per = objects ? 1_000 : 100_000;
		System.out.println("start " + System.currentTimeMillis());
		long sink = 0, total = 0;
		long t0 = System.nanoTime(), next = t0 + 1_000_000_000L;
		for (int second = 1; second <= seconds; second++) {
			long done = 0;
			do {
				sink += objects ? objects() : loop();
				done += per;
			} while (System.nanoTime() < next);
			next += 1_000_000_000L;
			total += done;
			System.out.println("second " + second + " " + done + " " + System.currentTimeMillis());
		}
		System.out.println("total " + total + " " + (System.nanoTime() - t0) / 1_000_000 + " ms sink " + (sink & 0xffff));
	}
}
