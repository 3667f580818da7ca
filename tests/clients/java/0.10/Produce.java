// kafka-clients 0.10.x producer main, built against 0.10.2.2 (client name
// java-0.10) and 0.10.0.1 (java-0.10.0, tests/clients/java/0.10.0/pom.xml).
// Timestamps (base + i) are sent; ProducerRecord has no headers before 0.11.
// 0.10.2 sends ApiVersions first and picks Produce v2 (magic 1) at most;
// 0.10.0 sends no ApiVersions and speaks Produce v2, and takes SASL from a
// JAAS file (-Djava.security.auth.login.config, e.g. in JAVA_TOOL_OPTIONS):
// it has no sasl.jaas.config. CLI and output: tests/clients/README.md.

import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

public class Produce {
    public static void main(String[] args) throws Exception {
        final Common c = Common.parse(args);
        c.timestampsSent = true;
        Properties p = new Properties();
        p.put("bootstrap.servers", c.bootstrap);
        p.put("client.id", "pp-tests-" + c.client);
        p.put("acks", c.acksValue());
        p.put("compression.type", c.compression);
        p.put("key.serializer", "org.apache.kafka.common.serialization.StringSerializer");
        p.put("value.serializer", "org.apache.kafka.common.serialization.StringSerializer");
        p.put("max.block.ms", Long.toString(c.budgetMs(0.5)));
        p.put("request.timeout.ms", Long.toString(Math.min(30000L, c.budgetMs(0.4))));
        p.put("linger.ms", "5");
        p.putAll(c.extra);
        final KafkaProducer<String, String> producer;
        try {
            producer = new KafkaProducer<>(p);
        } catch (Throwable t) {
            c.failUnreported(Common.errorText(t));
            c.finish();
            return;
        }
        String stop = null;
        for (int i = 0; i < c.count; i++) {
            final int idx = i;
            final Integer part = c.partition(i);
            final int shown = part == null ? -1 : part;
            if (stop == null && c.pastDeadline()) stop = "deadline of --timeout-s passed before the record was sent";
            if (stop != null) {
                c.fail(i, shown, "not sent: " + stop);
                continue;
            }
            long t0 = System.nanoTime();
            try {
                producer.send(new ProducerRecord<>(c.topic, part, c.timestamp(i), c.key(i), c.value(i)), new Callback() {
                    @Override
                    public void onCompletion(RecordMetadata md, Exception ex) {
                        if (ex == null) c.ok(idx, md.partition(), md.offset());
                        else c.fail(idx, md != null ? md.partition() : shown, Common.errorText(ex));
                    }
                });
            } catch (Throwable t) {
                c.fail(i, shown, Common.errorText(t));
            }
            // A send that blocked (waiting for metadata) and then failed: the
            // client cannot reach the topic, so the rest would block as long.
            if (System.nanoTime() - t0 > 1000000000L && c.errorOf(i) != null) stop = c.errorOf(i);
        }
        if (!c.awaitAll()) c.failUnreported("timed out after " + c.timeoutS + " s waiting for the delivery report");
        Common.bounded(() -> producer.close(0, TimeUnit.MILLISECONDS), 2000);
        c.finish();
    }
}
