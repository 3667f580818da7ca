// Requests that no released Java producer sends on its own, built and
// serialized by kafka-clients' own generated message classes
// (MetadataRequestData + RequestHeader, AbstractRequest.serializeWithHeader)
// and sent over a plain socket, one request per connection, for the Kafka
// 4.4.0 golden capture (tests/golden/capture/capture_kafka4.py).
//
//   java -cp <classes>:<kafka-clients-4.4.0>/* GoldenRawRequests <host> <port> <topic> <version>...
//
// Metadata v10 exists only inside 2.8 (v10 topic ids, v11 dropped the
// cluster-authorized-operations flag in the same release), so the 2.8.x
// producer already sends v11. This fills that gap with Kafka's own encoder.
import java.io.DataInputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.Collections;

import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.RequestHeader;

public final class GoldenRawRequests {
  public static void main(String[] args) throws Exception {
    String host = args[0];
    int port = Integer.parseInt(args[1]);
    String topic = args[2];
    StringBuilder out = new StringBuilder("{\"sent\": [");
    for (int i = 3; i < args.length; i++) {
      short version = Short.parseShort(args[i]);
      MetadataRequestData data = new MetadataRequestData()
          .setTopics(Collections.singletonList(new MetadataRequestData.MetadataRequestTopic().setName(topic)))
          .setAllowAutoTopicCreation(false);
      MetadataRequest request = new MetadataRequest.Builder(data).build(version);
      ByteBuffer buf = request.serializeWithHeader(
          new RequestHeader(ApiKeys.METADATA, version, "golden-java-raw", i));
      byte[] frame = new byte[buf.remaining()];
      buf.get(frame);
      try (Socket s = new Socket(host, port)) {
        OutputStream os = s.getOutputStream();
        os.write(ByteBuffer.allocate(4).putInt(frame.length).array());
        os.write(frame);
        os.flush();
        DataInputStream in = new DataInputStream(s.getInputStream());
        int n = in.readInt();
        byte[] resp = new byte[n];
        in.readFully(resp);
        out.append(i == 3 ? "" : ", ").append("{\"api\": \"metadata\", \"version\": ").append(version)
            .append(", \"request_bytes\": ").append(frame.length)
            .append(", \"response_bytes\": ").append(n).append("}");
      }
    }
    System.out.println(out.append("]}"));
  }
}
