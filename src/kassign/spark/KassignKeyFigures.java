package kassign.spark;

import java.util.Arrays;
import java.util.Iterator;
import java.util.NoSuchElementException;

import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The pipeline's per-key counting, first half: within each input split, records and bytes per
 * group of ([topic,] key, partition, reason), in bounded hash tables of our own.
 *
 * Why not Spark's own partial aggregation: with many keys (200,000 in the pipeline benchmark)
 * its one hash map per task is far bigger than the cache, so nearly every row waits for memory
 * twice, for its slot and for the key it compares; in a profile of the scan stage that lookup
 * was about 45% of the CPU. Here a chunk of rows is first streamed into 256 buckets by hash,
 * and each bucket is then counted into its own table, small enough to stay in the cache; in the
 * same profile, streaming and counting together take about a third of the stage, most of it
 * encoding the rows.
 *
 * The result is exact because nothing is approximated here: each split emits partial counts
 * (one row per group it saw, or more when the tables filled up and were flushed), and the caller
 * merges them with Spark's own aggregation, which spills to disk when it must. Rows per split
 * are therefore at most the rows read, usually the distinct groups, and memory per task is
 * bounded by {@code maxGroups} and {@code maxBytes}, never by the input.
 *
 * Example: the split's rows ("a", null, null, 10), ("b", null, null, 30), ("a", null, null, 5),
 * (null, 3, null, 7), (null, null, "bad size", null) as (key, partition, reason, bytes) give
 * ("a", null, null, 2, 15), ("b", null, null, 1, 30), (null, 3, null, 1, 7) and
 * (null, null, "bad size", 1, null) as (key, partition, reason, records, bytes).
 *
 * Data layout: one group is its fields encoded into bytes (nullable text and binary as a length,
 * -1 for null, then the bytes; int and long keys as the value and a null flag). A chunk's rows
 * are these encodings, with hash and bytes, appended to 256 byte[] streams; a table keeps its
 * groups with their figures end to end in one byte[] arena, its open addressing in one long[]
 * of (hash, arena offset). No object per row; a group becomes an object only when emitted.
 */
public final class KassignKeyFigures {
    private KassignKeyFigures() {
    }

    /**
     * Partial figures of {@code placed}, whose columns are the grouping columns (an optional string
     * {@code topic}, then {@code key} of type string, binary, int or bigint, int {@code partition}
     * and string {@code reason}) followed by bigint {@code bytes}. Returns the grouping columns,
     * {@code records} and {@code bytes}. A task's tables hold about {@code maxGroups} groups (one
     * chunk more at most) before they are flushed, and a chunk and the tables each get half of
     * {@code maxBytes}; 0 for both sizes them from the task's share of the JVM heap.
     */
    public static Dataset<Row> partial(Dataset<Row> placed, int maxGroups, int maxBytes) {
        StructType in = placed.schema();
        int fields = in.fields().length;
        Shape shape = new Shape(fields - 1, kindsOf(in, fields - 1));
        StructType out = new StructType(Arrays.copyOf(in.fields(), fields - 1))
            .add("records", DataTypes.LongType, false)
            .add("bytes", DataTypes.LongType, true);
        RDD<InternalRow> rows = placed.queryExecution().toRdd().toJavaRDD()
            .mapPartitions(new PerSplit(shape, maxGroups, maxBytes)).rdd();
        return placed.sparkSession().internalCreateDataFrame(rows, out, false);
    }

    static final int TEXT = 0;
    static final int BINARY = 1;
    static final int INT = 2;
    static final int LONG = 3;

    private static int[] kindsOf(StructType schema, int groupColumns) {
        int[] kinds = new int[groupColumns];
        for (int i = 0; i < groupColumns; i++) {
            DataType type = schema.fields()[i].dataType();
            if (type instanceof StringType) {
                kinds[i] = TEXT;
            } else if (type instanceof BinaryType) {
                kinds[i] = BINARY;
            } else if (type instanceof IntegerType) {
                kinds[i] = INT;
            } else if (type instanceof LongType) {
                kinds[i] = LONG;
            } else {
                throw new IllegalArgumentException("kassign: cannot group on " + schema.fields()[i].name()
                    + " of type " + type.simpleString());
            }
        }
        StructField last = schema.fields()[groupColumns];
        if (!(last.dataType() instanceof LongType)) {
            throw new IllegalArgumentException("kassign: the last column must be bigint bytes, got "
                + last.dataType().simpleString());
        }
        return kinds;
    }

    /** The grouping columns' kinds, and how to encode and decode one group. */
    static final class Shape implements java.io.Serializable {
        final int columns;
        final int[] kinds;

        Shape(int columns, int[] kinds) {
            this.columns = columns;
            this.kinds = kinds;
        }

        /** Appends the group of {@code row} to {@code into} (grown as needed). */
        void encode(InternalRow row, Scratch into) {
            for (int i = 0; i < columns; i++) {
                boolean missing = row.isNullAt(i);
                switch (kinds[i]) {
                    case INT:
                        into.putInt(missing ? -1 : row.getInt(i));
                        into.putByte(missing ? 0 : 1);
                        break;
                    case LONG:
                        into.putLong(missing ? 0 : row.getLong(i));
                        into.putByte(missing ? 0 : 1);
                        break;
                    default:
                        if (missing) {
                            into.putInt(-1);
                        } else if (kinds[i] == TEXT || row instanceof UnsafeRow) {
                            // An UnsafeRow stores binary as it stores text: a view, not a copy.
                            UTF8String view = row.getUTF8String(i);
                            into.putInt(view.numBytes());
                            into.put(view.getBaseObject(), view.getBaseOffset(), view.numBytes());
                        } else {
                            byte[] value = row.getBinary(i);
                            into.putInt(value.length);
                            into.put(value, Platform.BYTE_ARRAY_OFFSET, value.length);
                        }
                        break;
                }
            }
        }

        /** The group encoded at {@code at} of {@code arena} as row values (copies, never views). */
        Object[] decode(byte[] arena, int at, int extra) {
            Object[] values = new Object[columns + extra];
            long p = Platform.BYTE_ARRAY_OFFSET + at;
            for (int i = 0; i < columns; i++) {
                switch (kinds[i]) {
                    case INT: {
                        int value = Platform.getInt(arena, p);
                        values[i] = Platform.getByte(arena, p + 4) == 0 ? null : value;
                        p += 5;
                        break;
                    }
                    case LONG: {
                        long value = Platform.getLong(arena, p);
                        values[i] = Platform.getByte(arena, p + 8) == 0 ? null : value;
                        p += 9;
                        break;
                    }
                    default: {
                        int length = Platform.getInt(arena, p);
                        p += 4;
                        if (length >= 0) {
                            int start = (int) (p - Platform.BYTE_ARRAY_OFFSET);
                            byte[] bytes = Arrays.copyOfRange(arena, start, start + length);
                            values[i] = kinds[i] == TEXT ? UTF8String.fromBytes(bytes) : bytes;
                            p += length;
                        }
                        break;
                    }
                }
            }
            return values;
        }
    }

    /** {@code bytes}, or a copy at least twice as long when it holds fewer than {@code needed}. */
    static byte[] withRoom(byte[] bytes, int needed) {
        return needed <= bytes.length ? bytes : Arrays.copyOf(bytes, Math.max(bytes.length * 2, needed));
    }

    /** {@code size} rounded up to a multiple of 8, so that what follows starts aligned. */
    static int padded(int size) {
        return (size + 7) & ~7;
    }

    /** A growable byte buffer written through Platform (native byte order: it is only read back here). */
    static final class Scratch {
        byte[] bytes = new byte[256];
        int length;

        private void room(int more) {
            bytes = withRoom(bytes, length + more);
        }

        /** Skips to a multiple of 8 bytes (the padding is never read). */
        void align() {
            int end = padded(length);
            room(end - length);
            length = end;
        }

        void putByte(int value) {
            room(1);
            bytes[length++] = (byte) value;
        }

        void putInt(int value) {
            room(4);
            Platform.putInt(bytes, Platform.BYTE_ARRAY_OFFSET + length, value);
            length += 4;
        }

        void putLong(long value) {
            room(8);
            Platform.putLong(bytes, Platform.BYTE_ARRAY_OFFSET + length, value);
            length += 8;
        }

        void put(Object base, long offset, int count) {
            room(count);
            Platform.copyMemory(base, offset, bytes, Platform.BYTE_ARRAY_OFFSET + length, count);
            length += count;
        }
    }

    /** The task side: the split's rows counted by {@link Buckets}, emitted whenever the tables fill up and at the end. */
    static final class PerSplit implements FlatMapFunction<Iterator<InternalRow>, InternalRow> {
        private final Shape shape;
        private final int maxGroups;
        private final int maxBytes;

        PerSplit(Shape shape, int maxGroups, int maxBytes) {
            this.shape = shape;
            this.maxGroups = maxGroups;
            this.maxBytes = maxBytes;
        }

        @Override
        public Iterator<InternalRow> call(Iterator<InternalRow> input) {
            if (maxGroups > 0 && maxBytes > 0) {
                return new Drain(input, new Buckets(shape, maxGroups, maxBytes));
            }
            // An eighth of the heap shared by as many tasks as there are cores (Spark's own memory
            // is elsewhere in the heap): 64 MiB a task with 1 GiB and 2 cores, at least 8 MiB.
            long share = Runtime.getRuntime().maxMemory() / 8 / Runtime.getRuntime().availableProcessors();
            int budget = (int) Math.max(8L << 20, Math.min(64L << 20, share));
            return new Drain(input, new Buckets(shape, Integer.MAX_VALUE, budget));
        }
    }

    /** Counts chunks of the input until the tables are full, then emits every group, clears and goes on. */
    static final class Drain implements Iterator<InternalRow> {
        private final Iterator<InternalRow> input;
        private final Buckets buckets;
        private int bucket = Buckets.COUNT;
        private int at;

        Drain(Iterator<InternalRow> input, Buckets buckets) {
            this.input = input;
            this.buckets = buckets;
        }

        @Override
        public boolean hasNext() {
            while (true) {
                while (bucket < Buckets.COUNT) {
                    if (!buckets.tables[bucket].emitted(at)) {
                        return true;
                    }
                    bucket++;
                    at = 0;
                }
                buckets.clear();
                if (!input.hasNext()) {
                    return false;
                }
                do {
                    buckets.readChunk(input);
                    buckets.countChunk();
                } while (!buckets.full() && input.hasNext());
                bucket = 0;
                at = 0;
            }
        }

        @Override
        public InternalRow next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            Table table = buckets.tables[bucket];
            InternalRow row = table.row(buckets.shape, at);
            at = table.after(at);
            return row;
        }
    }

    /**
     * Radix-partitioned counting. One table for all groups would be too big for the cache, and with
     * many groups nearly every row would wait for memory twice (its slot, then its group): on this
     * work that doubles the whole scan. So a chunk of rows is first written, encoded, to one of
     * {@link #COUNT} streams by the top bits of its hash (sequential writes to a few hot cache
     * lines), and then each stream is counted into its own table, a 256th of the groups, which
     * stays in the cache while its rows are counted.
     *
     * A streamed row is its encoded length (the top bit set when its bytes are null), its hash, its
     * bytes and its encoding, padded to 8 bytes.
     */
    static final class Buckets {
        static final int COUNT = 256;
        private static final int ROW_HEADER = 4 + 4 + 8;
        private static final int NULL_BYTES = 0x80000000;
        final Shape shape;
        private final int maxGroups;
        private final int chunkBytes;
        private final int tableBytes;
        private final Scratch scratch = new Scratch();
        private final Scratch[] streams = new Scratch[COUNT];
        final Table[] tables = new Table[COUNT];

        /** At most {@code maxGroups} groups; {@code maxBytes} shared evenly by a chunk's streams and the tables. */
        Buckets(Shape shape, int maxGroups, int maxBytes) {
            this.shape = shape;
            this.maxGroups = maxGroups;
            this.chunkBytes = Math.max(1, maxBytes / 2);
            this.tableBytes = Math.max(1, maxBytes / 2);
            for (int b = 0; b < COUNT; b++) {
                streams[b] = new Scratch();
                tables[b] = new Table();
            }
        }

        /** Streams rows of {@code input} until the chunk holds {@code chunkBytes} (at least one row). */
        void readChunk(Iterator<InternalRow> input) {
            int last = shape.columns;
            long filled = 0;
            do {
                InternalRow row = input.next();
                scratch.length = 0;
                shape.encode(row, scratch);
                int length = scratch.length;
                int hash = hashOf(scratch.bytes, 0, length);
                Scratch stream = streams[hash >>> 24];
                int start = stream.length;
                boolean counted = !row.isNullAt(last);
                stream.putInt(counted ? length : length | NULL_BYTES);
                stream.putInt(hash);
                stream.putLong(counted ? row.getLong(last) : 0L);
                stream.put(scratch.bytes, Platform.BYTE_ARRAY_OFFSET, length);
                stream.align();
                filled += stream.length - start;
            } while (filled < chunkBytes && input.hasNext());
        }

        /** Counts each stream into its table and empties it. */
        void countChunk() {
            for (int b = 0; b < COUNT; b++) {
                byte[] stream = streams[b].bytes;
                Table table = tables[b];
                int end = streams[b].length;
                for (int at = 0; at < end; ) {
                    long base = Platform.BYTE_ARRAY_OFFSET + at;
                    int header = Platform.getInt(stream, base);
                    int length = header & ~NULL_BYTES;
                    boolean counted = (header & NULL_BYTES) == 0;
                    table.add(Platform.getInt(stream, base + 4), stream, at + ROW_HEADER, length, counted,
                              Platform.getLong(stream, base + 8));
                    at += padded(ROW_HEADER + length);
                }
                streams[b].length = 0;
            }
        }

        /** True when the tables hold their share of memory or {@code maxGroups} groups. */
        boolean full() {
            long bytes = 0;
            long groups = 0;
            for (Table table : tables) {
                bytes += table.footprint();
                groups += table.groups;
            }
            return bytes >= tableBytes || groups >= maxGroups;
        }

        void clear() {
            for (Table table : tables) {
                table.clear();
            }
        }
    }

    /** A table's hash of the encoded group (any good mix will do: it never leaves this class). */
    static int hashOf(byte[] bytes, int start, int length) {
        long h = 0x9E3779B97F4A7C15L ^ length;
        long p = Platform.BYTE_ARRAY_OFFSET + start;
        int whole = length & ~7;
        for (int i = 0; i < whole; i += 8) {
            h = (h ^ Platform.getLong(bytes, p + i)) * 0xBF58476D1CE4E5B9L;
            h ^= h >>> 31;
        }
        long tail = 0;
        for (int i = whole; i < length; i++) {
            tail = (tail << 8) | (bytes[start + i] & 0xff);
        }
        h = (h ^ tail) * 0x94D049BB133111EBL;
        h ^= h >>> 29;
        return (int) (h ^ (h >>> 32));
    }

    /**
     * One bucket's groups: open addressing with linear probing. A slot is one long: the group's hash
     * (high half) and where the group starts in the arena (low half), so a probe touches one array
     * until the hashes agree. In the arena a group is its figures (records, bytes), its encoded
     * length and whether any bytes were counted, then its encoding, padded to 8 bytes: emitting
     * walks the arena from the start.
     */
    static final class Table {
        private static final long EMPTY = -1L;
        private static final int HEADER = 8 + 8 + 4 + 4;
        private long[] slots = emptySlots(16);
        private byte[] arena = new byte[512];
        private int used;
        int groups;

        private static long[] emptySlots(int size) {
            long[] slots = new long[size];
            Arrays.fill(slots, EMPTY);
            return slots;
        }

        /** Bytes held: arena and slots. */
        long footprint() {
            return arena.length + 8L * slots.length;
        }

        void clear() {
            if (groups > 0) {
                Arrays.fill(slots, EMPTY);
            }
            groups = 0;
            used = 0;
        }

        /** Counts one row whose group is encoded in {@code length} bytes at {@code start} of {@code keys}. */
        void add(int hash, byte[] keys, int start, int length, boolean counted, long bytes) {
            long figures = Platform.BYTE_ARRAY_OFFSET + find(hash, keys, start, length);
            Platform.putLong(arena, figures, Platform.getLong(arena, figures) + 1);
            if (counted) {
                Platform.putLong(arena, figures + 8, Platform.getLong(arena, figures + 8) + bytes);
                Platform.putInt(arena, figures + 20, 1);
            }
        }

        /** Where the group of these bytes starts in the arena, inserting it when new. */
        private int find(int hash, byte[] keys, int start, int length) {
            int mask = slots.length - 1;
            int slot = hash & mask;
            while (true) {
                long entry = slots[slot];
                if (entry == EMPTY) {
                    return insert(slot, hash, keys, start, length);
                }
                int at = (int) entry;
                if ((int) (entry >>> 32) == hash && lengthAt(at) == length
                        && Arrays.equals(arena, at + HEADER, at + HEADER + length, keys, start, start + length)) {
                    return at;
                }
                slot = (slot + 1) & mask;
            }
        }

        private int lengthAt(int at) {
            return Platform.getInt(arena, Platform.BYTE_ARRAY_OFFSET + at + 16);
        }

        private int insert(int slot, int hash, byte[] keys, int start, int length) {
            int at = used;
            int size = padded(HEADER + length);
            arena = withRoom(arena, at + size);
            long base = Platform.BYTE_ARRAY_OFFSET + at;
            Platform.putLong(arena, base, 0L);
            Platform.putLong(arena, base + 8, 0L);
            Platform.putInt(arena, base + 16, length);
            Platform.putInt(arena, base + 20, 0);
            System.arraycopy(keys, start, arena, at + HEADER, length);
            used += size;
            groups++;
            slots[slot] = ((long) hash << 32) | at;
            if (groups * 2 > slots.length) {
                rehash();
            }
            return at;
        }

        private void rehash() {
            long[] old = slots;
            slots = emptySlots(old.length * 2);
            int mask = slots.length - 1;
            for (long entry : old) {
                if (entry != EMPTY) {
                    int slot = (int) (entry >>> 32) & mask;
                    while (slots[slot] != EMPTY) {
                        slot = (slot + 1) & mask;
                    }
                    slots[slot] = entry;
                }
            }
        }

        /** Where the group after the one at {@code at} starts. */
        int after(int at) {
            return at + padded(HEADER + lengthAt(at));
        }

        boolean emitted(int at) {
            return at >= used;
        }

        /** The group at {@code at} as a row: its grouping values, records and bytes (null when none were counted). */
        InternalRow row(Shape shape, int at) {
            long base = Platform.BYTE_ARRAY_OFFSET + at;
            Object[] values = shape.decode(arena, at + HEADER, 2);
            values[shape.columns] = Platform.getLong(arena, base);
            values[shape.columns + 1] = Platform.getInt(arena, base + 20) != 0 ? Platform.getLong(arena, base + 8) : null;
            return new GenericInternalRow(values);
        }
    }
}
