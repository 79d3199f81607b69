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
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ApplicationState;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsState;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskAssignor.TaskAssignment;
import org.apache.kafka.streams.processor.assignment.TaskInfo;
import org.apache.kafka.streams.processor.assignment.TaskTopicPartition;
import org.apache.kafka.streams.processor.assignment.assignors.StickyTaskAssignor;
import org.apache.kafka.streams.processor.internals.TopologyMetadata.Subtopology;
import org.apache.kafka.streams.processor.internals.assignment.ClientState;
import org.apache.kafka.streams.processor.internals.assignment.DefaultKafkaStreamsState;
import org.apache.kafka.streams.processor.internals.assignment.DefaultTaskTopicPartition;
import org.apache.kafka.streams.processor.internals.assignment.HighAvailabilityTaskAssignor;
import org.apache.kafka.streams.processor.internals.assignment.RackAwareTaskAssignor;

/**
 * Kafka Streams' classic task assignors (the group leader's: {@code HighAvailabilityTaskAssignor}, the
 * default, and the KIP-924 {@code StickyTaskAssignor} of {@code task.assignor.class}), timed on scenarios
 * that bench/bench_kstreams.py writes; it starts this harness and talks to it over stdin/stdout.
 *
 * <p>Usage: {@code java -cp HARNESS:KAFKA_STREAMS KafkaStreamsClassicAssignorBench SCENARIO_FILE}, then one
 * command per line: {@code load FILE} reads another scenario; {@code run high-availability} or {@code run
 * sticky} builds the assignor's input from the scenario (untimed) and times one {@code assign(...)},
 * printing its seconds; {@code digest} prints the SHA-256 of the last result as sorted "process TAB
 * active|standby TAB task" lines followed by "probing TAB true|false"; {@code lines FILE} writes those
 * lines to FILE; {@code quit}.
 *
 * <p>The input is put together the way the group leader's partition assignor does it: one {@code
 * ClientState} per process, a capacity of one per consumer, each consumer's owned partitions (the task's
 * source partition, topic {@code source-SUB}) and reported offset sums, consumers met in a {@code HashMap}
 * by member id; then {@code initializePrevTasks} and {@code computeTaskLags} from the stateful tasks' end
 * offset sums; clients in a {@code HashMap} by process id. Rack awareness is off (strategy {@code none}). For the sticky assignor the client
 * states become {@code DefaultKafkaStreamsState}s as Kafka's {@code DefaultApplicationState} makes them
 * (inside the timed call, as there); a stateful task has a changelog partition (topic {@code
 * changelog-SUB}); the map of task descriptions is filled in the order of the partition grouper's map, as
 * the leader fills it (that order decides which previous standby gets a task back first). Kafka collects
 * the stateful task descriptions into a {@code HashSet} hashed by object identity, so its standby order
 * differs from run to run; here a stateful task's description hashes to its rank among the stateful tasks
 * in task order, which makes that set walk them in task order: one of the
 * orders Kafka can take, and the one kassign takes, so both answers can be compared.
 *
 * <p>Scenario file, whitespace-separated (ids contain no whitespace; a task is SUB PARTITION):
 * <pre>
 * config standbys max-warmups acceptable-lag
 * subtopologies S       then S lines: id partitions stateful(0|1)
 * ends E                then E lines: sub partition end-offset-sum
 * clients C             then per client: process-uuid consumers K, then K lines:
 *                       member-id owned-count (sub partition)... sums-count (sub partition offset-sum)...
 * </pre>
 */
public final class KafkaStreamsClassicAssignorBench {

    private KafkaStreamsClassicAssignorBench() {
    }

    static final class Consumer {
        String memberId;
        final List<TopicPartition> owned = new ArrayList<>();
        final Map<TaskId, Long> offsetSums = new HashMap<>();
    }

    static final class Scenario {
        int standbys;
        int maxWarmups;
        long acceptableLag;
        final List<TaskId> tasks = new ArrayList<>();  // in task order
        final Set<TaskId> stateful = new TreeSet<>();
        final Map<TaskId, Long> endOffsetSums = new HashMap<>();
        final List<ProcessId> processes = new ArrayList<>();
        final List<List<Consumer>> consumers = new ArrayList<>();
    }

    /** Whitespace-separated tokens, read in turn. */
    static final class Tokens {
        private final String[] t;
        private int i;

        Tokens(String path) throws IOException {
            t = new String(Files.readAllBytes(Paths.get(path)), StandardCharsets.UTF_8).trim().split("\\s+");
        }

        String next() {
            return t[i++];
        }

        int nextInt() {
            return Integer.parseInt(next());
        }

        long nextLong() {
            return Long.parseLong(next());
        }

        void expect(String word) {
            String found = next();
            if (!found.equals(word)) {
                throw new IllegalArgumentException("expected " + word + ", found " + found);
            }
        }

        int count(String word) {
            expect(word);
            return nextInt();
        }

        TaskId task() {
            int sub = nextInt();
            return new TaskId(sub, nextInt());
        }
    }

    static Scenario read(String path) throws IOException {
        Tokens in = new Tokens(path);
        Scenario s = new Scenario();
        in.expect("config");
        s.standbys = in.nextInt();
        s.maxWarmups = in.nextInt();
        s.acceptableLag = in.nextLong();
        for (int k = in.count("subtopologies"); k > 0; k--) {
            int sub = in.nextInt();
            int partitions = in.nextInt();
            boolean stateful = in.next().equals("1");
            for (int p = 0; p < partitions; p++) {
                s.tasks.add(new TaskId(sub, p));
                if (stateful) {
                    s.stateful.add(new TaskId(sub, p));
                }
            }
        }
        for (int k = in.count("ends"); k > 0; k--) {
            TaskId task = in.task();
            s.endOffsetSums.put(task, in.nextLong());
        }
        for (TaskId task : s.stateful) {
            s.endOffsetSums.putIfAbsent(task, 0L);
        }
        for (int k = in.count("clients"); k > 0; k--) {
            s.processes.add(new ProcessId(UUID.fromString(in.next())));
            List<Consumer> members = new ArrayList<>();
            for (int m = in.count("consumers"); m > 0; m--) {
                Consumer c = new Consumer();
                c.memberId = in.next();
                for (int n = in.nextInt(); n > 0; n--) {
                    TaskId task = in.task();
                    c.owned.add(new TopicPartition("source-" + task.subtopology(), task.partition()));
                }
                for (int n = in.nextInt(); n > 0; n--) {
                    TaskId task = in.task();
                    c.offsetSums.put(task, in.nextLong());
                }
                members.add(c);
            }
            s.consumers.add(members);
        }
        return s;
    }

    static Map<ProcessId, ClientState> clientStates(Scenario s) {
        Map<TopicPartition, TaskId> taskForPartition = new HashMap<>();
        for (TaskId task : s.tasks) {
            taskForPartition.put(new TopicPartition("source-" + task.subtopology(), task.partition()), task);
        }
        // The leader meets the members in its HashMap of subscriptions by member id.
        Map<String, Consumer> members = new HashMap<>();
        Map<String, ProcessId> processOf = new HashMap<>();
        for (int k = 0; k < s.processes.size(); k++) {
            for (Consumer c : s.consumers.get(k)) {
                members.put(c.memberId, c);
                processOf.put(c.memberId, s.processes.get(k));
            }
        }
        Map<ProcessId, ClientState> clients = new HashMap<>();
        for (Consumer c : members.values()) {
            ProcessId process = processOf.get(c.memberId);
            ClientState state = clients.get(process);
            if (state == null) {  // get then put, as the leader does: computeIfAbsent would head the bucket
                state = new ClientState(process, Map.of());
                clients.put(process, state);
            }
            state.incrementCapacity();
            state.addOwnedPartitions(c.owned, c.memberId);
            state.addPreviousTasksAndOffsetSums(c.memberId, c.offsetSums);
        }
        for (Map.Entry<ProcessId, ClientState> e : clients.entrySet()) {
            e.getValue().initializePrevTasks(taskForPartition, false);
            e.getValue().computeTaskLags(e.getKey(), s.endOffsetSums);
        }
        return clients;
    }

    static AssignmentConfigs configs(Scenario s) {
        return new AssignmentConfigs(s.acceptableLag, s.maxWarmups, s.standbys, 600_000L, List.of());
    }

    /** A task description hashing to its rank (see the class comment). */
    static final class RankedTask implements TaskInfo {
        private final TaskId id;
        private final int rank;
        private final boolean stateful;
        private final Set<TaskTopicPartition> partitions;

        RankedTask(TaskId id, int rank, boolean stateful) {
            this.id = id;
            this.rank = rank;
            this.stateful = stateful;
            Set<TaskTopicPartition> parts = new HashSet<>();
            parts.add(new DefaultTaskTopicPartition(new TopicPartition("source-" + id.subtopology(), id.partition()),
                true, false, () -> { }));
            if (stateful) {
                parts.add(new DefaultTaskTopicPartition(new TopicPartition("changelog-" + id.subtopology(),
                    id.partition()), false, true, () -> { }));
            }
            this.partitions = parts;
        }

        @Override
        public TaskId id() {
            return id;
        }

        @Override
        public boolean isStateful() {
            return stateful;
        }

        @Override
        public Set<String> stateStoreNames() {
            return stateful ? Set.of("store-" + id.subtopology()) : Set.of();
        }

        @Override
        public Set<TaskTopicPartition> topicPartitions() {
            return partitions;
        }

        @Override
        public int hashCode() {
            return rank;
        }

        @Override
        public boolean equals(Object other) {
            return this == other;
        }
    }

    static ApplicationState applicationState(Scenario s, Map<ProcessId, ClientState> clients) {
        // The leader's map of tasks: the partition grouper fills a HashMap walking a HashMap of subtopologies, each
        // one's partitions in order; the map of task descriptions is collected from its keys.
        Map<Subtopology, int[]> partitions = new HashMap<>();  // subtopology -> {id, partitions}
        for (TaskId id : s.tasks) {
            int sub = id.subtopology();
            partitions.computeIfAbsent(new Subtopology(sub, null), k -> new int[] {sub, 0})[1]++;
        }
        Map<TaskId, Boolean> grouped = new HashMap<>();
        for (int[] sub : partitions.values()) {
            for (int p = 0; p < sub[1]; p++) {
                grouped.put(new TaskId(sub[0], p), Boolean.TRUE);
            }
        }
        // a stateful task's rank among the stateful tasks in task order: the HashSet of them has more buckets than
        // keys, so it walks them in task order (ranks among all tasks would wrap around its table)
        Map<TaskId, Integer> rank = new HashMap<>();
        for (TaskId id : s.stateful) {
            rank.put(id, rank.size());
        }
        Map<TaskId, TaskInfo> tasks = new HashMap<>();
        for (TaskId id : grouped.keySet()) {
            boolean stateful = s.stateful.contains(id);
            tasks.put(id, new RankedTask(id, stateful ? rank.get(id) : -1, stateful));
        }
        AssignmentConfigs configs = configs(s);
        return new ApplicationState() {
            private Map<ProcessId, KafkaStreamsState> states;

            @Override
            public Map<ProcessId, KafkaStreamsState> kafkaStreamsStates(boolean computeTaskLags) {
                if (states == null) {  // built on first use, as DefaultApplicationState does (and caches)
                    states = new HashMap<>();
                    for (Map.Entry<ProcessId, ClientState> e : clients.entrySet()) {
                        ClientState c = e.getValue();
                        states.put(e.getKey(), new DefaultKafkaStreamsState(e.getKey(), c.capacity(), c.clientTags(),
                            c.previousActiveTasks(), c.previousStandbyTasks(), c.taskIdsByPreviousConsumer(),
                            Optional.empty(), Optional.ofNullable(computeTaskLags ? c.taskLagTotals() : null),
                            Optional.empty()));
                    }
                }
                return states;
            }

            @Override
            public AssignmentConfigs assignmentConfigs() {
                return configs;
            }

            @Override
            public Map<TaskId, TaskInfo> allTasks() {
                return tasks;
            }
        };
    }

    /** The last answer: "process TAB kind TAB task" lines and whether a probing rebalance follows. */
    static final class Result {
        final TreeSet<String> lines = new TreeSet<>();
        boolean probing;

        void add(ProcessId process, String kind, Set<TaskId> tasks) {
            for (TaskId task : tasks) {
                lines.add(process.id() + "\t" + kind + "\t" + task);
            }
        }
    }

    static double runHighAvailability(Scenario s, Result out) {
        Map<ProcessId, ClientState> clients = clientStates(s);
        Set<TaskId> all = new HashSet<>(s.tasks);
        Set<TaskId> stateful = new HashSet<>(s.stateful);
        AssignmentConfigs configs = configs(s);
        RackAwareTaskAssignor racks = new RackAwareTaskAssignor(null, null, null, null, null, null, configs,
            Time.SYSTEM);
        HighAvailabilityTaskAssignor assignor = new HighAvailabilityTaskAssignor();
        long start = System.nanoTime();
        boolean probing = assignor.assign(clients, all, stateful, racks, configs);
        long took = System.nanoTime() - start;
        for (Map.Entry<ProcessId, ClientState> e : clients.entrySet()) {
            out.add(e.getKey(), "active", e.getValue().activeTasks());
            out.add(e.getKey(), "standby", e.getValue().standbyTasks());
        }
        out.probing = probing;
        return took / 1e9;
    }

    static double runSticky(Scenario s, Result out) {
        ApplicationState state = applicationState(s, clientStates(s));
        StickyTaskAssignor assignor = new StickyTaskAssignor();
        long start = System.nanoTime();
        TaskAssignment answer = assignor.assign(state);
        long took = System.nanoTime() - start;
        for (KafkaStreamsAssignment client : answer.assignment()) {
            for (KafkaStreamsAssignment.AssignedTask task : client.tasks().values()) {
                boolean active = task.type() == KafkaStreamsAssignment.AssignedTask.Type.ACTIVE;
                out.add(client.processId(), active ? "active" : "standby", Set.of(task.id()));
            }
            out.probing |= client.followupRebalanceDeadline().isPresent();
        }
        return took / 1e9;
    }

    static String digest(Result result) throws NoSuchAlgorithmException {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        for (String line : result.lines) {
            sha.update((line + "\n").getBytes(StandardCharsets.UTF_8));
        }
        sha.update(("probing\t" + result.probing + "\n").getBytes(StandardCharsets.UTF_8));
        StringBuilder hex = new StringBuilder();
        for (byte b : sha.digest()) {
            hex.append(String.format("%02x", b));
        }
        return hex.toString();
    }

    static String answer(String command, Scenario[] scenario, Result[] last) throws IOException,
            NoSuchAlgorithmException {
        if (command.startsWith("load ")) {
            scenario[0] = read(command.substring(5));
            return "ready";
        }
        if (command.equals("run high-availability") || command.equals("run sticky")) {
            last[0] = new Result();
            double seconds = command.endsWith("sticky") ? runSticky(scenario[0], last[0])
                : runHighAvailability(scenario[0], last[0]);
            return Double.toString(seconds);
        }
        if (command.equals("digest")) {
            return digest(last[0]);
        }
        if (command.startsWith("lines ")) {
            List<String> lines = new ArrayList<>(last[0].lines);
            lines.add("probing\t" + last[0].probing);
            Files.write(Paths.get(command.substring(6)), lines, StandardCharsets.UTF_8);
            return "written";
        }
        return "error unknown command " + command;
    }

    public static void main(String[] args) throws IOException, NoSuchAlgorithmException {
        Scenario[] scenario = {read(args[0])};
        Result[] last = {null};
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        System.out.println("ready");
        System.out.flush();
        for (String line = in.readLine(); line != null && !line.trim().equals("quit"); line = in.readLine()) {
            String reply;
            try {
                reply = answer(line.trim(), scenario, last);
            } catch (RuntimeException e) {
                reply = "error " + e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage()).replace('\n', ' ');
            }
            System.out.println(reply);
            System.out.flush();
        }
    }
}
