// A real org.apache.kafka:kafka-clients KafkaProducer for the Kafka 4.4.0
// golden capture (tests/golden/capture/capture_kafka4.py). Compiled with javac
// against each pinned kafka-clients classpath; uses only API that exists from
// 2.7 to 4.4 (byte[] serializers, RecordHeader, send().get()).
//
//   java -cp <classes>:<kafka-clients-V>/* GoldenProducer <bootstrap> <topic> <compression> <headers:0|1>
//
// Sends the four golden records (as the other golden peers do), waits for
// every acknowledgement, and prints one JSON line: the client version and per
// record partition and offset. Idempotence is asked for explicitly (it is the
// default only from 3.0) with acks=all, so InitProducerId and producer ids and
// sequences show up on the wire for every version.
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Future;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class GoldenProducer {
  static final String[][] RECORDS = {
      {"order-1", "created"},
      {"order-2", "paid"},
      {"order-1", "shipped"},
      {"order-3", "note: gift wrap please; gift wrap please; gift wrap please; gift wrap please; "
                  + "gift wrap please; gift wrap please; gift wrap please; gift wrap please; "},
  };

  static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  // AppInfoParser moved packages over the years; find it by name.
  static String appInfo(String method) throws Exception {
    for (String c : new String[] {"org.apache.kafka.common.utils.AppInfoParser",
                                  "org.apache.kafka.common.utils.internals.AppInfoParser"}) {
      try {
        return (String) Class.forName(c).getMethod(method).invoke(null);
      } catch (ClassNotFoundException e) {
        // try the next
      }
    }
    return "unknown";
  }

  public static void main(String[] args) throws Exception {
    String bootstrap = args[0];
    String topic = args[1];
    String compression = args[2];
    boolean headers = args[3].equals("1");

    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.CLIENT_ID_CONFIG, "golden-java-" + appInfo("getVersion"));
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, compression);
    p.put(ProducerConfig.LINGER_MS_CONFIG, "50");
    p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "5");
    p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "20000");
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "20000");
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());

    StringBuilder out = new StringBuilder();
    out.append("{\"kafka_clients_version\": \"").append(appInfo("getVersion"))
        .append("\", \"commit\": \"").append(appInfo("getCommitId")).append("\", \"results\": [");
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
      List<Future<RecordMetadata>> sent = new ArrayList<>();
      for (String[] r : RECORDS) {
        List<Header> hs = new ArrayList<>();
        if (headers) {
          hs.add(new RecordHeader("trace-id", utf8("abc123")));
          hs.add(new RecordHeader("source", utf8("java")));
        }
        sent.add(producer.send(new ProducerRecord<>(topic, null, utf8(r[0]), utf8(r[1]), hs)));
      }
      producer.flush();
      for (int i = 0; i < sent.size(); i++) {
        RecordMetadata m = sent.get(i).get();
        out.append(i == 0 ? "" : ", ").append("{\"partition\": ").append(m.partition())
            .append(", \"offset\": ").append(m.offset()).append("}");
      }
    }
    out.append("]}");
    System.out.println(out);
  }
}
