package kassign.spark;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.apache.spark.TaskContext;

import org.apache.spark.sql.Column;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.api.java.UDF3;
import org.apache.spark.sql.api.java.UDF6;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.RuntimeReplaceable;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import org.apache.spark.sql.catalyst.expressions.objects.StaticInvoke;
import org.apache.spark.sql.catalyst.trees.TreePattern;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.classic.ExpressionUtils;
import org.apache.spark.sql.types.AbstractDataType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The 32-bit key hashes of Kafka producer clients, as Spark SQL UDFs (null in, null out).
 *
 * kassign compiles this file with javac at first use so that Spark can hash keys without
 * shipping rows to Python. This class is Kafka's murmur2 (32-bit MurmurHash2, seed
 * 0x9747b28c) as a signed int; the nested classes are the other clients' hashes, and
 * Partition applies a whole client partitioner (hash, fold, null and empty keys, modulo).
 * The rules are stated, and kept in Python, in kassign/producer/hashing.py and kassign/producer/clients.py;
 * this file is their second implementation, tested against the same reference vectors.
 *
 * Keys arrive as Spark hands over a column's values: byte[] for binary columns (the Python
 * side casts string columns to binary, their UTF-8 bytes), Integer and Long for int and
 * bigint columns, serialised here as Kafka's IntegerSerializer and LongSerializer do
 * (4 or 8 bytes, big-endian).
 */
public final class KassignMurmur2 implements UDF1<Object, Integer> {
    private static final int SEED = 0x9747b28c;
    private static final int MIX = 0x5bd1e995;
    private static final double MIX_DOUBLE = (double) MIX;

    @Override
    public Integer call(Object key) {
        return key == null ? null : hash(keyBytes(key));
    }

    /** The serialised key: binary as is, int/long big-endian, text as UTF-8. */
    public static byte[] keyBytes(Object key) {
        if (key instanceof byte[]) {
            return (byte[]) key;
        }
        if (key instanceof Integer) {
            int v = (Integer) key;
            return new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v};
        }
        if (key instanceof Long) {
            long v = (Long) key;
            byte[] out = new byte[8];
            for (int i = 7; i >= 0; i--) {
                out[i] = (byte) v;
                v >>>= 8;
            }
            return out;
        }
        if (key instanceof String) {
            return ((String) key).getBytes(StandardCharsets.UTF_8);
        }
        throw new IllegalArgumentException("kassign: keys must be binary, string, int or bigint, got "
                + key.getClass().getName());
    }

    public static int hash(byte[] key) {
        return hash(key, Platform.BYTE_ARRAY_OFFSET, key.length);
    }

    /** murmur2 of {@code length} bytes at {@code offset} of {@code base} (a byte[] or Spark's off-heap memory). */
    public static int hash(Object base, long offset, int length) {
        int h = SEED ^ length;
        final int whole = length & ~3;
        for (int i = 0; i < whole; i += 4) {
            long at = offset + i;
            int k = (Platform.getByte(base, at) & 0xff) | ((Platform.getByte(base, at + 1) & 0xff) << 8)
                | ((Platform.getByte(base, at + 2) & 0xff) << 16) | ((Platform.getByte(base, at + 3) & 0xff) << 24);
            k *= MIX;
            k ^= k >>> 24;
            k *= MIX;
            h = h * MIX ^ k;
        }
        final long tail = offset + whole;
        switch (length & 3) {
            case 3:
                h ^= (Platform.getByte(base, tail + 2) & 0xff) << 16;
                // fall through: the tail bytes are folded in from the highest down
            case 2:
                h ^= (Platform.getByte(base, tail + 1) & 0xff) << 8;
                // fall through
            case 1:
                h ^= Platform.getByte(base, tail) & 0xff;
                h *= MIX;
                break;
            default:
                break;
        }
        h ^= h >>> 13;
        h *= MIX;
        h ^= h >>> 15;
        return h;
    }

    /** The hash codes of kassign/producer/hashing.py. */
    static final int MURMUR2 = 0;
    static final int CRC32_HASH = 1;
    static final int FNV1A = 2;
    static final int KAFKAJS_LEGACY = 3;
    /** The fold codes of kassign/producer/hashing.py. */
    static final int FOLD_SIGN_BIT = 0;
    static final int FOLD_UNSIGNED = 1;
    static final int FOLD_ABS = 2;

    /** The unsigned 32-bit hash of the given kind, in a long. */
    static long hash32(int kind, byte[] key) {
        return hash32(kind, key, Platform.BYTE_ARRAY_OFFSET, key.length);
    }

    /** The same over {@code length} bytes at {@code offset} of {@code base}, read in place. */
    static long hash32(int kind, Object base, long offset, int length) {
        int h;
        switch (kind) {
            case MURMUR2:
                h = hash(base, offset, length);
                break;
            case CRC32_HASH:
                h = Crc32.hash(base, offset, length);
                break;
            case FNV1A:
                h = Fnv1a.hash(base, offset, length);
                break;
            default:
                h = KafkajsLegacy.hash(base, offset, length);
                break;
        }
        return h & 0xffffffffL;
    }

    /** The non-negative value a client reduces modulo the partition count. */
    static long fold(int fold, long h) {
        if (fold == FOLD_SIGN_BIT) {
            return h & 0x7fffffffL;
        }
        if (fold == FOLD_ABS) {
            return Math.abs((long) (int) h);  // as a long, so -2^31 gives 2^31 like a uint32 cast
        }
        return h;
    }

    /**
     * A client partitioner as a Catalyst expression: generated code calls {@link #partitionOf}
     * on each row with Spark's own value (byte[], int or long), where a UDF would box and
     * convert every value first. Null keys give null (the caller supplies a client's null-key
     * rule); -1 means the client does not hash this key.
     */
    public static Column partitionColumn(Column key, int keyWidth, int kind, int foldCode, boolean emptyKeyRandom,
                                         int partitions) {
        return ExpressionUtils.column(new PartitionExpression(ExpressionUtils.expression(key), keyWidth, kind, foldCode,
                                                              emptyKeyRandom, partitions));
    }

    /**
     * {@code kafka_partition} before the analyzer knows the key's type; once it does, it is replaced by a
     * {@code StaticInvoke} of the matching {@link #partitionOf} (text: Spark's UTF-8 buffer read in place;
     * binary: byte[]; int/bigint only when the caller chose Kafka's Integer/LongSerializer). Only the
     * replacement reaches the executors.
     */
    public static final class PartitionExpression extends Expression implements RuntimeReplaceable {
        private final Expression key;
        private final int keyWidth;
        private final int kind;
        private final int foldCode;
        private final boolean emptyKeyRandom;
        private final int partitions;

        PartitionExpression(Expression key, int keyWidth, int kind, int foldCode, boolean emptyKeyRandom, int partitions) {
            this.key = key;
            this.keyWidth = keyWidth;
            this.kind = kind;
            this.foldCode = foldCode;
            this.emptyKeyRandom = emptyKeyRandom;
            this.partitions = partitions;
        }

        private boolean keyTypeFits() {
            DataType type = key.dataType();
            if (keyWidth == 4) {
                return type.equals(DataTypes.IntegerType);
            }
            if (keyWidth == 8) {
                return type.equals(DataTypes.LongType);
            }
            return type.equals(DataTypes.StringType) || type.equals(DataTypes.BinaryType);
        }

        @Override
        public TypeCheckResult checkInputDataTypes() {
            if (keyTypeFits()) {
                return TypeCheckResult.TypeCheckSuccess$.MODULE$;
            }
            String wanted = keyWidth == 4 ? "int" : keyWidth == 8 ? "bigint" : "string or binary";
            return new TypeCheckResult.TypeCheckFailure("kafka_partition takes a " + wanted + " key column, got "
                + key.dataType().simpleString() + (keyWidth == 0 ? " (integer keys need key_type='int' or 'long')" : ""));
        }

        @Override
        public Expression replacement() {
            List<Expression> arguments = List.of(key, Literal.create(kind, DataTypes.IntegerType),
                Literal.create(foldCode, DataTypes.IntegerType), Literal.create(emptyKeyRandom, DataTypes.BooleanType),
                Literal.create(partitions, DataTypes.IntegerType));
            return new StaticInvoke(KassignMurmur2.class, DataTypes.IntegerType, "partitionOf",
                CollectionConverters.asScala(arguments).toSeq(),
                CollectionConverters.asScala(List.<AbstractDataType>of()).toSeq(), true, false, true, scala.Option.empty());
        }

        @Override
        public Seq<scala.Enumeration.Value> nodePatterns() {
            return CollectionConverters.asScala(List.of(TreePattern.RUNTIME_REPLACEABLE())).toSeq();
        }

        @Override
        public void org$apache$spark$sql$catalyst$expressions$RuntimeReplaceable$_setter_$nodePatterns_$eq(
                Seq<scala.Enumeration.Value> patterns) {
            // a Scala trait's field; this class answers nodePatterns() itself
        }

        @Override
        public Seq<Expression> children() {
            return CollectionConverters.asScala(List.of(key)).toSeq();
        }

        @Override
        public Expression withNewChildrenInternal(IndexedSeq<Expression> children) {
            return new PartitionExpression(children.apply(0), keyWidth, kind, foldCode, emptyKeyRandom, partitions);
        }

        @Override
        public boolean nullable() {
            return true;
        }

        @Override
        public DataType dataType() {
            return DataTypes.IntegerType;
        }

        @Override
        public Object eval(InternalRow row) {
            return replacement().eval(row);
        }

        @Override
        public ExprCode doGenCode(CodegenContext ctx, ExprCode ev) {
            return replacement().genCode(ctx);
        }

        @Override
        public String prettyName() {
            return "kafka_partition";
        }

        @Override
        public int productArity() {
            return 6;
        }

        @Override
        public Object productElement(int n) {
            switch (n) {
                case 0: return key;
                case 1: return keyWidth;
                case 2: return kind;
                case 3: return foldCode;
                case 4: return emptyKeyRandom;
                default: return partitions;
            }
        }

        @Override
        public boolean canEqual(Object other) {
            return other instanceof PartitionExpression;
        }

        // Value equality, as Scala's case classes have it: the analyzer matches grouping expressions
        // against the select list by equality, across copies made by tree transformations.
        @Override
        public boolean equals(Object other) {
            if (!(other instanceof PartitionExpression)) {
                return false;
            }
            PartitionExpression that = (PartitionExpression) other;
            return key.equals(that.key) && keyWidth == that.keyWidth && kind == that.kind && foldCode == that.foldCode
                && emptyKeyRandom == that.emptyKeyRandom && partitions == that.partitions;
        }

        @Override
        public int hashCode() {
            return java.util.Objects.hash(key, keyWidth, kind, foldCode, emptyKeyRandom, partitions);
        }
    }

    public static int partitionOf(UTF8String key, int kind, int foldCode, boolean emptyKeyRandom, int partitions) {
        if (key.numBytes() == 0 && emptyKeyRandom) {
            return -1;
        }
        // Spark's UTF-8 buffer is read in place: no copy per row
        long h = hash32(kind, key.getBaseObject(), key.getBaseOffset(), key.numBytes());
        return (int) (fold(foldCode, h) % partitions);
    }

    public static int partitionOf(byte[] key, int kind, int foldCode, boolean emptyKeyRandom, int partitions) {
        if (key.length == 0 && emptyKeyRandom) {
            return -1;
        }
        return (int) (fold(foldCode, hash32(kind, key)) % partitions);
    }

    public static int partitionOf(int key, int kind, int foldCode, boolean emptyKeyRandom, int partitions) {
        return partitionOf(keyBytes(key), kind, foldCode, emptyKeyRandom, partitions);
    }

    public static int partitionOf(long key, int kind, int foldCode, boolean emptyKeyRandom, int partitions) {
        return partitionOf(keyBytes(key), kind, foldCode, emptyKeyRandom, partitions);
    }

    /**
     * A client partitioner on one key: (key, hash kind, fold, null key hashed as empty,
     * empty key not hashed, partitions) -> partition, or null where the client does not
     * hash the key (it picks a partition itself).
     */
    public static final class Partition implements UDF6<Object, Integer, Integer, Boolean, Boolean, Integer, Integer> {
        @Override
        public Integer call(Object key, Integer kind, Integer foldCode, Boolean nullKeyHashed, Boolean emptyKeyRandom,
                            Integer partitions) {
            byte[] bytes;
            if (key == null) {
                if (!nullKeyHashed) {
                    return null;
                }
                bytes = new byte[0];
            } else {
                bytes = keyBytes(key);
                if (bytes.length == 0 && emptyKeyRandom) {
                    return null;
                }
            }
            return (int) (fold(foldCode, hash32(kind, bytes)) % partitions);
        }
    }

    /**
     * The producer models for records a client does not hash (kassign/spark/nullkeys.py and
     * kassign/producer/keyless.py state the rules and are the first implementation; this is the second,
     * tested to choose the same partitions). As a column, the pipeline places keyless records in the same
     * pass that hashes the keyed ones, instead of shipping them to a Python worker in a second scan.
     * {@code keyed}: the record's partition where it has a key (the producer model of Kafka 3.0-3.2 sees
     * keyed records too: they fill the same batches), null for a keyless record.
     */
    public static Column nullKeyColumn(Column topic, Column bytes, Column keyed, int model, long seed, int stream,
                                       long batchSize, Map<String, Integer> counts, int defaultCount, int rule,
                                       boolean rackAware, String[] clientRacks, Map<String, String[]> leaders) {
        NullKeyProducer producer = new NullKeyProducer(model, seed, stream, batchSize, new HashMap<>(counts),
                                                       defaultCount, rule, rackAware, clientRacks,
                                                       new HashMap<>(leaders));
        return functions.udf(producer, DataTypes.IntegerType).asNondeterministic().apply(topic, bytes, keyed);
    }

    /**
     * One producer per Spark task (one input split), seeing its records in input order. The object
     * reaches each task as its own deserialised copy, so the state (transient) starts empty in every
     * task and is never shared. Nondeterministic for Spark: it must be evaluated once per row, in order,
     * and only for the rows the caller routes to it. A keyed row (its partition given) returns null.
     */
    public static final class NullKeyProducer implements UDF3<String, Long, Integer, Integer> {
        static final int ROUND_ROBIN = 0;
        static final int STICKY = 1;
        static final int RANDOM = 2;
        /** The sticky model's rule: the built-in partitioner (3.3+, KIP-794; KIP-1123 when rack-aware), or KIP-480. */
        static final int BUILT_IN = 0;
        static final int STICKY_CACHE = 1;
        private static final long SPLIT_MIX = 0x9E3779B97F4A7C15L;
        private static final long STREAM_MIX = 0xBF58476D1CE4E5B9L;
        private static final long TOPIC_MIX = 0x94D049BB133111EBL;

        private final int model;
        private final long seed;
        private final int stream;
        private final long batchSize;
        private final HashMap<String, Integer> counts;
        private final int defaultCount;
        private final int rule;
        private final boolean rackAware;
        private final String[] clientRacks;
        private final HashMap<String, String[]> leaders;
        private transient int split;
        /** Per topic: its own java.util.Random, so draws do not depend on how topics interleave. */
        private transient HashMap<String, Random> rngs;
        /** Round-robin: topic -> {start, records sent}. */
        private transient HashMap<String, long[]> perTopic;
        private transient HashMap<String, Sticky> sticky;

        NullKeyProducer(int model, long seed, int stream, long batchSize, HashMap<String, Integer> counts,
                        int defaultCount, int rule, boolean rackAware, String[] clientRacks,
                        HashMap<String, String[]> leaders) {
            this.model = model;
            this.seed = seed;
            this.stream = stream;
            this.batchSize = batchSize;
            this.counts = counts;
            this.defaultCount = defaultCount;
            this.rule = rule;
            this.rackAware = rackAware;
            this.clientRacks = clientRacks;
            this.leaders = leaders;
        }

        /** java.util.Random's seed for (seed, split, stream, topic): a fixed mix, so Python can start the same sequence. */
        static long topicSeed(long seed, int split, int stream, String topic) {
            return seed + split * SPLIT_MIX + stream * STREAM_MIX + topic.hashCode() * TOPIC_MIX;
        }

        @Override
        public Integer call(String topic, Long bytes, Integer keyed) {
            if (rngs == null) {
                TaskContext task = TaskContext.get();
                split = task == null ? 0 : task.partitionId();
                rngs = new HashMap<>();
                perTopic = new HashMap<>();
                sticky = new HashMap<>();
            }
            Random rng = rngs.get(topic);
            if (rng == null) {
                rng = new Random(topicSeed(seed, split, stream, topic));
                rngs.put(topic, rng);
            }
            int n = counts.getOrDefault(topic, defaultCount);
            long size = bytes == null ? 0 : bytes;
            if (model == STICKY) {
                Sticky state = sticky.get(topic);
                if (state == null) {
                    state = new Sticky(n, rule == STICKY_CACHE, batchSize, rng, candidates(topic, n));
                    sticky.put(topic, state);
                }
                if (keyed != null) {
                    state.keyed(keyed, size);
                    return null;
                }
                return state.keyless(size);
            }
            if (keyed != null) {
                return null;
            }
            if (model == RANDOM) {
                return rng.nextInt(n);
            }
            long[] state = perTopic.get(topic);
            if (state == null) {
                state = new long[] {rng.nextInt(n), 0};
                perTopic.put(topic, state);
            }
            return (int) ((state[0] + state[1]++) % n);
        }

        /** The partitions led in this producer's rack (rack-aware, where there are any), else null: all of them. */
        private int[] candidates(String topic, int n) {
            String[] racks = leaders.get(topic);
            if (!rackAware || racks == null || clientRacks.length == 0) {
                return null;
            }
            String rack = clientRacks[split % clientRacks.length];
            int found = 0;
            int[] inRack = new int[n];
            for (int p = 0; p < n && p < racks.length; p++) {
                if (rack.equals(racks[p])) {
                    inRack[found++] = p;
                }
            }
            return found == 0 ? null : java.util.Arrays.copyOf(inRack, found);
        }
    }

    /** One producer's sticky partition on one topic, every partition led (kassign/producer/keyless.py). */
    static final class Sticky {
        private static final long NO_BATCH = -1;
        private final int n;
        private final boolean cache;
        private final long batchSize;
        private final Random rng;
        private final int[] candidates;
        private final long[] fill;
        private int current = -1;
        private long produced;

        Sticky(int n, boolean cache, long batchSize, Random rng, int[] candidates) {
            this.n = n;
            this.cache = cache;
            this.batchSize = cache ? batchSize : Math.max(1, batchSize);
            this.rng = rng;
            this.candidates = candidates;
            this.fill = cache ? new long[n] : null;
            if (cache) {
                java.util.Arrays.fill(fill, NO_BATCH);
            }
        }

        private int draw() {
            return rng.nextInt() & 0x7fffffff;
        }

        private int nextBuiltIn() {
            int r = draw();
            return candidates == null ? r % n : candidates[r % candidates.length];
        }

        private int nextCache(int previous) {
            int old = current;
            if (old != -1 && old != previous) {
                return old;
            }
            int next = -1;
            if (n == 1) {
                next = 0;
            } else {
                while (next == -1 || next == old) {
                    next = draw() % n;
                }
            }
            current = next;
            return next;
        }

        private boolean fits(int partition, long size) {
            long filled = fill[partition];
            return filled >= 0 && filled < batchSize && filled + size <= batchSize;
        }

        int keyless(long size) {
            if (!cache) {
                if (current == -1) {
                    current = nextBuiltIn();
                }
                int partition = current;
                produced += size;
                if (produced >= batchSize) {
                    current = nextBuiltIn();
                    produced = 0;
                }
                return partition;
            }
            int partition = current != -1 ? current : nextCache(-1);
            if (fits(partition, size)) {
                fill[partition] += size;
                return partition;
            }
            fill[partition] = NO_BATCH;
            partition = nextCache(partition);
            if (fits(partition, size)) {
                fill[partition] += size;
            } else {
                fill[partition] = size;
            }
            return partition;
        }

        void keyed(int partition, long size) {
            if (!cache || partition < 0 || partition >= n) {
                return;
            }
            if (fits(partition, size)) {
                fill[partition] += size;
                return;
            }
            nextCache(partition);
            fill[partition] = size;
        }
    }

    /**
     * CRC-32 (IEEE, reflected polynomial 0xEDB88320, as zlib and librdkafka's consistent
     * partitioner), bits as a signed int. Table-driven rather than java.util.zip.CRC32: keys are
     * a few bytes, where a lookup per byte beats allocating a checksum object per row.
     */
    static final class Crc32 {
        private static final int[] TABLE = new int[256];

        static {
            for (int b = 0; b < 256; b++) {
                int c = b;
                for (int i = 0; i < 8; i++) {
                    c = (c & 1) != 0 ? (c >>> 1) ^ 0xEDB88320 : c >>> 1;
                }
                TABLE[b] = c;
            }
        }

        static int hash(Object base, long offset, int length) {
            int c = 0xFFFFFFFF;
            for (long at = offset, end = offset + length; at < end; at++) {
                c = TABLE[(c ^ Platform.getByte(base, at)) & 0xff] ^ (c >>> 8);
            }
            return ~c;
        }
    }

    /** FNV-1a 32-bit (librdkafka fnv1a, Sarama's hash partitioner), bits as a signed int. */
    static final class Fnv1a {
        static int hash(Object base, long offset, int length) {
            int h = 0x811c9dc5;
            for (long at = offset, end = offset + length; at < end; at++) {
                h = (h ^ (Platform.getByte(base, at) & 0xff)) * 0x01000193;
            }
            return h;
        }
    }

    /**
     * KafkaJS's LegacyPartitioner hash: murmur2 evaluated in JavaScript numbers.
     *
     * Each multiplication is a double product (rounded to 53 bits), wrapped back to 32 bits
     * by the next bitwise operator; the block loop also runs for a last partial block,
     * reading missing bytes as 0, before the tail is mixed in as usual.
     */
    static final class KafkajsLegacy {
        /** JavaScript's a * b for two 32-bit ints, then ToInt32 (the double is whole and below 2^63). */
        private static long times(int a) {
            return (long) ((double) a * MIX_DOUBLE);
        }

        static int hash(Object base, long offset, int length) {
            int h = SEED ^ length;
            final int blocks = (length + 3) >>> 2;
            for (int block = 0; block < blocks; block++) {
                final int j = 4 * block;
                int word;
                if (j + 4 <= length) {
                    word = (Platform.getByte(base, offset + j) & 0xff) | ((Platform.getByte(base, offset + j + 1) & 0xff) << 8) | ((Platform.getByte(base, offset + j + 2) & 0xff) << 16) | ((Platform.getByte(base, offset + j + 3) & 0xff) << 24);
                } else {  // the partial last block, missing bytes read as 0
                    word = 0;
                    for (int b = 0; j + b < length; b++) {
                        word |= (Platform.getByte(base, offset + j + b) & 0xff) << (8 * b);
                    }
                }
                long k = times(word);
                int k32 = (int) k ^ ((int) k >>> 24);
                k = times(k32);
                h = (int) times(h) ^ (int) k;
            }
            final int whole = length & ~3;
            long wide = h;
            switch (length & 3) {
                case 3:
                    h ^= (Platform.getByte(base, offset + whole + 2) & 0xff) << 16;
                    // fall through
                case 2:
                    h ^= (Platform.getByte(base, offset + whole + 1) & 0xff) << 8;
                    // fall through
                case 1:
                    h ^= Platform.getByte(base, offset + whole) & 0xff;
                    wide = times(h);
                    break;
                default:
                    wide = h;
                    break;
            }
            h = (int) wide ^ ((int) wide >>> 13);
            wide = times(h);
            h = (int) wide ^ ((int) wide >>> 15);
            return h;
        }
    }
}
