/* KafkaStyle.java - a Kafka-style producer and broker over loopback TCP, for the upgrade
 * regression where records were built with String.format() instead of a StringBuilder. */
package jflame.examples;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;

public final class KafkaStyle {
    static final String USAGE = "KafkaStyle [--seconds N] [--format string-format|string-builder]"
            + " [--switch-after SECONDS] [--grow-after SECONDS --grow-permille N [--grow-in new|crc]]"
            + " [--producers K] [--batch RECORDS] [--record-size BYTES] [--port P]";
    static final String LISTENER = "ListenerName(PLAINTEXT)-PLAINTEXT";
    /** Kafka's max.in.flight.requests.per.connection default. */
    static final int MAX_IN_FLIGHT = 5;
    /** Batch header: length prefix, producer id, base sequence, record count, first timestamp, CRC. */
    static final int HEADER = 4 + 8 + 8 + 4 + 8 + 4;
    static final long BASE_TIMESTAMP = 1_700_000_000_000L;

    public static void main(String[] args) {
        Example ex = new Example(USAGE, args, "seconds", "format", "switch-after", "grow-after", "grow-permille",
                "grow-in", "producers", "batch", "record-size", "port");
        int seconds = ex.intOption("seconds", 30, 1, 86_400);
        String format = ex.choice("format", "string-builder", "string-format", "string-builder");
        // the upgrade regression as it happens: after this many seconds every
        // producer changes to the other way of building records (0: never)
        int switchAfter = ex.intOption("switch-after", 0, 0, 86_400);
        int producers = ex.intOption("producers", 1, 1, 64);
        int batch = ex.intOption("batch", 500, 1, 100_000);
        int recordSize = ex.intOption("record-size", 100, 0, 1 << 20);
        int port = ex.intOption("port", 0, 0, 65_535);
        // a small lasting regression (bench/regress_live.py): after this many seconds each
        // producer thread spends N/1000 of its CPU time in more work, in a new method
        // (Producer.validateBatch) or in one it already runs (the batch's CRC32C, repeated)
        int growAfter = ex.intOption("grow-after", 0, 0, 86_400);
        int grow = ex.intOption("grow-permille", 0, 0, 900);
        String growIn = ex.choice("grow-in", "new", "new", "crc");

        Broker broker;
        List<Producer> all = new ArrayList<>();
        try {
            broker = new Broker(ex, port, producers);
            for (int i = 1; i <= producers; i++) {
                all.add(new Producer(ex, i, broker.port(), format.equals("string-format"), batch, recordSize));
            }
        } catch (IOException e) {
            System.err.println("KafkaStyle: " + e);
            System.exit(1);
            return;
        }
        List<Thread> producerThreads = new ArrayList<>();
        Example.say("broker on 127.0.0.1:" + broker.port() + " format " + format + " producers " + producers
                + " batch " + batch + " record-size " + recordSize);
        for (Producer p : all) {
            producerThreads.add(ex.start("kafka-producer-network-thread | producer-" + p.id, p::run));
        }
        if (growAfter > 0 && grow > 0) {
            after(ex, "grow-switch", growAfter, () -> {
                for (Producer p : all) {
                    p.growCrc = growIn.equals("crc");
                    p.grow = grow / (1000.0 - grow);
                }
                Example.say("grew by " + grow + " per mille in " + growIn + " after " + growAfter + " s");
            });
        }
        if (switchAfter > 0) {
            String other = format.equals("string-format") ? "string-builder" : "string-format";
            after(ex, "format-switch", switchAfter, () -> {
                for (Producer p : all) {
                    p.useFormat = other.equals("string-format");
                }
                Example.say("switched to format " + other + " after " + switchAfter + " s");
            });
        }

        List<Long> rates = new CopyOnWriteArrayList<>(); // read by the shutdown hook
        long[] last = {System.nanoTime(), 0};
        ex.onStop(() -> {
            // Producers finish their in-flight batches, then the broker goes.
            for (Thread t : producerThreads) {
                try {
                    t.join(1000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            all.forEach(Producer::close);
            broker.close();
        });
        ex.onSummary(() -> {
            long total = all.stream().mapToLong(p -> p.acked.get()).sum();
            long bytes = all.stream().mapToLong(p -> p.bytesSent).sum();
            Example.say("format " + format + " batches " + broker.batches.get() + " log bytes " + broker.logBytes()
                    + " sent bytes " + bytes + " median records/s after ready " + Example.median(rates));
            Example.say("total records " + total + " records/s " + Math.round(total / ex.elapsedSeconds()));
        });
        ex.run(seconds, 2000, () -> all.stream().mapToLong(p -> p.acked.get()).sum(), () -> {
            long now = System.nanoTime();
            long total = all.stream().mapToLong(p -> p.acked.get()).sum();
            long rate = Math.round((total - last[1]) * 1e9 / (now - last[0]));
            last[0] = now;
            last[1] = total;
            if (ex.ready()) {
                rates.add(rate);
            }
            Example.say("records/s " + rate + " jit_ms " + Example.jitMillis());
        });
    }

    /** Runs change once, seconds from now, on a thread of its own (a mid-run switch). */
    static void after(Example ex, String name, int seconds, Runnable change) {
        ex.start(name, () -> {
            try {
                Thread.sleep(seconds * 1000L);
            } catch (InterruptedException e) {
                return;
            }
            change.run();
        });
    }

    /** A producer: builds records into batches and sends them, up to MAX_IN_FLIGHT unacknowledged. */
    static final class Producer {
        final Example ex;
        final int id;
        volatile boolean useFormat; // flipped once by --switch-after
        volatile double grow; // set once by --grow-after: extra CPU time per unit of the batch loop's
        volatile boolean growCrc; // in the batch's CRC32C (buildBatch), not Producer.validateBatch
        long checksum; // the extra work's result, kept so that it is not optimized away
        private long crcFor; // buildBatch's CRC32C is computed again for this many ns
        final int batchRecords;
        final String clientId;
        final String[] values;
        final Socket socket;
        final AtomicLong acked = new AtomicLong();
        volatile long bytesSent;
        private final StringBuilder sb = new StringBuilder(256);
        private byte[] frame = new byte[1 << 16];
        private int pos;
        private long seq;

        Producer(Example ex, int id, int port, boolean useFormat, int batchRecords, int recordSize)
                throws IOException {
            this.ex = ex;
            this.id = id;
            this.useFormat = useFormat;
            this.batchRecords = batchRecords;
            this.clientId = "producer-" + id;
            // A fixed pool of record values, as kafka-producer-perf-test uses.
            values = new String[256];
            char[] v = new char[recordSize];
            for (int i = 0; i < values.length; i++) {
                for (int j = 0; j < recordSize; j++) {
                    v[j] = (char) ('a' + (i * 31 + j * 17 + id) % 26);
                }
                values[i] = new String(v);
            }
            socket = new Socket();
            socket.setTcpNoDelay(true);
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        }

        /** The upgrade regression: the key, the headers and the record each built with String.format(). */
        String formatRecord(long ts, int key, long traceId, long seq, String value) {
            String keyText = String.format(Locale.ROOT, "user-%06d", key);
            String headers = String.format(Locale.ROOT, "trace-id=%016x;seq=%d;client=%s", traceId, seq, clientId);
            return String.format(Locale.ROOT, "%d|%s|%s|%s", ts, keyText, headers, value);
        }

        /** The same text with a reused StringBuilder. */
        String buildRecord(long ts, int key, long traceId, long seq, String value) {
            StringBuilder b = sb;
            b.setLength(0);
            b.append(ts).append("|user-");
            for (int d = 100_000; d > 1 && key < d; d /= 10) {
                b.append('0');
            }
            b.append(key).append("|trace-id=");
            for (int shift = 60; shift >= 0; shift -= 4) {
                b.append(Character.forDigit((int) (traceId >>> shift) & 0xF, 16));
            }
            b.append(";seq=").append(seq).append(";client=").append(clientId).append('|').append(value);
            return b.toString();
        }

        static long mix64(long z) {
            z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
            z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
            return z ^ (z >>> 31);
        }

        private void ensure(int n) {
            if (pos + n > frame.length) {
                frame = java.util.Arrays.copyOf(frame, Math.max(frame.length * 2, pos + n));
            }
        }

        private void putInt(int at, int v) {
            frame[at] = (byte) (v >>> 24);
            frame[at + 1] = (byte) (v >>> 16);
            frame[at + 2] = (byte) (v >>> 8);
            frame[at + 3] = (byte) v;
        }

        private void putLong(int at, long v) {
            putInt(at, (int) (v >>> 32));
            putInt(at + 4, (int) v);
        }

        /** Serializes the next batch into {@code frame}; returns its length. */
        int buildBatch() {
            pos = HEADER;
            long base = seq;
            for (int i = 0; i < batchRecords; i++, seq++) {
                long ts = BASE_TIMESTAMP + seq;
                int key = (int) Math.floorMod(seq * 7919, 1_000_000L);
                long traceId = mix64(seq ^ ((long) id << 48));
                String value = values[(int) (seq & 255)];
                String text = useFormat ? formatRecord(ts, key, traceId, seq, value)
                        : buildRecord(ts, key, traceId, seq, value);
                byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
                ensure(4 + bytes.length);
                putInt(pos, bytes.length);
                System.arraycopy(bytes, 0, frame, pos + 4, bytes.length);
                pos += 4 + bytes.length;
            }
            CRC32C crc = new CRC32C();
            crc.update(frame, HEADER, pos - HEADER);
            if (crcFor > 0) {
                // --grow-in crc: the same CRC again, in this method, until the time is spent
                long deadline = System.nanoTime() + crcFor;
                do {
                    CRC32C again = new CRC32C();
                    again.update(frame, HEADER, pos - HEADER);
                    checksum += again.getValue();
                } while (System.nanoTime() < deadline);
            }
            putInt(0, pos - 4);
            putLong(4, id);
            putLong(12, base);
            putInt(20, batchRecords);
            putLong(24, BASE_TIMESTAMP + base);
            putInt(32, (int) crc.getValue());
            return pos;
        }

        void run() {
            try (DataInputStream in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
                 BufferedOutputStream out = new BufferedOutputStream(socket.getOutputStream(), 1 << 16)) {
                int inFlight = 0;
                long sent = 0;
                java.lang.management.ThreadMXBean cpu = java.lang.management.ManagementFactory.getThreadMXBean();
                long loopCpu = 0;
                while (!ex.stopping()) {
                    double g = grow;
                    if (g > 0 && loopCpu == 0) {
                        loopCpu = cpu.getCurrentThreadCpuTime();
                    } else if (g > 0) {
                        // the last loop's CPU time times g, in more work
                        long extra = (long) ((cpu.getCurrentThreadCpuTime() - loopCpu) * g);
                        if (growCrc) {
                            crcFor = extra;
                        } else {
                            checksum += validateBatch(System.nanoTime() + extra);
                        }
                        loopCpu = cpu.getCurrentThreadCpuTime();
                    }
                    int n = buildBatch();
                    out.write(frame, 0, n);
                    out.flush();
                    sent += n;
                    bytesSent = sent;
                    if (++inFlight == MAX_IN_FLIGHT) {
                        readAck(in);
                        inFlight--;
                    }
                }
                for (; inFlight > 0; inFlight--) {
                    readAck(in);
                }
                socket.shutdownOutput();
            } catch (IOException e) {
                if (!ex.stopping()) {
                    System.err.println(clientId + ": " + e);
                }
            }
        }

        /** The new code path: a checksum over the last batch, round and round until the deadline. */
        long validateBatch(long deadline) {
            long h = 0;
            for (int i = 0, n = 0; ; i = i + 8 < pos ? i + 8 : 0) {
                h = mix64(h ^ frame[i]);
                if ((++n & 255) == 0 && System.nanoTime() >= deadline) {
                    return h;
                }
            }
        }

        private void readAck(DataInputStream in) throws IOException {
            in.readLong(); // base offset
            int count = in.readInt();
            short error = in.readShort();
            if (error != 0) {
                throw new IOException("broker error " + error);
            }
            acked.addAndGet(count);
        }

        void close() {
            try {
                socket.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
    }

    /** A request from a network thread to the request handlers, answered on {@code done}
     * (a class, not a record: the JDK matrix runs this example on Java 11). */
    static final class Request {
        private final byte[] data;
        private final int length;
        private final BlockingQueue<Long> done;

        Request(byte[] data, int length, BlockingQueue<Long> done) {
            this.data = data;
            this.length = length;
            this.done = done;
        }

        byte[] data() {
            return data;
        }

        int length() {
            return length;
        }

        BlockingQueue<Long> done() {
            return done;
        }
    }

    /** The broker: an acceptor, a network thread per connection, request handlers, one log. */
    static final class Broker {
        final Example ex;
        final ServerSocket server;
        final BlockingQueue<Request> requests = new ArrayBlockingQueue<>(64);
        final List<Socket> connections = new CopyOnWriteArrayList<>();
        final AtomicLong batches = new AtomicLong();
        final Log log = new Log(16, 4 << 20);

        Broker(Example ex, int port, int handlers) throws IOException {
            this.ex = ex;
            server = new ServerSocket();
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 50);
            ex.start("data-plane-kafka-socket-acceptor-" + LISTENER + "-" + port(), this::accept);
            for (int i = 0; i < handlers; i++) {
                ex.start("data-plane-kafka-request-handler-" + i, this::handle);
            }
        }

        int port() {
            return server.getLocalPort();
        }

        long logBytes() {
            return log.appended;
        }

        void accept() {
            int processor = 0;
            while (!ex.stopping()) {
                try {
                    Socket s = server.accept();
                    s.setTcpNoDelay(true);
                    connections.add(s);
                    ex.start("data-plane-kafka-network-thread-0-" + LISTENER + "-" + processor++, () -> serve(s));
                } catch (IOException e) {
                    if (!ex.stopping()) {
                        System.err.println("acceptor: " + e);
                    }
                    return;
                }
            }
        }

        /** A network thread: reads one request, waits for its handler, writes the response. */
        void serve(Socket s) {
            BlockingQueue<Long> done = new ArrayBlockingQueue<>(1);
            byte[] buf = new byte[1 << 16];
            try (DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream(), 1 << 16));
                 DataOutputStream out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream()))) {
                while (true) {
                    int length;
                    try {
                        length = in.readInt();
                    } catch (EOFException e) {
                        return;
                    }
                    if (length < HEADER - 4 || length > (256 << 20)) {
                        throw new IOException("bad request length " + length);
                    }
                    if (buf.length < length) {
                        buf = new byte[Math.max(length, buf.length * 2)];
                    }
                    in.readFully(buf, 0, length);
                    requests.put(new Request(buf, length, done));
                    long baseOffset = done.take();
                    int count = ((buf[16] & 0xFF) << 24) | ((buf[17] & 0xFF) << 16) | ((buf[18] & 0xFF) << 8)
                            | (buf[19] & 0xFF);
                    out.writeLong(baseOffset);
                    out.writeInt(count);
                    out.writeShort(baseOffset < 0 ? 2 : 0); // 2: CORRUPT_MESSAGE
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                if (!ex.stopping()) {
                    System.err.println(Thread.currentThread().getName() + ": " + e);
                }
            } finally {
                connections.remove(s);
            }
        }

        /** A request handler: validates a batch (CRC32C, record lengths) and appends it to the log. */
        void handle() {
            CRC32C crc = new CRC32C();
            while (true) { // until close(): network threads still wait for answers while stopping
                Request r;
                try {
                    r = requests.take();
                } catch (InterruptedException e) {
                    return;
                }
                if (r.length() == 0) {
                    return; // woken by close()
                }
                byte[] b = r.data();
                int n = r.length();
                // The request is the frame without its 4-byte length prefix.
                int count = getInt(b, 16);
                int expectCrc = getInt(b, 28);
                crc.reset();
                crc.update(b, HEADER - 4, n - (HEADER - 4));
                int at = HEADER - 4;
                int records = 0;
                while (at + 4 <= n) {
                    int len = getInt(b, at);
                    if (len < 0 || at + 4 + len > n) {
                        break;
                    }
                    at += 4 + len;
                    records++;
                }
                boolean valid = (int) crc.getValue() == expectCrc && records == count && at == n;
                long offset = valid ? log.append(b, n, count) : -1;
                if (valid) {
                    batches.incrementAndGet();
                }
                r.done().add(offset);
            }
        }

        static int getInt(byte[] b, int at) {
            return ((b[at] & 0xFF) << 24) | ((b[at + 1] & 0xFF) << 16) | ((b[at + 2] & 0xFF) << 8)
                    | (b[at + 3] & 0xFF);
        }

        void close() {
            try {
                server.close();
            } catch (IOException e) {
                // closing anyway
            }
            for (Socket s : connections) {
                try {
                    s.close();
                } catch (IOException e) {
                    // closing anyway
                }
            }
            // Wake the handlers blocked on an empty queue.
            for (int i = 0; i < 64 && requests.remainingCapacity() > 0; i++) {
                requests.offer(new Request(new byte[HEADER], 0, new ArrayBlockingQueue<>(1)));
            }
        }
    }

    /** The partition log: a ring of byte[] segments, oldest overwritten first (retention). */
    static final class Log {
        final byte[][] segments;
        int segment;
        int position;
        long nextOffset;
        volatile long appended;

        Log(int count, int size) {
            segments = new byte[count][size];
        }

        synchronized long append(byte[] b, int n, int records) {
            if (position + n > segments[segment].length) {
                segment = (segment + 1) % segments.length;
                position = 0;
                if (segments[segment].length < n) {
                    segments[segment] = new byte[n];
                }
            }
            System.arraycopy(b, 0, segments[segment], position, n);
            position += n;
            appended += n;
            long base = nextOffset;
            nextOffset += records;
            return base;
        }
    }
}
