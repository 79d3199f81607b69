import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

import org.apache.kafka.coordinator.group.streams.assignor.AssignmentMemberSpec;
import org.apache.kafka.coordinator.group.streams.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.streams.assignor.GroupSpecImpl;
import org.apache.kafka.coordinator.group.streams.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor;
import org.apache.kafka.coordinator.group.streams.assignor.TopologyDescriber;

/**
 * Kafka's streams group assignor {@code sticky} (KIP-1071), timed on scenarios the Python side writes
 * (bench/bench_streams_groups.py starts it and talks to it over stdin/stdout). Written against Kafka 4.2's
 * and 4.3's assignor API; {@code KafkaStreamsAssignorBench44.java} is the same harness for 4.4's.
 *
 * <p>Usage: {@code java -cp HARNESS:KAFKA KafkaStreamsAssignorBench SCENARIO_FILE}, then one command per
 * line: {@code load FILE} reads another scenario; {@code run} builds the group spec from the scenario
 * (untimed) and times one {@code StickyTaskAssignor.assign(GroupSpec, TopologyDescriber)}, printing its
 * seconds; {@code digest} prints the SHA-256 of the last result as "member TAB kind TAB subtopology TAB
 * partition" lines, sorted; {@code result} prints those lines' fields on one line, the lines separated
 * by spaces and the fields by '/'; {@code quit}.
 *
 * <p>The group spec is built as the coordinator builds it: members in a {@code HashMap} keyed by member
 * id, put in the file's order; each member's current tasks in {@code HashMap}s of {@code HashSet}s.
 *
 * <p>Scenario file, whitespace-separated (ids contain no whitespace):
 * <pre>
 * standby K
 * subtopologies S     then S lines: id partitions stateful(0|1)
 * members M           then M lines: member-id process-id a (sub partition)... s (sub partition)... (a active, s standby pairs)
 * </pre>
 */
public final class KafkaStreamsAssignorBench {

    private KafkaStreamsAssignorBench() {
    }

    static final class Scenario {
        int standbys;
        final List<String> subtopologies = new ArrayList<>();
        final Map<String, Integer> partitions = new HashMap<>();
        final Map<String, Boolean> stateful = new HashMap<>();
        final List<String> memberIds = new ArrayList<>();
        final List<String> processIds = new ArrayList<>();
        final List<String[]> active = new ArrayList<>();  // sub, partition, sub, partition...
        final List<String[]> standby = new ArrayList<>();
    }

    static Scenario read(String path) throws IOException {
        String[] t = new String(Files.readAllBytes(Paths.get(path)), StandardCharsets.UTF_8).trim().split("\\s+");
        int i = 0;
        Scenario s = new Scenario();
        expect(t[i++], "standby");
        s.standbys = Integer.parseInt(t[i++]);
        expect(t[i++], "subtopologies");
        int subs = Integer.parseInt(t[i++]);
        for (int k = 0; k < subs; k++) {
            String id = t[i++];
            s.subtopologies.add(id);
            s.partitions.put(id, Integer.parseInt(t[i++]));
            s.stateful.put(id, t[i++].equals("1"));
        }
        expect(t[i++], "members");
        int members = Integer.parseInt(t[i++]);
        for (int k = 0; k < members; k++) {
            s.memberIds.add(t[i++]);
            s.processIds.add(t[i++]);
            for (List<String[]> kind : List.of(s.active, s.standby)) {
                int n = Integer.parseInt(t[i++]);
                String[] pairs = new String[2 * n];
                System.arraycopy(t, i, pairs, 0, 2 * n);
                i += 2 * n;
                kind.add(pairs);
            }
        }
        return s;
    }

    private static void expect(String token, String word) {
        if (!token.equals(word)) {
            throw new IllegalArgumentException("expected " + word + ", found " + token);
        }
    }

    static Map<String, Set<Integer>> tasks(String[] pairs) {
        Map<String, Set<Integer>> out = new HashMap<>();
        for (int k = 0; k < pairs.length; k += 2) {
            out.computeIfAbsent(pairs[k], x -> new HashSet<>()).add(Integer.parseInt(pairs[k + 1]));
        }
        return out;
    }

    static GroupSpecImpl groupSpec(Scenario s) {
        Map<String, AssignmentMemberSpec> members = new HashMap<>();
        for (int k = 0; k < s.memberIds.size(); k++) {
            members.put(s.memberIds.get(k), new AssignmentMemberSpec(Optional.empty(), Optional.empty(),
                tasks(s.active.get(k)), tasks(s.standby.get(k)), Map.of(), s.processIds.get(k), Map.of(),
                Map.of(), Map.of()));
        }
        return new GroupSpecImpl(members, Map.of("num.standby.replicas", Integer.toString(s.standbys)));
    }

    static TopologyDescriber topology(Scenario s) {
        return new TopologyDescriber() {
            @Override
            public List<String> subtopologies() {
                return s.subtopologies;
            }

            @Override
            public int maxNumInputPartitions(String id) {
                Integer n = s.partitions.get(id);
                if (n == null) {
                    throw new NoSuchElementException(id);
                }
                return n;
            }

            @Override
            public boolean isStateful(String id) {
                return s.stateful.get(id);
            }
        };
    }

    static TreeSet<String> lines(GroupAssignment result) {
        TreeSet<String> out = new TreeSet<>();
        for (Map.Entry<String, MemberAssignment> e : result.members().entrySet()) {
            addLines(out, e.getKey(), "active", e.getValue().activeTasks());
            addLines(out, e.getKey(), "standby", e.getValue().standbyTasks());
            addLines(out, e.getKey(), "warmup", e.getValue().warmupTasks());
        }
        return out;
    }

    private static void addLines(TreeSet<String> out, String member, String kind, Map<String, Set<Integer>> tasks) {
        for (Map.Entry<String, Set<Integer>> e : tasks.entrySet()) {
            for (int p : e.getValue()) {
                out.add(member + "\t" + kind + "\t" + e.getKey() + "\t" + p);
            }
        }
    }

    public static void main(String[] args) throws IOException, NoSuchAlgorithmException {
        Scenario scenario = read(args[0]);
        GroupAssignment last = null;
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        System.out.println("ready");
        System.out.flush();
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            String command = line.trim();
            try {
                if (command.startsWith("load ")) {
                    scenario = read(command.substring(5));
                    System.out.println("ready");
                } else if (command.equals("run")) {
                    GroupSpecImpl spec = groupSpec(scenario);
                    TopologyDescriber topology = topology(scenario);
                    StickyTaskAssignor assignor = new StickyTaskAssignor();
                    long start = System.nanoTime();
                    last = assignor.assign(spec, topology);
                    long took = System.nanoTime() - start;
                    System.out.println(took / 1e9);
                } else if (command.equals("digest")) {
                    MessageDigest sha = MessageDigest.getInstance("SHA-256");
                    for (String l : lines(last)) {
                        sha.update((l + "\n").getBytes(StandardCharsets.UTF_8));
                    }
                    StringBuilder hex = new StringBuilder();
                    for (byte b : sha.digest()) {
                        hex.append(String.format("%02x", b));
                    }
                    System.out.println(hex);
                } else if (command.equals("result")) {
                    System.out.println(String.join(" ", lines(last)).replace('\t', '/'));
                } else if (command.equals("quit")) {
                    return;
                } else {
                    System.out.println("error unknown command " + command);
                }
            } catch (RuntimeException e) {
                System.out.println("error " + e.getClass().getSimpleName() + ": "
                    + String.valueOf(e.getMessage()).replace('\n', ' '));
            }
            System.out.flush();
        }
    }
}
