/* CatalogService.java - request handlers over an in-memory JSON product catalog, for the
 * reload bug: after a flag flips, every request re-reads and re-parses the catalog file. */
package jflame.examples;

import java.io.ByteArrayOutputStream;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

public final class CatalogService {
    static final String USAGE = "CatalogService [--seconds N] [--flip-after S] [--threads N]"
            + " [--rate REQUESTS_PER_S (0: unlimited)] [--products N]";

    static volatile long sink;

    final Example ex;
    final Path file;
    final int products;
    /** The bug's switch: once set, every request reloads the catalog from disk. */
    volatile boolean reloadOnEveryRequest;
    volatile Catalog cached;
    final AtomicLong beforeFlip = new AtomicLong();
    final AtomicLong afterFlip = new AtomicLong();
    final AtomicLong reloads = new AtomicLong();

    CatalogService(Example ex, Path file, int products) {
        this.ex = ex;
        this.file = file;
        this.products = products;
    }

    public static void main(String[] args) throws IOException {
        Example ex = new Example(USAGE, args, "seconds", "flip-after", "threads", "rate", "products");
        int seconds = ex.intOption("seconds", 30, 1, 86_400);
        int flipAfter = ex.intOption("flip-after", 10, 0, 86_400);
        int threads = ex.intOption("threads", 4, 1, 256);
        int rate = ex.intOption("rate", 20_000, 0, 100_000_000);
        int products = ex.intOption("products", 500, 1, 1_000_000);

        Path dir = Files.createTempDirectory("jflame-catalog-");
        Path file = dir.resolve("catalog.json");
        Files.writeString(file, writeCatalogJson(products), StandardCharsets.UTF_8);
        CatalogService service = new CatalogService(ex, file, products);
        service.cached = parseCatalog(file);
        Example.say("catalog " + file + " bytes " + Files.size(file) + " products " + service.cached.byId.size()
                + " threads " + threads + " rate " + (rate == 0 ? "unlimited" : rate) + " flip-after " + flipAfter);

        for (int i = 1; i <= threads; i++) {
            int index = i;
            double perThread = rate == 0 ? 0 : rate / (double) threads;
            ex.start("http-nio-8080-exec-" + i, () -> service.serve(index, perThread));
        }

        List<Long> ratesBefore = new CopyOnWriteArrayList<>(); // read by the shutdown hook
        List<Long> ratesAfter = new CopyOnWriteArrayList<>();
        long flipAt = ex.startNanos + TimeUnit.SECONDS.toNanos(flipAfter);
        long[] last = {System.nanoTime(), 0};
        boolean[] flippedInWindow = {false};
        ex.onSummary(() -> {
            long before = service.beforeFlip.get();
            long after = service.afterFlip.get();
            Example.say("requests before flip " + before + " after flip " + after + " reloads " + service.reloads.get()
                    + " median requests/s (after ready) before " + Example.median(ratesBefore)
                    + " after " + Example.median(ratesAfter));
            Example.say("total requests " + (before + after) + " requests/s "
                    + Math.round((before + after) / ex.elapsedSeconds()));
            try {
                Files.deleteIfExists(file);
                Files.deleteIfExists(dir);
            } catch (IOException e) {
                System.err.println("cleanup: " + e);
            }
        });
        ex.run(seconds, 500, () -> service.beforeFlip.get() + service.afterFlip.get(), () -> {
            long now = System.nanoTime();
            if (!service.reloadOnEveryRequest && now - flipAt >= 0) {
                service.reloadOnEveryRequest = true;
                flippedInWindow[0] = true;
                Example.say("flip: every request now reloads " + file);
            }
            if (now - last[0] < TimeUnit.MILLISECONDS.toNanos(1999)) {
                return;
            }
            long total = service.beforeFlip.get() + service.afterFlip.get();
            long r = Math.round((total - last[1]) * 1e9 / (now - last[0]));
            if (!flippedInWindow[0] && ex.ready()) { // a window that saw the flip belongs to neither side
                (service.reloadOnEveryRequest ? ratesAfter : ratesBefore).add(r);
            }
            flippedInWindow[0] = false;
            last[0] = now;
            last[1] = total;
            Example.say("requests/s " + r);
        });
    }

    /** A request-handler thread: handles a deterministic request mix at a paced rate (0: flat out). */
    void serve(int index, double perSecond) {
        SplittableRandom random = new SplittableRandom(0x5EED_0000L + index);
        long start = System.nanoTime();
        long handled = 0;
        while (!ex.stopping()) {
            if (perSecond > 0) {
                long now = System.nanoTime();
                double due = (now - start) * perSecond / 1e9;
                if (due - handled > perSecond / 10) {
                    // Over 100 ms behind: drop the backlog rather than burst to catch up.
                    start = now - (long) (handled * 1e9 / perSecond);
                } else if (due < handled + 1) {
                    // Sleep in ticks of at least 1 ms and then serve what fell due, as a
                    // pool under a steady load does, rather than waking for every request.
                    long wake = start + (long) ((handled + 1) * 1e9 / perSecond);
                    LockSupport.parkNanos(Math.max(wake - now, TimeUnit.MILLISECONDS.toNanos(1)));
                    continue;
                }
            }
            try {
                boolean reload = reloadOnEveryRequest;
                sink += handle(random, reload).length();
                (reload ? afterFlip : beforeFlip).incrementAndGet();
            } catch (IOException | RuntimeException e) {
                if (!ex.stopping()) {
                    System.err.println(Thread.currentThread().getName() + ": " + e);
                }
                return;
            }
            handled++;
        }
    }

    /** One request: a product page, a category listing or a cart quote, rendered as JSON. */
    String handle(SplittableRandom random, boolean reload) throws IOException {
        Catalog catalog = cached;
        if (reload) {
            // The bug: the catalog is reloaded on every request instead of on change.
            catalog = parseCatalog(file);
            reloads.incrementAndGet();
        }
        int kind = random.nextInt(100);
        StringBuilder out = new StringBuilder(512);
        if (kind < 60) {
            Product p = catalog.byId.get(100_000L + random.nextInt(products));
            renderProduct(out, p);
        } else if (kind < 85) {
            List<Product> list = catalog.byCategory.get(CATEGORIES[random.nextInt(CATEGORIES.length)]);
            out.append("{\"items\":[");
            int n = list == null ? 0 : Math.min(10, list.size());
            for (int i = 0; i < n; i++) {
                if (i > 0) {
                    out.append(',');
                }
                renderProduct(out, list.get(i));
            }
            out.append("]}");
        } else {
            long cents = 0;
            out.append("{\"lines\":[");
            for (int i = 0; i < 5; i++) {
                Product p = catalog.byId.get(100_000L + random.nextInt(products));
                int qty = 1 + random.nextInt(4);
                if (p != null && p.active) {
                    cents += p.priceCents * qty;
                    out.append(i > 0 ? "," : "").append("{\"sku\":\"").append(p.sku).append("\",\"qty\":")
                            .append(qty).append('}');
                }
            }
            long tax = cents * 19 / 100;
            out.append("],\"net\":").append(cents / 100).append('.').append(cents % 100 / 10).append(cents % 10)
                    .append(",\"tax\":").append(tax / 100).append('.').append(tax % 100 / 10).append(tax % 10)
                    .append('}');
        }
        return out.toString();
    }

    static void renderProduct(StringBuilder out, Product p) {
        if (p == null) {
            out.append("null");
            return;
        }
        out.append("{\"id\":").append(p.id).append(",\"sku\":\"").append(p.sku).append("\",\"name\":\"");
        escape(out, p.name);
        out.append("\",\"price\":").append(p.priceCents / 100).append('.').append(p.priceCents % 100 / 10)
                .append(p.priceCents % 10).append(",\"stock\":").append(p.stock).append(",\"tags\":[");
        for (int i = 0; i < p.tags.size(); i++) {
            out.append(i > 0 ? ",\"" : "\"").append(p.tags.get(i)).append('"');
        }
        out.append("]}");
    }

    static void escape(StringBuilder out, String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                default -> {
                    if (c < 0x20 || c > 0x7E) {
                        out.append("\\u");
                        for (int shift = 12; shift >= 0; shift -= 4) {
                            out.append(Character.forDigit((c >> shift) & 0xF, 16));
                        }
                    } else {
                        out.append(c);
                    }
                }
            }
        }
    }

    // --- The catalog: reading and parsing ---

    static final String[] CATEGORIES = {"garden", "kitchen", "tools", "toys", "books", "audio", "outdoor", "office"};
    static final String[] WORDS = {"Widget", "Gadget", "Sprocket", "Flange", "Gizmo", "Doohickey", "Bracket",
        "Lantern", "Kettle", "Trowel", "Caf\u00e9", "Cable", "Hinge", "Spanner", "Whisk", "Speaker"};

    record Product(long id, String sku, String name, String category, long priceCents, int stock, boolean active,
                   List<String> tags, Map<String, Object> attributes, String description) {
    }

    record Catalog(int version, Map<Long, Product> byId, Map<String, List<Product>> byCategory) {
    }

    /** Reads the whole catalog file through a small buffer (one read(2) per 8 KiB). */
    static String readCatalogFile(Path file) throws IOException {
        try (InputStream in = new FileInputStream(file.toFile())) {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream(1 << 16);
            byte[] buf = new byte[8192];
            for (int n; (n = in.read(buf)) > 0; ) {
                bytes.write(buf, 0, n);
            }
            return bytes.toString(StandardCharsets.UTF_8);
        }
    }

    /** Reads the catalog file and parses it into products indexed by id and by category. */
    @SuppressWarnings("unchecked")
    static Catalog parseCatalog(Path file) throws IOException {
        String text = readCatalogFile(file);
        Object root = new JsonParser(text).parseDocument();
        if (!(root instanceof Map<?, ?> top) || !(top.get("products") instanceof List<?> items)) {
            throw new IOException(file + ": no products array");
        }
        Map<Long, Product> byId = new HashMap<>();
        Map<String, List<Product>> byCategory = new HashMap<>();
        for (Object item : items) {
            Map<String, Object> m = (Map<String, Object>) item;
            Product p = new Product(((Number) m.get("id")).longValue(), (String) m.get("sku"), (String) m.get("name"),
                    (String) m.get("category"), Math.round(((Number) m.get("price")).doubleValue() * 100),
                    ((Number) m.get("stock")).intValue(), Boolean.TRUE.equals(m.get("active")),
                    (List<String>) (List<?>) m.get("tags"), (Map<String, Object>) m.get("attributes"),
                    (String) m.get("description"));
            byId.put(p.id(), p);
            byCategory.computeIfAbsent(p.category(), k -> new ArrayList<>()).add(p);
        }
        for (List<Product> list : byCategory.values()) {
            list.sort(Comparator.comparingLong(Product::priceCents).thenComparingLong(Product::id));
        }
        return new Catalog(((Number) top.get("version")).intValue(), byId, byCategory);
    }

    /** The catalog file's text: deterministic for a product count. */
    static String writeCatalogJson(int products) {
        SplittableRandom random = new SplittableRandom(20240101L);
        StringBuilder sb = new StringBuilder(products * 320);
        sb.append("{\n  \"version\": 7,\n  \"generated\": \"2024-01-01T00:00:00Z\",\n  \"products\": [\n");
        for (int i = 0; i < products; i++) {
            long id = 100_000L + i;
            String word = WORDS[random.nextInt(WORDS.length)];
            String category = CATEGORIES[random.nextInt(CATEGORIES.length)];
            long cents = 99 + random.nextInt(50_000);
            sb.append("    {\"id\": ").append(id)
                    .append(", \"sku\": \"SKU-").append(id)
                    .append("\", \"name\": \"").append(word).append(' ').append(i % 7 == 0 ? "\\\"Deluxe\\\" " : "")
                    .append(random.nextInt(1000))
                    .append("\", \"category\": \"").append(category)
                    .append("\", \"price\": ").append(cents / 100).append('.').append(cents % 100 / 10)
                    .append(cents % 10)
                    .append(", \"currency\": \"EUR\", \"stock\": ").append(random.nextInt(500))
                    .append(", \"active\": ").append(random.nextInt(10) != 0)
                    .append(", \"tags\": [");
            int tags = random.nextInt(4);
            for (int t = 0; t < tags; t++) {
                sb.append(t > 0 ? ", " : "").append('"').append(CATEGORIES[random.nextInt(CATEGORIES.length)])
                        .append("-pick\"");
            }
            sb.append("], \"attributes\": {\"color\": \"").append(new String[] {"red", "green", "blue", "black"}[i & 3])
                    .append("\", \"weight_g\": ").append(50 + random.nextInt(5000))
                    .append(", \"dimensions_cm\": [").append(1 + random.nextInt(90)).append(", ")
                    .append(1 + random.nextInt(90)).append(", ").append(1 + random.nextInt(90))
                    .append("], \"fragile\": ").append(random.nextBoolean() ? "true" : "false")
                    .append(", \"warranty\": ").append(random.nextInt(3) == 0 ? "null" : "\"2y\"")
                    .append("}, \"description\": \"A ").append(word.toLowerCase())
                    .append(" for the ").append(category)
                    .append(".\\nShips in 2\\u20133 days; rated ").append(random.nextInt(50) / 10.0)
                    .append("/5 \\u2605\"}").append(i + 1 < products ? ",\n" : "\n");
        }
        sb.append("  ]\n}\n");
        return sb.toString();
    }

    /** A small JSON parser: objects, arrays, strings with escapes, numbers, true, false, null. */
    static final class JsonParser {
        private final String s;
        private int i;

        JsonParser(String s) {
            this.s = s;
        }

        Object parseDocument() throws IOException {
            Object v = parseValue();
            skipWhitespace();
            if (i != s.length()) {
                throw error("trailing text");
            }
            return v;
        }

        Object parseValue() throws IOException {
            skipWhitespace();
            if (i >= s.length()) {
                throw error("unexpected end");
            }
            char c = s.charAt(i);
            switch (c) {
                case '{':
                    return parseObject();
                case '[':
                    return parseArray();
                case '"':
                    return parseString();
                case 't':
                    return literal("true", Boolean.TRUE);
                case 'f':
                    return literal("false", Boolean.FALSE);
                case 'n':
                    return literal("null", null);
                default:
                    if (c == '-' || (c >= '0' && c <= '9')) {
                        return parseNumber();
                    }
                    throw error("unexpected '" + c + "'");
            }
        }

        Map<String, Object> parseObject() throws IOException {
            Map<String, Object> m = new LinkedHashMap<>();
            i++; // {
            skipWhitespace();
            if (peek() == '}') {
                i++;
                return m;
            }
            while (true) {
                skipWhitespace();
                if (peek() != '"') {
                    throw error("expected a key");
                }
                String key = parseString();
                skipWhitespace();
                expect(':');
                m.put(key, parseValue());
                skipWhitespace();
                char c = next();
                if (c == '}') {
                    return m;
                }
                if (c != ',') {
                    throw error("expected ',' or '}'");
                }
            }
        }

        List<Object> parseArray() throws IOException {
            List<Object> list = new ArrayList<>();
            i++; // [
            skipWhitespace();
            if (peek() == ']') {
                i++;
                return list;
            }
            while (true) {
                list.add(parseValue());
                skipWhitespace();
                char c = next();
                if (c == ']') {
                    return list;
                }
                if (c != ',') {
                    throw error("expected ',' or ']'");
                }
            }
        }

        String parseString() throws IOException {
            i++; // "
            StringBuilder sb = null;
            int from = i;
            while (true) {
                if (i >= s.length()) {
                    throw error("unterminated string");
                }
                char c = s.charAt(i);
                if (c == '"') {
                    String tail = s.substring(from, i++);
                    return sb == null ? tail : sb.append(tail).toString();
                }
                if (c != '\\') {
                    i++;
                    continue;
                }
                if (sb == null) {
                    sb = new StringBuilder();
                }
                sb.append(s, from, i);
                i++;
                char e = next();
                switch (e) {
                    case '"', '\\', '/' -> sb.append(e);
                    case 'b' -> sb.append('\b');
                    case 'f' -> sb.append('\f');
                    case 'n' -> sb.append('\n');
                    case 'r' -> sb.append('\r');
                    case 't' -> sb.append('\t');
                    case 'u' -> {
                        if (i + 4 > s.length()) {
                            throw error("short \\u escape");
                        }
                        int cp = 0;
                        for (int k = 0; k < 4; k++) {
                            int d = Character.digit(s.charAt(i++), 16);
                            if (d < 0) {
                                throw error("bad \\u escape");
                            }
                            cp = cp * 16 + d;
                        }
                        sb.append((char) cp);
                    }
                    default -> throw error("bad escape '\\" + e + "'");
                }
                from = i;
            }
        }

        Number parseNumber() throws IOException {
            int from = i;
            if (peek() == '-') {
                i++;
            }
            boolean integral = true;
            while (i < s.length()) {
                char c = s.charAt(i);
                if (c >= '0' && c <= '9') {
                    i++;
                } else if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
                    integral = false;
                    i++;
                } else {
                    break;
                }
            }
            String text = s.substring(from, i);
            try {
                return integral && i - from < 19 ? (Number) Long.parseLong(text) : (Number) Double.parseDouble(text);
            } catch (NumberFormatException e) {
                throw error("bad number '" + text + "'");
            }
        }

        private Object literal(String word, Object value) throws IOException {
            if (!s.startsWith(word, i)) {
                throw error("bad literal");
            }
            i += word.length();
            return value;
        }

        private void skipWhitespace() {
            while (i < s.length()) {
                char c = s.charAt(i);
                if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
                    return;
                }
                i++;
            }
        }

        private char peek() throws IOException {
            if (i >= s.length()) {
                throw error("unexpected end");
            }
            return s.charAt(i);
        }

        private char next() throws IOException {
            char c = peek();
            i++;
            return c;
        }

        private void expect(char c) throws IOException {
            if (next() != c) {
                throw error("expected '" + c + "'");
            }
        }

        private IOException error(String what) {
            return new IOException("catalog JSON at offset " + i + ": " + what);
        }
    }
}
