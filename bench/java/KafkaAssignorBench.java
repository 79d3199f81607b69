import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Supplier;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupAssignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberSubscription;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;

/**
 * kassign's benchmarks time Kafka's own assignors with this harness, on the scenario the Python side
 * wrote, in the same run as kassign (bench/kafka_java.py starts it and talks to it).
 *
 * <p>Usage: {@code java -cp HARNESS:KAFKA KafkaAssignorBench (sticky|cooperative-sticky|uniform) SCENARIO_FILE},
 * then one
 * command per line on stdin: {@code run} times one assignment and prints its seconds; {@code digest}
 * prints the SHA-256 of the last result as "member TAB topic TAB partition" lines, members then topics
 * then partitions in order (the Python side hashes kassign's result the same way); {@code quit}.
 *
 * <p>What is timed is the assignor's own entry point: for {@code sticky}, the leader's
 * {@code StickyAssignor.assign(Cluster, GroupSubscription)} (it decodes every member's user data), and
 * likewise for {@code cooperative-sticky}, whose members send their owned partitions and generation;
 * for {@code uniform}, the group coordinator's {@code UniformAssignor.assign(GroupSpec,
 * SubscribedTopicDescriber)} on a group spec built beforehand, as the coordinator keeps its group
 * in memory. Inputs the assignor may consume (user data buffers) are prepared fresh before each run.
 *
 * <p>Scenario file, whitespace-separated (names contain no whitespace):
 * <pre>
 * topics T            then T lines: name partitions topic-id
 * subscriptions S     then S lines: k topic-index... (k indices)
 * members M           then M lines: member-id subscription-number generation k (topic-index partition)... (k pairs)
 * </pre>
 */
public final class KafkaAssignorBench {

    private KafkaAssignorBench() {
    }

    /** The scenario as read from the file: topics by index, members in the file's order. */
    static final class Scenario {
        final List<String> topicNames = new ArrayList<>();
        final List<Integer> partitionCounts = new ArrayList<>();
        final List<Uuid> topicIds = new ArrayList<>();
        final List<List<Integer>> subscriptions = new ArrayList<>();
        final List<String> memberIds = new ArrayList<>();
        final List<Integer> memberSubscription = new ArrayList<>();
        final List<Integer> memberGeneration = new ArrayList<>();
        final List<int[]> memberOwned = new ArrayList<>();  // topic index, partition, topic index, partition...

        static Scenario read(String path) throws IOException {
            Scenario scenario = new Scenario();
            String[] words = new String(Files.readAllBytes(Paths.get(path)), StandardCharsets.UTF_8).trim().split("\\s+");
            Cursor in = new Cursor(words);
            int topics = in.section("topics");
            for (int t = 0; t < topics; t++) {
                scenario.topicNames.add(in.word());
                scenario.partitionCounts.add(in.number());
                scenario.topicIds.add(Uuid.fromString(in.word()));
            }
            int subscriptions = in.section("subscriptions");
            for (int s = 0; s < subscriptions; s++) {
                int count = in.number();
                List<Integer> topicIndices = new ArrayList<>(count);
                for (int i = 0; i < count; i++) {
                    topicIndices.add(in.number());
                }
                scenario.subscriptions.add(topicIndices);
            }
            int members = in.section("members");
            for (int m = 0; m < members; m++) {
                scenario.memberIds.add(in.word());
                scenario.memberSubscription.add(in.number());
                scenario.memberGeneration.add(in.number());
                int[] owned = new int[2 * in.number()];
                for (int i = 0; i < owned.length; i++) {
                    owned[i] = in.number();
                }
                scenario.memberOwned.add(owned);
            }
            return scenario;
        }

        List<String> subscribedNames(int member) {
            List<String> names = new ArrayList<>();
            for (int t : subscriptions.get(memberSubscription.get(member))) {
                names.add(topicNames.get(t));
            }
            return names;
        }
    }

    /** Reads the scenario file's words in order. */
    static final class Cursor {
        private final String[] words;
        private int next;

        Cursor(String[] words) {
            this.words = words;
        }

        String word() {
            return words[next++];
        }

        int number() {
            return Integer.parseInt(word());
        }

        int section(String name) {
            String found = word();
            if (!found.equals(name)) {
                throw new IllegalArgumentException("scenario file: expected section " + name + ", found " + found);
            }
            return number();
        }
    }

    /** One assignor over one scenario: prepares its inputs, runs it, and lists its last result. */
    interface Case {
        void prepare();

        void run();

        /** The last result as sorted "member TAB topic TAB partition" rows. */
        Map<String, TreeMap<String, List<Integer>>> result();
    }

    /** A sticky assignor as a group leader runs it: the eager one reads owned partitions from user data,
     * the cooperative one from the subscription's owned partitions and generation. */
    static final class StickyCase implements Case {
        private final Scenario scenario;
        private final boolean cooperative;
        private final List<List<TopicPartition>> owned = new ArrayList<>();
        private final Cluster cluster;
        private final List<List<String>> topicLists = new ArrayList<>();
        private final List<ByteBuffer> userData = new ArrayList<>();
        private GroupSubscription prepared;
        private GroupAssignment last;

        StickyCase(Scenario scenario, boolean cooperative) {
            this.scenario = scenario;
            this.cooperative = cooperative;
            List<PartitionInfo> metadata = new ArrayList<>();
            Node[] noReplicas = new Node[0];
            for (int t = 0; t < scenario.topicNames.size(); t++) {
                for (int p = 0; p < scenario.partitionCounts.get(t); p++) {
                    metadata.add(new PartitionInfo(scenario.topicNames.get(t), p, Node.noNode(), noReplicas, noReplicas));
                }
            }
            cluster = new Cluster("bench", Collections.emptyList(), metadata, Collections.emptySet(), Collections.emptySet());
            for (int m = 0; m < scenario.memberIds.size(); m++) {
                List<String> topics = scenario.subscribedNames(m);
                int[] pairs = scenario.memberOwned.get(m);
                List<TopicPartition> partitions = new ArrayList<>(pairs.length / 2);
                for (int i = 0; i < pairs.length; i += 2) {
                    partitions.add(new TopicPartition(scenario.topicNames.get(pairs[i]), pairs[i + 1]));
                }
                topicLists.add(topics);
                owned.add(partitions);
                userData.add(encodedHistory(m, topics, partitions));
            }
        }

        private ConsumerPartitionAssignor assignor() {
            return cooperative ? new CooperativeStickyAssignor() : new StickyAssignor();
        }

        /** What member {@code m}'s own assignor sends after holding {@code partitions} (none: a new member). */
        private ByteBuffer encodedHistory(int m, List<String> topics, List<TopicPartition> partitions) {
            if (partitions.isEmpty() && scenario.memberGeneration.get(m) < 0) {
                return null;
            }
            ConsumerPartitionAssignor memberSide = assignor();
            ConsumerGroupMetadata metadata = new ConsumerGroupMetadata(
                "bench", scenario.memberGeneration.get(m), scenario.memberIds.get(m), Optional.empty());
            memberSide.onAssignment(new Assignment(partitions), metadata);
            return memberSide.subscriptionUserData(new HashSet<>(topics));
        }

        @Override
        public void prepare() {
            Map<String, Subscription> subscriptions = new HashMap<>();
            for (int m = 0; m < scenario.memberIds.size(); m++) {
                ByteBuffer data = userData.get(m);
                ByteBuffer fresh = data == null ? null : data.duplicate();
                // an eager member has given up everything before it joins; a cooperative one lists what it holds
                subscriptions.put(scenario.memberIds.get(m), cooperative
                    ? new Subscription(topicLists.get(m), fresh, owned.get(m), scenario.memberGeneration.get(m), Optional.empty())
                    : new Subscription(topicLists.get(m), fresh));
            }
            prepared = new GroupSubscription(subscriptions);
        }

        @Override
        public void run() {
            last = assignor().assign(cluster, prepared);
        }

        @Override
        public Map<String, TreeMap<String, List<Integer>>> result() {
            Map<String, TreeMap<String, List<Integer>>> rows = new TreeMap<>();
            for (Map.Entry<String, Assignment> entry : last.groupAssignment().entrySet()) {
                TreeMap<String, List<Integer>> byTopic = new TreeMap<>();
                for (TopicPartition tp : entry.getValue().partitions()) {
                    byTopic.computeIfAbsent(tp.topic(), k -> new ArrayList<>()).add(tp.partition());
                }
                rows.put(entry.getKey(), byTopic);
            }
            return rows;
        }
    }

    /** The group coordinator's uniform assignor (KIP-848) over a group spec of our own making. */
    static final class UniformCase implements Case {
        private final Scenario scenario;
        private final Map<Uuid, String> topicNameById = new HashMap<>();
        private final Spec spec;
        private final Describer describer;
        private Map<String, MemberAssignment> last;

        UniformCase(Scenario scenario) {
            this.scenario = scenario;
            for (int t = 0; t < scenario.topicIds.size(); t++) {
                topicNameById.put(scenario.topicIds.get(t), scenario.topicNames.get(t));
            }
            spec = new Spec(scenario);
            describer = new Describer(scenario);
        }

        @Override
        public void prepare() {
        }

        @Override
        public void run() {
            last = new UniformAssignor().assign(spec, describer).members();
        }

        @Override
        public Map<String, TreeMap<String, List<Integer>>> result() {
            Map<String, TreeMap<String, List<Integer>>> rows = new TreeMap<>();
            for (Map.Entry<String, MemberAssignment> entry : last.entrySet()) {
                TreeMap<String, List<Integer>> byTopic = new TreeMap<>();
                for (Map.Entry<Uuid, Set<Integer>> topic : entry.getValue().partitions().entrySet()) {
                    byTopic.put(topicNameById.get(topic.getKey()), new ArrayList<>(topic.getValue()));
                }
                rows.put(entry.getKey(), byTopic);
            }
            return rows;
        }
    }

    /** Members in a HashMap put in the file's order; each member's current target as topic id -> a
     * HashSet built at once from its listed partitions, as the coordinator holds them. */
    static final class Spec implements GroupSpec {
        private final Map<String, MemberSubscription> subscriptions = new HashMap<>();
        private final Map<String, MemberAssignment> assignments = new HashMap<>();
        private final Map<Uuid, Set<Integer>> assigned = new HashMap<>();
        private final SubscriptionType type;

        Spec(Scenario scenario) {
            boolean homogeneous = new HashSet<>(scenario.memberSubscription).size() <= 1;
            type = homogeneous ? SubscriptionType.HOMOGENEOUS : SubscriptionType.HETEROGENEOUS;
            for (int m = 0; m < scenario.memberIds.size(); m++) {
                Set<Uuid> topicIds = new HashSet<>();
                for (int t : scenario.subscriptions.get(scenario.memberSubscription.get(m))) {
                    topicIds.add(scenario.topicIds.get(t));
                }
                Map<Uuid, List<Integer>> listed = new java.util.LinkedHashMap<>();
                int[] owned = scenario.memberOwned.get(m);
                for (int i = 0; i < owned.length; i += 2) {
                    Uuid id = scenario.topicIds.get(owned[i]);
                    listed.computeIfAbsent(id, k -> new ArrayList<>()).add(owned[i + 1]);
                    assigned.computeIfAbsent(id, k -> new HashSet<>()).add(owned[i + 1]);
                }
                Map<Uuid, Set<Integer>> target = new HashMap<>();
                listed.forEach((id, partitions) -> target.put(id, new HashSet<>(partitions)));
                String memberId = scenario.memberIds.get(m);
                subscriptions.put(memberId, new Subscribed(topicIds));
                // the assignor insists on an unmodifiable map (it copies one only to change it)
                assignments.put(memberId, new Target(Collections.unmodifiableMap(target)));
            }
        }

        @Override
        public Collection<String> memberIds() {
            return subscriptions.keySet();
        }

        @Override
        public SubscriptionType subscriptionType() {
            return type;
        }

        @Override
        public boolean isPartitionAssigned(Uuid topicId, int partitionId) {
            Set<Integer> partitions = assigned.get(topicId);
            return partitions != null && partitions.contains(partitionId);
        }

        /** Kafka 4.2+ asks this too (every partition may be assigned here); no {@code @Override}, so the
         * harness still compiles against Kafka 3.9 and 4.0, whose GroupSpec lacks it. */
        public boolean isPartitionAssignable(Uuid topicId, int partitionId) {
            return true;
        }

        @Override
        public MemberSubscription memberSubscription(String memberId) {
            return subscriptions.get(memberId);
        }

        @Override
        public MemberAssignment memberAssignment(String memberId) {
            return assignments.get(memberId);
        }
    }

    static final class Subscribed implements MemberSubscription {
        private final Set<Uuid> topicIds;

        Subscribed(Set<Uuid> topicIds) {
            this.topicIds = topicIds;
        }

        @Override
        public Optional<String> rackId() {
            return Optional.empty();
        }

        @Override
        public Optional<String> instanceId() {
            return Optional.empty();
        }

        @Override
        public Set<Uuid> subscribedTopicIds() {
            return topicIds;
        }
    }

    static final class Target implements MemberAssignment {
        private final Map<Uuid, Set<Integer>> partitions;

        Target(Map<Uuid, Set<Integer>> partitions) {
            this.partitions = partitions;
        }

        @Override
        public Map<Uuid, Set<Integer>> partitions() {
            return partitions;
        }
    }

    static final class Describer implements SubscribedTopicDescriber {
        private final Map<Uuid, Integer> counts = new HashMap<>();

        Describer(Scenario scenario) {
            for (int t = 0; t < scenario.topicIds.size(); t++) {
                counts.put(scenario.topicIds.get(t), scenario.partitionCounts.get(t));
            }
        }

        @Override
        public int numPartitions(Uuid topicId) {
            return counts.getOrDefault(topicId, -1);
        }

        @Override
        public Set<String> racksForPartition(Uuid topicId, int partition) {
            return Collections.emptySet();
        }
    }

    static String digest(Map<String, TreeMap<String, List<Integer>>> rows) throws NoSuchAlgorithmException {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        StringBuilder line = new StringBuilder();
        for (Map.Entry<String, TreeMap<String, List<Integer>>> member : rows.entrySet()) {
            for (Map.Entry<String, List<Integer>> topic : member.getValue().entrySet()) {
                List<Integer> partitions = new ArrayList<>(topic.getValue());
                Collections.sort(partitions);
                for (int p : partitions) {
                    line.setLength(0);
                    line.append(member.getKey()).append('\t').append(topic.getKey()).append('\t').append(p).append('\n');
                    sha.update(line.toString().getBytes(StandardCharsets.UTF_8));
                }
            }
        }
        StringBuilder hex = new StringBuilder();
        for (byte b : sha.digest()) {
            hex.append(String.format("%02x", b));
        }
        return hex.toString();
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: KafkaAssignorBench (sticky|cooperative-sticky|uniform) SCENARIO_FILE");
            System.exit(2);
        }
        Scenario scenario = Scenario.read(args[1]);
        Map<String, Supplier<Case>> cases = Map.of(
            "sticky", () -> new StickyCase(scenario, false),
            "cooperative-sticky", () -> new StickyCase(scenario, true),
            "uniform", () -> new UniformCase(scenario));
        Supplier<Case> chosen = cases.get(args[0]);
        if (chosen == null) {
            System.err.println("unknown assignor " + args[0] + "; expected sticky, cooperative-sticky or uniform");
            System.exit(2);
        }
        Case bench = chosen.get();
        System.out.println("ready");
        BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String command = commands.readLine(); command != null; command = commands.readLine()) {
            switch (command.trim()) {
                case "run":
                    bench.prepare();
                    long start = System.nanoTime();
                    bench.run();
                    System.out.println((System.nanoTime() - start) / 1e9);
                    break;
                case "digest":
                    System.out.println(digest(bench.result()));
                    break;
                case "quit":
                    return;
                default:
                    System.out.println("error unknown command " + command);
            }
            System.out.flush();
        }
    }
}
