import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
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
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberSubscription;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.assignor.SimpleAssignor;

/**
 * kassign's share-group benchmark times Kafka's own share assignor ({@code SimpleAssignor}, Kafka 4.2
 * or later) with this harness, on the scenario the Python side wrote (bench/bench_share.py starts it
 * through bench/kafka_java.py; the file format and the commands are KafkaAssignorBench's:
 * {@code run}, {@code digest}, {@code quit}).
 *
 * <p>The group spec is built once, before the runs, as the group coordinator holds the group: members
 * in a HashMap put in the file's order; each member's subscribed topic ids iterate in the order of its
 * names' {@code new HashSet<>(names)} (the coordinator's view over that set); its current target a
 * HashMap from topic id to a HashSet built at once from the listed partitions; every partition
 * assignable. What is timed is {@code SimpleAssignor.assign(GroupSpec, SubscribedTopicDescriber)}.
 *
 * <p>Usage: {@code java -cp HARNESS:KAFKA KafkaShareAssignorBench simple SCENARIO_FILE}.
 */
public final class KafkaShareAssignorBench {

    private KafkaShareAssignorBench() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2 || !args[0].equals("simple")) {
            System.err.println("usage: KafkaShareAssignorBench simple SCENARIO_FILE");
            System.exit(2);
        }
        Scenario scenario = Scenario.read(args[1]);
        Spec spec = new Spec(scenario);
        Describer describer = new Describer(scenario);
        Map<Uuid, String> names = new HashMap<>();
        for (int t = 0; t < scenario.topicIds.size(); t++) {
            names.put(scenario.topicIds.get(t), scenario.topicNames.get(t));
        }
        Map<String, MemberAssignment> last = Map.of();
        System.out.println("ready");
        BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String command = commands.readLine(); command != null; command = commands.readLine()) {
            switch (command.trim()) {
                case "run":
                    long start = System.nanoTime();
                    last = new SimpleAssignor().assign(spec, describer).members();
                    System.out.println((System.nanoTime() - start) / 1e9);
                    break;
                case "digest":
                    System.out.println(digest(last, names, scenario.memberIds));
                    break;
                case "quit":
                    return;
                default:
                    System.out.println("error unknown command " + command);
            }
            System.out.flush();
        }
    }

    /** SHA-256 of "member TAB topic TAB partition" lines, members, topics and partitions in order; every
     * member counts, those the assignor left out with nothing. */
    static String digest(Map<String, MemberAssignment> result, Map<Uuid, String> names, List<String> members)
            throws NoSuchAlgorithmException {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        TreeMap<String, TreeMap<String, List<Integer>>> rows = new TreeMap<>();
        for (String member : members) {
            TreeMap<String, List<Integer>> byTopic = new TreeMap<>();
            MemberAssignment assignment = result.get(member);
            if (assignment != null) {
                for (Map.Entry<Uuid, Set<Integer>> topic : assignment.partitions().entrySet()) {
                    List<Integer> partitions = new ArrayList<>(topic.getValue());
                    Collections.sort(partitions);
                    if (!partitions.isEmpty()) {
                        byTopic.put(names.get(topic.getKey()), partitions);
                    }
                }
            }
            rows.put(member, byTopic);
        }
        for (Map.Entry<String, TreeMap<String, List<Integer>>> member : rows.entrySet()) {
            for (Map.Entry<String, List<Integer>> topic : member.getValue().entrySet()) {
                for (int partition : topic.getValue()) {
                    String line = member.getKey() + '\t' + topic.getKey() + '\t' + partition + '\n';
                    sha.update(line.getBytes(StandardCharsets.UTF_8));
                }
            }
        }
        StringBuilder hex = new StringBuilder();
        for (byte b : sha.digest()) {
            hex.append(String.format("%02x", b));
        }
        return hex.toString();
    }

    /** The scenario file (KafkaAssignorBench's format): topics, subscriptions, members with owned pairs. */
    static final class Scenario {
        final List<String> topicNames = new ArrayList<>();
        final List<Integer> partitionCounts = new ArrayList<>();
        final List<Uuid> topicIds = new ArrayList<>();
        final List<List<Integer>> subscriptions = new ArrayList<>();
        final List<String> memberIds = new ArrayList<>();
        final List<Integer> memberSubscription = new ArrayList<>();
        final List<int[]> memberOwned = new ArrayList<>();

        static Scenario read(String path) throws IOException {
            Scenario scenario = new Scenario();
            String[] words = new String(Files.readAllBytes(Paths.get(path)), StandardCharsets.UTF_8).trim().split("\\s+");
            int[] at = {0};
            int topics = section(words, at, "topics");
            for (int t = 0; t < topics; t++) {
                scenario.topicNames.add(words[at[0]++]);
                scenario.partitionCounts.add(Integer.parseInt(words[at[0]++]));
                scenario.topicIds.add(Uuid.fromString(words[at[0]++]));
            }
            int subscriptions = section(words, at, "subscriptions");
            for (int s = 0; s < subscriptions; s++) {
                int count = Integer.parseInt(words[at[0]++]);
                List<Integer> indices = new ArrayList<>(count);
                for (int i = 0; i < count; i++) {
                    indices.add(Integer.parseInt(words[at[0]++]));
                }
                scenario.subscriptions.add(indices);
            }
            int members = section(words, at, "members");
            for (int m = 0; m < members; m++) {
                scenario.memberIds.add(words[at[0]++]);
                scenario.memberSubscription.add(Integer.parseInt(words[at[0]++]));
                at[0]++;  // the generation: share groups have none
                int[] owned = new int[2 * Integer.parseInt(words[at[0]++])];
                for (int i = 0; i < owned.length; i++) {
                    owned[i] = Integer.parseInt(words[at[0]++]);
                }
                scenario.memberOwned.add(owned);
            }
            return scenario;
        }

        private static int section(String[] words, int[] at, String name) {
            String found = words[at[0]++];
            if (!found.equals(name)) {
                throw new IllegalArgumentException("scenario file: expected section " + name + ", found " + found);
            }
            return Integer.parseInt(words[at[0]++]);
        }
    }

    /** The group as the coordinator hands it to the assignor (see the class comment). */
    static final class Spec implements GroupSpec {
        private final Map<String, MemberSubscription> subscriptions = new HashMap<>();
        private final Map<String, MemberAssignment> assignments = new HashMap<>();
        private final SubscriptionType type;

        Spec(Scenario scenario) {
            Set<Set<String>> distinct = new HashSet<>();
            for (int m = 0; m < scenario.memberIds.size(); m++) {
                List<String> listed = new ArrayList<>();
                for (int t : scenario.subscriptions.get(scenario.memberSubscription.get(m))) {
                    listed.add(scenario.topicNames.get(t));
                }
                Set<String> names = new HashSet<>(listed);
                distinct.add(names);
                Set<Uuid> ids = new LinkedHashSet<>();  // the coordinator's view iterates the names' set
                for (String name : names) {
                    ids.add(scenario.topicIds.get(scenario.topicNames.indexOf(name)));
                }
                Map<Uuid, List<Integer>> owned = new LinkedHashMap<>();
                int[] pairs = scenario.memberOwned.get(m);
                for (int i = 0; i < pairs.length; i += 2) {
                    owned.computeIfAbsent(scenario.topicIds.get(pairs[i]), k -> new ArrayList<>()).add(pairs[i + 1]);
                }
                Map<Uuid, Set<Integer>> target = new HashMap<>();
                owned.forEach((id, partitions) -> target.put(id, new HashSet<>(partitions)));
                String memberId = scenario.memberIds.get(m);
                subscriptions.put(memberId, new Subscribed(ids));
                assignments.put(memberId, new Target(Collections.unmodifiableMap(target)));
            }
            type = distinct.size() <= 1 ? SubscriptionType.HOMOGENEOUS : SubscriptionType.HETEROGENEOUS;
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
            for (MemberAssignment assignment : assignments.values()) {
                Set<Integer> partitions = assignment.partitions().get(topicId);
                if (partitions != null && partitions.contains(partitionId)) {
                    return true;
                }
            }
            return false;
        }

        @Override
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
}
