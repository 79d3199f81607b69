package kassign.spark;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.LinkedBlockingQueue;

import org.apache.spark.SparkContext;
import org.apache.spark.TaskContext;
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

import scala.reflect.ClassTag;
import scala.runtime.AbstractFunction2;
import scala.runtime.BoxedUnit;

/**
 * The pipeline's per-key counting: within each input split, records and bytes per group of
 * ([topic,] key, partition, reason), in bounded hash tables of our own; then the splits' tables
 * added up, by the driver JVM ({@link #mergeOnDriver}) or by Spark ({@link #partial}).
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
 * (one group for each it saw, or more when the tables filled up and were flushed), and these are
 * added up exactly, on the driver as the splits finish (the tables sent as blocks of bytes, merged
 * into tables of the same kind), or, when they are too many for the driver, as rows by Spark's own
 * aggregation, which spills to disk when it must. Groups per split are therefore at most the rows
 * read, usually the distinct groups, and memory per task is bounded by {@code maxGroups} and
 * {@code maxBytes}, never by the input.
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
 * of (hash, arena offset). No object per row; a group becomes an object only when emitted as a
 * row ({@link #partial}); sent to the driver ({@link #mergeOnDriver}), a split's tables are one
 * block of bytes, each table's arena after its length, and the merged groups leave the driver JVM
 * as column buffers.
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
        Shape shape = shapeOf(in);
        StructType out = new StructType(Arrays.copyOf(in.fields(), shape.columns))
            .add("records", DataTypes.LongType, false)
            .add("bytes", DataTypes.LongType, true);
        RDD<InternalRow> rows = placed.queryExecution().toRdd().toJavaRDD()
            .mapPartitions(new PerSplit(new Counting(shape, maxGroups, maxBytes))).rdd();
        return placed.sparkSession().internalCreateDataFrame(rows, out, false);
    }

    /**
     * The figures of {@link #partial}, merged on the driver instead of in Spark or Python: each split
     * sends its tables as they are (a block of bytes per flush, no row or Arrow conversion per group),
     * and a driver thread adds every block into tables of its own as the splits finish, while later
     * splits still run. The merged groups are written to {@code path} as column buffers
     * ({@link ColumnFile}): the grouping columns, {@code records} and {@code bytes}.
     *
     * Returns the number of groups, or -1 when the merged tables would hold more than
     * {@code maxDriverBytes} (0: a quarter of the driver's heap) or a column would not fit one Java
     * array; the caller then merges in Spark, whose aggregation spills. What the splits send is bounded by {@code spark.driver.maxResultSize}
     * as for any collect. Exact under task retries: Spark hands the driver one successful result per
     * split.
     */
    public static long mergeOnDriver(Dataset<Row> placed, int maxGroups, int maxBytes, long maxDriverBytes,
                                     String path) throws Exception {
        Shape shape = shapeOf(placed.schema());
        long bound = maxDriverBytes > 0 ? maxDriverBytes : Runtime.getRuntime().maxMemory() / 4;
        RDD<InternalRow> rows = placed.queryExecution().toRdd();
        Merger merger = new Merger(bound);
        Thread thread = new Thread(merger, "kassign-merge-splits");
        thread.setDaemon(true);
        thread.start();
        List<Object> splits = new ArrayList<>();
        for (int i = 0; i < rows.getNumPartitions(); i++) {
            splits.add(i);
        }
        SparkContext context = placed.sparkSession().sparkContext();
        ClassTag<byte[][]> tag = scala.reflect.ClassTag$.MODULE$.apply(byte[][].class);
        try {
            context.runJob(rows, new SplitBlocks(new Counting(shape, maxGroups, maxBytes)),
                scala.jdk.javaapi.CollectionConverters.asScala(splits).toSeq(), new Arrived(merger), tag);
        } catch (Exception err) {  // Scala declares none: Spark's own exceptions arrive unchecked here
            merger.stop();
            thread.join();
            merger.rethrowFailure();
            if (merger.overflowed) {
                return -1;
            }
            throw err;
        }
        merger.finish();
        thread.join();
        merger.rethrowFailure();
        if (merger.overflowed) {
            return -1;
        }
        return ColumnFile.write(shape, merger.tables, path);
    }

    /** The task side of {@link #mergeOnDriver}: the split counted by {@link Buckets}, each flush of its tables as one block. */
    static final class SplitBlocks extends AbstractFunction2<TaskContext, scala.collection.Iterator<InternalRow>, byte[][]>
            implements java.io.Serializable {
        private final Counting counting;

        SplitBlocks(Counting counting) {
            this.counting = counting;
        }

        @Override
        public byte[][] apply(TaskContext task, scala.collection.Iterator<InternalRow> rows) {
            Iterator<InternalRow> input = scala.jdk.javaapi.CollectionConverters.asJava(rows);
            Buckets buckets = counting.buckets();
            List<byte[]> blocks = new ArrayList<>();
            while (input.hasNext()) {
                buckets.countUntilFull(input);
                blocks.add(buckets.block());
                buckets.clear();
            }
            return blocks.toArray(new byte[0][]);
        }
    }

    /** Hands each split's blocks to the merger as Spark reports the split done (on Spark's scheduler thread: no work here). */
    static final class Arrived extends AbstractFunction2<Object, byte[][], BoxedUnit> {
        private final Merger merger;
        private boolean stopped;

        Arrived(Merger merger) {
            this.merger = merger;
        }

        @Override
        public BoxedUnit apply(Object split, byte[][] blocks) {
            if (stopped) {
                return BoxedUnit.UNIT;  // a split that was still running when the job failed
            }
            if (merger.overflowed || merger.failure != null) {
                stopped = true;  // Spark fails the job with this: its figures are no longer wanted here
                throw new IllegalStateException("kassign: the splits' figures are no longer merged on the driver");
            }
            merger.arrived(blocks);
            return BoxedUnit.UNIT;
        }
    }

    /** The driver's tables, fed block by block on a thread of its own. */
    static final class Merger implements Runnable {
        private static final byte[][] END = new byte[0][];
        private final LinkedBlockingQueue<byte[][]> queue = new LinkedBlockingQueue<>();
        private final long bound;
        final Table[] tables = new Table[Buckets.COUNT];
        volatile boolean overflowed;
        volatile Throwable failure;

        Merger(long bound) {
            this.bound = bound;
            for (int b = 0; b < Buckets.COUNT; b++) {
                tables[b] = new Table();
            }
        }

        void arrived(byte[][] blocks) {
            queue.add(blocks);
        }

        void finish() {
            queue.add(END);
        }

        void rethrowFailure() {
            if (failure != null) {
                throw new IllegalStateException("kassign: merging the splits' figures on the driver failed", failure);
            }
        }

        /** Ends the thread without merging what is still queued (the job failed). */
        void stop() {
            queue.clear();
            queue.add(END);
        }

        @Override
        public void run() {
            try {
                while (true) {
                    byte[][] blocks = queue.take();
                    if (blocks == END) {
                        return;
                    }
                    for (byte[] block : blocks) {
                        if (overflowed) {
                            continue;  // drained, not merged: the caller merges in Spark instead
                        }
                        add(block);
                        if (footprint() > bound) {
                            overflowed = true;
                            Arrays.fill(tables, null);
                        }
                    }
                }
            } catch (Throwable err) {
                failure = err;
            }
        }

        private long footprint() {
            long bytes = 0;
            for (Table table : tables) {
                bytes += table.footprint();
            }
            return bytes;
        }

        /** Adds a block of {@link Buckets#block()}: each bucket's arena, group by group, into the same bucket here. */
        private void add(byte[] block) {
            int at = 0;
            for (int b = 0; b < Buckets.COUNT; b++) {
                int used = (int) Platform.getLong(block, Platform.BYTE_ARRAY_OFFSET + at);
                at += 8;
                tables[b].addArena(block, at, used);
                at += used;
            }
        }
    }

    /**
     * Merged groups as column buffers in one file, which Python wraps as Arrow arrays without a step
     * per value ({@code kassign.spark.key_merge.read_column_file}). Native byte order: the file never
     * leaves the driver's machine.
     *
     * Layout: the 8 bytes {@code KKFCOLS1}, the row count (a long), then each column's buffers, a
     * buffer being its length (a long) and its bytes padded to 8. A text or binary column has a
     * validity bitmap (Arrow's: bit i of byte i/8, least significant first, set for a value), int32
     * offsets (rows + 1) and the bytes; an int or long column a validity bitmap and the values. The
     * grouping columns come first, then {@code records} (a long column) and {@code bytes} (a long
     * column, null where no bytes were counted).
     *
     * Example: groups ("a", 2 records, 15 bytes) and ("bc", 1, null) of one text column give the key
     * column's bitmap 0b11, offsets 0, 1, 3 and bytes "abc"; records 2, 1; bytes bitmap 0b01 and 15, 0.
     */
    static final class ColumnFile {
        private static final byte[] MAGIC = "KKFCOLS1".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

        private ColumnFile() {
        }

        /** Writes every group of {@code tables}; returns the row count, or -1 when a column would not fit
         * one Java array (a text column past 2 GiB, or 2^28 groups and more). */
        static long write(Shape shape, Table[] tables, String path) throws IOException {
            long rows = 0;
            long[] text = new long[shape.columns];
            for (Table table : tables) {
                for (int at = 0; !table.emitted(at); at = table.after(at)) {
                    rows++;
                    table.measure(shape, at, text);
                }
            }
            if (8 * (rows + 1) > Integer.MAX_VALUE - 8) {
                return -1;
            }
            for (long bytes : text) {
                if (bytes > Integer.MAX_VALUE - 8) {
                    return -1;
                }
            }
            Column[] columns = new Column[shape.columns + 2];
            for (int i = 0; i < shape.columns; i++) {
                columns[i] = new Column(shape.kinds[i], (int) rows, (int) text[i]);
            }
            columns[shape.columns] = new Column(LONG, (int) rows, 0);
            columns[shape.columns + 1] = new Column(LONG, (int) rows, 0);
            int row = 0;
            for (Table table : tables) {
                for (int at = 0; !table.emitted(at); at = table.after(at)) {
                    table.fill(shape, at, columns, row++);
                }
            }
            try (FileChannel out = FileChannel.open(Paths.get(path), StandardOpenOption.CREATE,
                    StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
                ByteBuffer head = ByteBuffer.allocate(16).order(ByteOrder.nativeOrder());
                head.put(MAGIC).putLong(rows).flip();
                writeAll(out, head);
                for (Column column : columns) {
                    column.writeTo(out);
                }
            }
            return rows;
        }

        private static void writeAll(FileChannel out, ByteBuffer buffer) throws IOException {
            while (buffer.hasRemaining()) {
                out.write(buffer);
            }
        }

        /** One column's buffers, filled row by row. */
        static final class Column {
            final byte[] validity;
            final byte[] offsets;  // text and binary only
            final byte[] values;
            int end;  // text and binary: bytes written so far

            Column(int kind, int rows, int textBytes) {
                this.validity = new byte[(rows + 7) / 8];
                boolean variable = kind == TEXT || kind == BINARY;
                this.offsets = variable ? new byte[4 * (rows + 1)] : null;
                this.values = new byte[variable ? textBytes : (kind == INT ? 4 : 8) * rows];
            }

            void valid(int row) {
                validity[row >>> 3] |= (byte) (1 << (row & 7));
            }

            void putInt(int row, int value) {
                Platform.putInt(values, Platform.BYTE_ARRAY_OFFSET + 4L * row, value);
            }

            void putLong(int row, long value) {
                Platform.putLong(values, Platform.BYTE_ARRAY_OFFSET + 8L * row, value);
            }

            /** Row {@code row}'s bytes ({@code length} at {@code start} of {@code from}); null when length is -1. */
            void putBytes(int row, byte[] from, int start, int length) {
                if (length >= 0) {
                    valid(row);
                    System.arraycopy(from, start, values, end, length);
                    end += length;
                }
                Platform.putInt(offsets, Platform.BYTE_ARRAY_OFFSET + 4L * (row + 1), end);
            }

            void writeTo(FileChannel out) throws IOException {
                buffer(out, validity);
                if (offsets != null) {
                    buffer(out, offsets);
                }
                buffer(out, values);
            }

            private static void buffer(FileChannel out, byte[] bytes) throws IOException {
                ByteBuffer length = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder());
                length.putLong(bytes.length).flip();
                writeAll(out, length);
                writeAll(out, ByteBuffer.wrap(bytes));
                int pad = padded(bytes.length) - bytes.length;
                if (pad > 0) {
                    writeAll(out, ByteBuffer.wrap(new byte[pad]));
                }
            }
        }
    }

    static final int TEXT = 0;
    static final int BINARY = 1;
    static final int INT = 2;
    static final int LONG = 3;

    /** The shape of {@code schema}'s grouping columns: every column but the last, which must be bigint bytes. */
    private static Shape shapeOf(StructType schema) {
        int groupColumns = schema.fields().length - 1;
        return new Shape(groupColumns, kindsOf(schema, groupColumns));
    }

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
        byte[] bytes;
        int length;

        Scratch() {
            this(256);
        }

        Scratch(int capacity) {
            bytes = new byte[Math.max(16, capacity)];
        }

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

    /** How a task counts: the grouping columns' shape and its tables' bounds. */
    static final class Counting implements java.io.Serializable {
        final Shape shape;
        private final int maxGroups;
        private final int maxBytes;

        /** {@code maxGroups} and {@code maxBytes} as {@link Buckets} takes them; 0 for both: sized from the heap. */
        Counting(Shape shape, int maxGroups, int maxBytes) {
            this.shape = shape;
            this.maxGroups = maxGroups;
            this.maxBytes = maxBytes;
        }

        Buckets buckets() {
            if (maxGroups > 0 && maxBytes > 0) {
                return new Buckets(shape, maxGroups, maxBytes);
            }
            return new Buckets(shape, Integer.MAX_VALUE, taskBudget());
        }

        /** A task's memory for chunk and tables: an eighth of the heap shared by as many tasks as there
         * are cores (Spark's own memory is elsewhere in the heap), 64 MiB a task with 1 GiB and 2 cores,
         * at least 8 MiB. */
        private static int taskBudget() {
            long share = Runtime.getRuntime().maxMemory() / 8 / Runtime.getRuntime().availableProcessors();
            return (int) Math.max(8L << 20, Math.min(64L << 20, share));
        }
    }

    /** The task side of {@link #partial}: the split's rows counted, emitted as rows whenever the tables fill up and at the end. */
    static final class PerSplit implements FlatMapFunction<Iterator<InternalRow>, InternalRow> {
        private final Counting counting;

        PerSplit(Counting counting) {
            this.counting = counting;
        }

        @Override
        public Iterator<InternalRow> call(Iterator<InternalRow> input) {
            return new Drain(input, counting.buckets());
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
                buckets.countUntilFull(input);
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
        /**
         * A chunk's streams live as long as the task, and while they are young the collector copies them
         * at its pauses. With 4 MiB instead of half the task's budget (32 MiB with a 1 GiB heap) the
         * pipeline benchmark's scan tasks spent 18-114 ms each in collections instead of 50-190 ms, and
         * each task holds 28 MiB less; the wall time was the same within the noise (9.86 s against
         * 9.93 s median, 5 alternating runs). A bucket's 16 KiB and its table still fit the cache.
         */
        static final int CHUNK_AT_MOST = 4 << 20;
        private static final int ROW_HEADER = 4 + 4 + 8;
        private static final int NULL_BYTES = 0x80000000;
        final Shape shape;
        private final int maxGroups;
        private final int chunkBytes;
        private final int tableBytes;
        private final Scratch scratch = new Scratch();
        private final Scratch[] streams = new Scratch[COUNT];
        final Table[] tables = new Table[COUNT];

        /** At most {@code maxGroups} groups; {@code maxBytes} shared evenly by a chunk's streams and the
         * tables, the chunk taking at most {@link #CHUNK_AT_MOST}. */
        Buckets(Shape shape, int maxGroups, int maxBytes) {
            this.shape = shape;
            this.maxGroups = maxGroups;
            this.chunkBytes = Math.max(1, Math.min(CHUNK_AT_MOST, maxBytes / 2));
            this.tableBytes = Math.max(1, maxBytes / 2);
            for (int b = 0; b < COUNT; b++) {
                streams[b] = new Scratch(2 * chunkBytes / COUNT);
                tables[b] = new Table();
            }
        }

        /** Counts chunks of {@code input} (at least one row) until the tables are full or the input ends. */
        void countUntilFull(Iterator<InternalRow> input) {
            do {
                readChunk(input);
                countChunk();
            } while (!full() && input.hasNext());
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
                    table.add(Platform.getInt(stream, base + 4), stream, at + ROW_HEADER, length, 1L, counted,
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

        /** The tables as one block: for each bucket in turn, its arena's length (a long) and the arena. */
        byte[] block() {
            long size = 0;
            for (Table table : tables) {
                size += 8 + table.used();
            }
            if (size > Integer.MAX_VALUE - 16) {
                throw new IllegalStateException("kassign: a split's tables exceed one block; set smaller bounds");
            }
            byte[] block = new byte[(int) size];
            int at = 0;
            for (Table table : tables) {
                Platform.putLong(block, Platform.BYTE_ARRAY_OFFSET + at, table.used());
                at += 8;
                at = table.copyArena(block, at);
            }
            return block;
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

        /** Adds {@code records} rows (and their {@code bytes}, where {@code counted}) to the group encoded in
         * {@code length} bytes at {@code start} of {@code keys}: a split's rows one by one, or another
         * table's figures when the driver merges the splits. */
        void add(int hash, byte[] keys, int start, int length, long records, boolean counted, long bytes) {
            long figures = Platform.BYTE_ARRAY_OFFSET + find(hash, keys, start, length);
            Platform.putLong(arena, figures, Platform.getLong(arena, figures) + records);
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

        int used() {
            return used;
        }

        /** Copies the arena's groups to {@code into} at {@code at}; returns where they end. */
        int copyArena(byte[] into, int at) {
            System.arraycopy(arena, 0, into, at, used);
            return at + used;
        }

        /** Adds every group of another table's arena ({@code used} bytes at {@code start} of {@code from}). */
        void addArena(byte[] from, int start, int used) {
            long base = Platform.BYTE_ARRAY_OFFSET;
            for (int at = start; at < start + used; ) {
                long records = Platform.getLong(from, base + at);
                long bytes = Platform.getLong(from, base + at + 8);
                int length = Platform.getInt(from, base + at + 16);
                boolean counted = Platform.getInt(from, base + at + 20) != 0;
                int key = at + HEADER;
                add(hashOf(from, key, length), from, key, length, records, counted, bytes);
                at += padded(HEADER + length);
            }
        }

        /** Adds the text and binary lengths of the group at {@code at} to {@code text}, per column. */
        void measure(Shape shape, int at, long[] text) {
            long p = Platform.BYTE_ARRAY_OFFSET + at + HEADER;
            for (int i = 0; i < shape.columns; i++) {
                int kind = shape.kinds[i];
                if (kind == INT) {
                    p += 5;
                } else if (kind == LONG) {
                    p += 9;
                } else {
                    int length = Platform.getInt(arena, p);
                    p += 4;
                    if (length > 0) {
                        text[i] += length;
                        p += length;
                    }
                }
            }
        }

        /** Writes the group at {@code at} as row {@code row} of {@code columns} (grouping columns, records, bytes). */
        void fill(Shape shape, int at, ColumnFile.Column[] columns, int row) {
            long base = Platform.BYTE_ARRAY_OFFSET + at;
            long p = base + HEADER;
            for (int i = 0; i < shape.columns; i++) {
                ColumnFile.Column column = columns[i];
                if (shape.kinds[i] == INT) {
                    if (Platform.getByte(arena, p + 4) != 0) {
                        column.valid(row);
                        column.putInt(row, Platform.getInt(arena, p));
                    }
                    p += 5;
                } else if (shape.kinds[i] == LONG) {
                    if (Platform.getByte(arena, p + 8) != 0) {
                        column.valid(row);
                        column.putLong(row, Platform.getLong(arena, p));
                    }
                    p += 9;
                } else {
                    int length = Platform.getInt(arena, p);
                    p += 4;
                    column.putBytes(row, arena, (int) (p - Platform.BYTE_ARRAY_OFFSET), length);
                    p += Math.max(length, 0);
                }
            }
            ColumnFile.Column records = columns[shape.columns];
            records.valid(row);
            records.putLong(row, Platform.getLong(arena, base));
            if (Platform.getInt(arena, base + 20) != 0) {
                ColumnFile.Column bytes = columns[shape.columns + 1];
                bytes.valid(row);
                bytes.putLong(row, Platform.getLong(arena, base + 8));
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
