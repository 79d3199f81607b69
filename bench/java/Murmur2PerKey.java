import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Arrays;

import kassign.spark.KassignMurmur2;

/**
 * Java's side of bench/bench_partitioner.py: the producer's per-key work (murmur2 of one key's
 * bytes, sign bit cleared, modulo the partition count), one key at a time on one thread, over
 * the same keys the Python side hashes.
 *
 * The hash is kassign's own Java murmur2 (KassignMurmur2.hash, the class compiled for the Spark
 * column), the same algorithm as Kafka's Utils.murmur2 and checked against the same vectors.
 *
 * Arguments: a file of key bytes, a file of little-endian int32 offsets (keys + 1 of them), the
 * partition count. Keys are held as one byte[] each, as a producer holds a serialised key. It
 * warms up, prints "ready", then for every line "run" on stdin hashes all keys once and prints
 * the nanoseconds that took; the Python side alternates its own runs with these.
 */
public final class Murmur2PerKey {
    private Murmur2PerKey() {
    }

    public static void main(String[] args) throws IOException {
        byte[] data = Files.readAllBytes(Paths.get(args[0]));
        ByteBuffer raw = ByteBuffer.wrap(Files.readAllBytes(Paths.get(args[1]))).order(ByteOrder.LITTLE_ENDIAN);
        int partitions = Integer.parseInt(args[2]);
        int count = raw.remaining() / 4 - 1;
        byte[][] keys = new byte[count][];
        int start = raw.getInt();
        for (int i = 0; i < count; i++) {
            int end = raw.getInt();
            keys[i] = Arrays.copyOfRange(data, start, end);
            start = end;
        }
        int[] out = new int[count];
        for (int round = 0; round < 20; round++) {  // let the JIT compile the loop at its top tier
            hashAll(keys, partitions, out);
        }
        System.out.println("ready " + checksum(out));
        BufferedReader commands = new BufferedReader(new InputStreamReader(System.in));
        for (String line = commands.readLine(); line != null && line.equals("run"); line = commands.readLine()) {
            long begin = System.nanoTime();
            hashAll(keys, partitions, out);
            long took = System.nanoTime() - begin;
            System.out.println(took + " " + checksum(out));
        }
    }

    private static void hashAll(byte[][] keys, int partitions, int[] out) {
        for (int i = 0; i < keys.length; i++) {
            out[i] = (KassignMurmur2.hash(keys[i]) & 0x7fffffff) % partitions;
        }
    }

    /** A sum of the partitions, so the Python side can check that both hashed the same keys alike. */
    private static long checksum(int[] partitions) {
        long sum = 0;
        for (int i = 0; i < partitions.length; i++) {
            sum = sum * 31 + partitions[i];
        }
        return sum;
    }
}
