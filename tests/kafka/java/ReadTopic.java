// Reads a whole topic with a real KafkaConsumer, exactly up to each partition's
// end offset taken BEFORE reading (the high watermark; the last stable offset
// with --read-committed), for the real-cluster test harness
// (tests/kafka/kafka_cluster.py). Prints JSON lines:
//
//   {"type":"range","partition":P,"begin":B,"end":E}          one per partition, first
//   {"type":"record","partition":P,"offset":O,"timestamp":T,"timestamp_type":"CreateTime",
//    "leader_epoch":L|null,"key":base64|null,"value":base64|null,
//    "headers":[[name, base64|null], ...]}
//
//   ReadTopic <bootstrap> <topic> [--timeout-ms N] [--read-committed]
//
// Exit 1 on error (unknown topic, timeout before reaching the end offsets).

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public final class ReadTopic {
    public static void main(String[] args) {
        if (args.length < 2) {
            System.err.println("usage: ReadTopic <bootstrap> <topic> [--timeout-ms N] [--read-committed]");
            System.exit(2);
        }
        String bootstrap = args[0];
        String topic = args[1];
        long timeoutMs = 30_000;
        boolean committed = false;
        for (int i = 2; i < args.length; i++) {
            if (args[i].equals("--timeout-ms") && i + 1 < args.length) {
                timeoutMs = Long.parseLong(args[++i]);
            } else if (args[i].equals("--read-committed")) {
                committed = true;
            } else {
                System.err.println("ReadTopic: unknown argument " + args[i]);
                System.exit(2);
            }
        }
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "pp-kafka-harness-reader");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, committed ? "read_committed" : "read_uncommitted");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
        p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "100");
        p.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "15000");
        p.put(ConsumerConfig.RETRY_BACKOFF_MS_CONFIG, "100");
        p.put(ConsumerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, "500");

        long deadline = System.currentTimeMillis() + timeoutMs;
        StringBuilder out = new StringBuilder();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
            List<PartitionInfo> infos = c.partitionsFor(topic, Duration.ofMillis(timeoutMs));
            if (infos == null || infos.isEmpty()) {
                System.err.println("ReadTopic: topic " + topic + " does not exist (no partitions in metadata)");
                System.exit(1);
            }
            List<TopicPartition> tps = new ArrayList<>();
            for (PartitionInfo info : infos) {
                tps.add(new TopicPartition(topic, info.partition()));
            }
            tps.sort((a, b) -> Integer.compare(a.partition(), b.partition()));
            // End offsets first: the read stops exactly there, whatever is produced meanwhile.
            Map<TopicPartition, Long> end = c.endOffsets(tps, Duration.ofMillis(timeoutMs));
            Map<TopicPartition, Long> begin = c.beginningOffsets(tps, Duration.ofMillis(timeoutMs));
            for (TopicPartition tp : tps) {
                out.append("{\"type\":\"range\",\"partition\":").append(tp.partition())
                   .append(",\"begin\":").append(begin.get(tp)).append(",\"end\":").append(end.get(tp)).append("}\n");
            }
            System.out.print(out);
            out.setLength(0);

            c.assign(tps);
            Set<TopicPartition> pending = new HashSet<>();
            for (TopicPartition tp : tps) {
                if (begin.get(tp) < end.get(tp)) {
                    pending.add(tp);
                    c.seek(tp, begin.get(tp));
                } else {
                    c.pause(List.of(tp));
                }
            }
            while (!pending.isEmpty()) {
                if (System.currentTimeMillis() > deadline) {
                    StringBuilder why = new StringBuilder();
                    for (TopicPartition tp : pending) {
                        why.append(' ').append(tp).append(" at ").append(c.position(tp, Duration.ofSeconds(1)))
                           .append(" of ").append(end.get(tp));
                    }
                    System.err.println("ReadTopic: timed out after " + timeoutMs + " ms before the end offsets:" + why);
                    System.exit(1);
                }
                ConsumerRecords<byte[], byte[]> recs = c.poll(Duration.ofMillis(200));
                for (ConsumerRecord<byte[], byte[]> r : recs) {
                    TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                    if (r.offset() >= end.get(tp)) {
                        continue;
                    }
                    record(out, r);
                }
                System.out.print(out);
                out.setLength(0);
                List<TopicPartition> done = new ArrayList<>();
                for (TopicPartition tp : pending) {
                    // position() can pass records that are not data (control batches, compacted gaps).
                    if (c.position(tp, Duration.ofMillis(timeoutMs)) >= end.get(tp)) {
                        done.add(tp);
                    }
                }
                if (!done.isEmpty()) {
                    pending.removeAll(done);
                    c.pause(done);
                }
            }
        } catch (Exception e) {
            System.err.println("ReadTopic: " + e.getClass().getName() + ": " + e.getMessage());
            System.exit(1);
        }
        System.out.flush();
        System.exit(0);
    }

    private static void record(StringBuilder sb, ConsumerRecord<byte[], byte[]> r) {
        sb.append("{\"type\":\"record\",\"partition\":").append(r.partition())
          .append(",\"offset\":").append(r.offset())
          .append(",\"timestamp\":").append(r.timestamp())
          .append(",\"timestamp_type\":\"").append(r.timestampType().name).append('"')
          .append(",\"leader_epoch\":").append(r.leaderEpoch().isPresent() ? r.leaderEpoch().get().toString() : "null")
          .append(",\"key\":").append(b64(r.key()))
          .append(",\"value\":").append(b64(r.value()))
          .append(",\"headers\":[");
        boolean first = true;
        for (Header h : r.headers()) {
            if (!first) sb.append(',');
            first = false;
            sb.append('[').append(b64(h.key().getBytes(StandardCharsets.UTF_8))).append(',').append(b64(h.value())).append(']');
        }
        sb.append("]}\n");
    }

    private static String b64(byte[] b) {
        return b == null ? "null" : "\"" + Base64.getEncoder().encodeToString(b) + "\"";
    }
}
