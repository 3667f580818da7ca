// Admin operations for the real-cluster test harness (tests/kafka/kafka_cluster.py).
// Compiled by the harness with javac against the fetched broker's kafka-clients
// and run with `java -cp`. One operation per run; prints JSON on stdout, errors
// on stderr with exit code 1 (2 for bad usage).
//
//   KafkaAdminTool <bootstrap> create-topic <name> <partitions> <rf|-1> [key=value ...]
//   KafkaAdminTool <bootstrap> delete-topic <name>
//   KafkaAdminTool <bootstrap> alter-config <topic> key=value ...   (value empty = delete)
//   KafkaAdminTool <bootstrap> move-leader <topic> <partition> <broker-id>
//   KafkaAdminTool <bootstrap> describe-cluster
//
// move-leader reorders the partition's replica list with a reassignment so
// <broker-id> comes first (the preferred replica), waits for the reassignment
// to finish, then runs a preferred leader election. The caller (Python) waits
// until every live broker's metadata shows the new leader.

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.PartitionReassignment;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.ElectionNotNeededException;
import org.apache.kafka.common.errors.TopicExistsException;

public final class KafkaAdminTool {
    private static final long WAIT_MS = 30_000;

    public static void main(String[] args) {
        if (args.length < 2) {
            usage();
        }
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(AdminClientConfig.CLIENT_ID_CONFIG, "pp-kafka-harness-admin");
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "25000");
        props.put(AdminClientConfig.RETRY_BACKOFF_MS_CONFIG, "100");
        props.put(AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, "500");
        try (Admin admin = Admin.create(props)) {
            String cmd = args[1];
            switch (cmd) {
                case "create-topic": createTopic(admin, args); break;
                case "delete-topic": need(args, 3); admin.deleteTopics(List.of(args[2])).all().get(); System.out.println("{\"deleted\":" + q(args[2]) + "}"); break;
                case "alter-config": alterConfig(admin, args); break;
                case "move-leader": moveLeader(admin, args); break;
                case "describe-cluster": describeCluster(admin); break;
                default: usage();
            }
        } catch (ExecutionException e) {
            fail(e.getCause() != null ? e.getCause() : e);
        } catch (Exception e) {
            fail(e);
        }
        System.exit(0);
    }

    private static void createTopic(Admin admin, String[] args) throws Exception {
        need(args, 5);
        String name = args[2];
        int partitions = Integer.parseInt(args[3]);
        int rf = Integer.parseInt(args[4]);
        NewTopic topic = new NewTopic(name, Optional.of(partitions),
                rf < 0 ? Optional.empty() : Optional.of((short) rf));
        topic.configs(keyValues(args, 5));
        try {
            admin.createTopics(List.of(topic)).all().get();
            System.out.println("{\"created\":" + q(name) + "}");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof TopicExistsException) {
                System.err.println("topic already exists: " + name);
                System.exit(3);
            }
            throw e;
        }
    }

    private static void alterConfig(Admin admin, String[] args) throws Exception {
        need(args, 4);
        ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, args[2]);
        List<AlterConfigOp> ops = new ArrayList<>();
        for (Map.Entry<String, String> kv : keyValues(args, 3).entrySet()) {
            if (kv.getValue().isEmpty()) {
                ops.add(new AlterConfigOp(new ConfigEntry(kv.getKey(), null), AlterConfigOp.OpType.DELETE));
            } else {
                ops.add(new AlterConfigOp(new ConfigEntry(kv.getKey(), kv.getValue()), AlterConfigOp.OpType.SET));
            }
        }
        admin.incrementalAlterConfigs(Map.of(res, ops)).all().get();
        System.out.println("{\"altered\":" + q(args[2]) + "}");
    }

    private static void moveLeader(Admin admin, String[] args) throws Exception {
        need(args, 5);
        String topic = args[2];
        int partition = Integer.parseInt(args[3]);
        int to = Integer.parseInt(args[4]);
        TopicPartition tp = new TopicPartition(topic, partition);

        TopicDescription desc = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
        TopicPartitionInfo info = null;
        for (TopicPartitionInfo p : desc.partitions()) {
            if (p.partition() == partition) {
                info = p;
            }
        }
        if (info == null) {
            throw new IllegalArgumentException("no partition " + tp);
        }
        List<Integer> order = new ArrayList<>();
        for (Node n : info.replicas()) {
            order.add(n.id());
        }
        if (!order.contains(to)) {
            throw new IllegalArgumentException("broker " + to + " is not a replica of " + tp + " (replicas " + order + ")");
        }
        boolean reordered = false;
        if (order.get(0) != to) {
            order.remove(Integer.valueOf(to));
            order.add(0, to);
            admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(order)))).all().get();
            reordered = true;
            long deadline = System.currentTimeMillis() + WAIT_MS;
            while (true) {
                Map<TopicPartition, PartitionReassignment> ongoing =
                        admin.listPartitionReassignments(Set.of(tp)).reassignments().get();
                if (!ongoing.containsKey(tp)) {
                    break;
                }
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("reassignment of " + tp + " to " + order + " still running after " + WAIT_MS + " ms");
                }
                Thread.sleep(100);
            }
        }
        // The preferred replica may not be in the ISR yet (e.g. just restarted):
        // retry the election, bounded in time.
        long deadline = System.currentTimeMillis() + WAIT_MS;
        String outcome;
        while (true) {
            Map<TopicPartition, Optional<Throwable>> res =
                    admin.electLeaders(ElectionType.PREFERRED, Set.of(tp)).partitions().get();
            Optional<Throwable> err = res.getOrDefault(tp, Optional.empty());
            if (err.isEmpty()) {
                outcome = "elected";
                break;
            }
            if (err.get() instanceof ElectionNotNeededException) {
                outcome = "already-leader";
                break;
            }
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("preferred leader election for " + tp + " failed: " + err.get());
            }
            Thread.sleep(200);
        }
        System.out.println("{\"topic\":" + q(topic) + ",\"partition\":" + partition + ",\"replicas\":" + order
                + ",\"reordered\":" + reordered + ",\"election\":" + q(outcome) + "}");
    }

    private static void describeCluster(Admin admin) throws Exception {
        DescribeClusterResult r = admin.describeCluster();
        Collection<Node> nodes = r.nodes().get();
        Node controller = r.controller().get();
        StringBuilder sb = new StringBuilder();
        sb.append("{\"cluster_id\":").append(q(r.clusterId().get()));
        sb.append(",\"controller\":").append(controller == null ? -1 : controller.id());
        sb.append(",\"nodes\":[");
        boolean first = true;
        for (Node n : nodes) {
            if (!first) sb.append(',');
            first = false;
            sb.append("{\"id\":").append(n.id()).append(",\"host\":").append(q(n.host()))
              .append(",\"port\":").append(n.port()).append('}');
        }
        sb.append("]}");
        System.out.println(sb);
    }

    private static Map<String, String> keyValues(String[] args, int from) {
        Map<String, String> m = new HashMap<>();
        for (int i = from; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("expected key=value, got '" + args[i] + "'");
            }
            m.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        return m;
    }

    static String q(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder sb = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': sb.append("\\\""); break;
                case '\\': sb.append("\\\\"); break;
                case '\n': sb.append("\\n"); break;
                case '\r': sb.append("\\r"); break;
                case '\t': sb.append("\\t"); break;
                default:
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
            }
        }
        return sb.append('"').toString();
    }

    private static void need(String[] args, int n) {
        if (args.length < n) {
            usage();
        }
    }

    private static void usage() {
        System.err.println("usage: KafkaAdminTool <bootstrap> create-topic|delete-topic|alter-config|move-leader|describe-cluster ...");
        System.exit(2);
    }

    private static void fail(Throwable t) {
        System.err.println("KafkaAdminTool: " + t.getClass().getName() + ": " + t.getMessage());
        System.exit(1);
    }
}
