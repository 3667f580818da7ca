// Shared by the three Java producer mains (java/0.9, java/0.10, java/4): the
// uniform command line, deterministic keys/values/timestamps, one JSON line
// per record, the summary line and the overall deadline. Uses no Kafka API so
// it compiles against every kafka-clients version. See tests/clients/README.md.

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

final class Common {
    String client = "java";
    String bootstrap;
    String topic;
    int count = -1;
    int partitions = 0;
    String compression = "none";
    String acks = "all";
    String keyPrefix = "k";
    boolean headers = false;
    double timeoutS = 60;
    int valueSize = 32;
    long timestampBaseMs = 1700000000000L;
    final Map<String, String> extra = new LinkedHashMap<>();

    private final Object lock = new Object();
    private boolean[] reported;
    private String[] errors;
    private int acked, failed;
    private String firstError;
    private CountDownLatch latch;
    private long deadlineNanos;
    boolean headersSent = false;
    boolean timestampsSent = false;

    static Common parse(String[] a) {
        Common c = new Common();
        for (int i = 0; i < a.length; i++) {
            String f = a[i];
            String v = (i + 1 < a.length) ? a[i + 1] : null;
            switch (f) {
                case "--client": c.client = need(f, v); i++; break;
                case "--bootstrap": c.bootstrap = need(f, v); i++; break;
                case "--topic": c.topic = need(f, v); i++; break;
                case "--count": c.count = Integer.parseInt(need(f, v)); i++; break;
                case "--partitions": c.partitions = Integer.parseInt(need(f, v)); i++; break;
                case "--compression": c.compression = need(f, v); i++; break;
                case "--acks": c.acks = need(f, v); i++; break;
                case "--key-prefix": c.keyPrefix = need(f, v); i++; break;
                case "--headers": c.headers = true; break;
                case "--timeout-s": c.timeoutS = Double.parseDouble(need(f, v)); i++; break;
                case "--value-size": c.valueSize = Integer.parseInt(need(f, v)); i++; break;
                case "--timestamp-base-ms": c.timestampBaseMs = Long.parseLong(need(f, v)); i++; break;
                case "--extra": {
                    String kv = need(f, v); i++;
                    int eq = kv.indexOf('=');
                    if (eq <= 0) usage("--extra wants k=v, got " + kv);
                    c.extra.put(kv.substring(0, eq), kv.substring(eq + 1));
                    break;
                }
                default: usage("unknown flag " + f);
            }
        }
        if (c.bootstrap == null || c.topic == null || c.count < 0) usage("--bootstrap, --topic and --count are required");
        c.reported = new boolean[c.count];
        c.errors = new String[c.count];
        c.latch = new CountDownLatch(c.count);
        c.deadlineNanos = System.nanoTime() + (long) (c.timeoutS * 1e9);
        return c;
    }

    private static String need(String flag, String v) {
        if (v == null) usage(flag + " needs a value");
        return v;
    }

    private static void usage(String msg) {
        System.err.println("usage error: " + msg);
        System.exit(2);
    }

    /** A client-side timeout for configs: a fraction of --timeout-s, in ms, at least 1000. */
    long budgetMs(double fraction) {
        return Math.max(1000L, (long) (timeoutS * 1000 * fraction));
    }

    String acksValue() { return acks.equals("all") ? "all" : acks; }

    String key(int i) { return keyPrefix + "-" + i; }

    String value(int i) {
        StringBuilder sb = new StringBuilder("v-").append(i).append('-');
        while (sb.length() < valueSize) sb.append('x');
        return sb.toString();
    }

    /** null when --partitions was not given (the client's partitioner picks). */
    Integer partition(int i) { return partitions > 0 ? Integer.valueOf(i % partitions) : null; }

    long timestamp(int i) { return timestampBaseMs + i; }

    long remainingMs() { return Math.max(0, (deadlineNanos - System.nanoTime()) / 1000000L); }

    boolean pastDeadline() { return System.nanoTime() >= deadlineNanos; }

    void ok(int i, int partition, long offset) { report(i, partition, offset, null); }

    void fail(int i, int partition, String error) { report(i, partition, -1, error); }

    private void report(int i, int partition, long offset, String error) {
        synchronized (lock) {
            if (reported[i]) return;
            reported[i] = true;
            errors[i] = error;
            if (error == null) acked++;
            else {
                failed++;
                if (firstError == null) firstError = error;
            }
            System.out.println("{\"i\":" + i + ",\"partition\":" + partition + ",\"offset\":" + offset
                    + ",\"error\":" + quote(error) + "}");
            System.out.flush();
        }
        latch.countDown();
    }

    /** The error reported for record i so far, or null (none yet, or acked). */
    String errorOf(int i) {
        synchronized (lock) { return errors[i]; }
    }

    /** Waits for every delivery report until the deadline; true when all came. */
    boolean awaitAll() throws InterruptedException {
        return latch.await(remainingMs(), TimeUnit.MILLISECONDS);
    }

    void failUnreported(String error) {
        for (int i = 0; i < count; i++) {
            Integer p = partition(i);
            fail(i, p == null ? -1 : p, error);
        }
    }

    /** Prints the summary and exits: 0 only when every record was acked. */
    void finish() {
        synchronized (lock) {
            System.out.println("{\"done\":true,\"acked\":" + acked + ",\"failed\":" + failed
                    + ",\"client\":" + quote(client) + ",\"first_error\":" + quote(firstError)
                    + ",\"headers_sent\":" + headersSent + ",\"timestamps_sent\":" + timestampsSent + "}");
            System.out.flush();
            Runtime.getRuntime().halt(acked == count ? 0 : 1);
        }
    }

    /** Runs r (e.g. producer.close) on a daemon thread and waits at most ms for it. */
    static void bounded(Runnable r, long ms) {
        Thread t = new Thread(r, "bounded");
        t.setDaemon(true);
        t.start();
        try {
            t.join(ms);
        } catch (InterruptedException ignored) {
        }
    }

    /** "Class: message (caused by Class: message)", at most 4 levels deep. */
    static String errorText(Throwable t) {
        StringBuilder sb = new StringBuilder();
        int open = 0;
        Throwable cur = t;
        for (int depth = 0; cur != null && depth < 4; depth++) {
            if (depth > 0) { sb.append(" (caused by "); open++; }
            sb.append(cur.getClass().getName());
            if (cur.getMessage() != null) sb.append(": ").append(cur.getMessage());
            Throwable next = cur.getCause();
            if (next == cur) break;
            cur = next;
        }
        for (; open > 0; open--) sb.append(')');
        return sb.toString();
    }

    static String quote(String s) {
        if (s == null) return "null";
        StringBuilder sb = new StringBuilder("\"");
        for (int k = 0; k < s.length(); k++) {
            char ch = s.charAt(k);
            switch (ch) {
                case '"': sb.append("\\\""); break;
                case '\\': sb.append("\\\\"); break;
                case '\n': sb.append("\\n"); break;
                case '\r': sb.append("\\r"); break;
                case '\t': sb.append("\\t"); break;
                default:
                    if (ch < 0x20) sb.append(String.format("\\u%04x", (int) ch));
                    else sb.append(ch);
            }
        }
        return sb.append('"').toString();
    }
}
