// kafka-clients 4.x producer main (client name java-4). Timestamps (base + i)
// always, headers with --headers. Idempotent by default (InitProducerId, then
// Produce with producer id/epoch/sequences, record batches, magic 2); pass
// --extra enable.idempotence=false for a plain producer. CLI and output:
// tests/clients/README.md.

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;

public class Produce {
    public static void main(String[] args) throws Exception {
        final Common c = Common.parse(args);
        c.timestampsSent = true;
        c.headersSent = c.headers;
        long linger = 5;
        long request = Math.min(30000L, c.budgetMs(0.3));
        Properties p = new Properties();
        p.put("bootstrap.servers", c.bootstrap);
        p.put("client.id", "pp-tests-" + c.client);
        p.put("acks", c.acksValue());
        p.put("compression.type", c.compression);
        p.put("key.serializer", "org.apache.kafka.common.serialization.StringSerializer");
        p.put("value.serializer", "org.apache.kafka.common.serialization.StringSerializer");
        p.put("max.block.ms", Long.toString(c.budgetMs(0.5)));
        p.put("request.timeout.ms", Long.toString(request));
        p.put("delivery.timeout.ms", Long.toString(Math.max(c.budgetMs(0.8), request + linger + 1)));
        p.put("linger.ms", Long.toString(linger));
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
            List<Header> headers = new ArrayList<>();
            if (c.headers) {
                headers.add(new RecordHeader("i", Integer.toString(i).getBytes(StandardCharsets.UTF_8)));
                headers.add(new RecordHeader("client", c.client.getBytes(StandardCharsets.UTF_8)));
            }
            long t0 = System.nanoTime();
            try {
                producer.send(new ProducerRecord<>(c.topic, part, c.timestamp(i), c.key(i), c.value(i), headers),
                        (md, ex) -> {
                            if (ex == null) c.ok(idx, md.partition(), md.offset());
                            else c.fail(idx, md != null ? md.partition() : shown, Common.errorText(ex));
                        });
            } catch (Throwable t) {
                c.fail(i, shown, Common.errorText(t));
            }
            if (System.nanoTime() - t0 > 1000000000L && c.errorOf(i) != null) stop = c.errorOf(i);
        }
        if (!c.awaitAll()) c.failUnreported("timed out after " + c.timeoutS + " s waiting for the delivery report");
        Common.bounded(() -> producer.close(Duration.ZERO), 2000);
        c.finish();
    }
}
