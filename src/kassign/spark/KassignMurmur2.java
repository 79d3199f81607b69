package kassign.spark;

import org.apache.spark.sql.api.java.UDF1;

/**
 * Kafka's murmur2 (32-bit MurmurHash2, seed 0x9747b28c) of a key's bytes, as a Spark SQL UDF.
 *
 * kassign compiles this file with javac at first use so that Spark can hash keys without
 * shipping rows to Python. The Python side casts string keys to binary (their UTF-8 bytes)
 * before calling, so the input here is always a byte array; null stays null.
 */
public final class KassignMurmur2 implements UDF1<byte[], Integer> {
    private static final int SEED = 0x9747b28c;
    private static final int MIX = 0x5bd1e995;

    @Override
    public Integer call(byte[] key) {
        return key == null ? null : hash(key);
    }

    public static int hash(byte[] key) {
        final int length = key.length;
        int h = SEED ^ length;
        final int whole = length & ~3;
        for (int i = 0; i < whole; i += 4) {
            int k = (key[i] & 0xff) | ((key[i + 1] & 0xff) << 8) | ((key[i + 2] & 0xff) << 16) | ((key[i + 3] & 0xff) << 24);
            k *= MIX;
            k ^= k >>> 24;
            k *= MIX;
            h = h * MIX ^ k;
        }
        switch (length & 3) {
            case 3:
                h ^= (key[whole + 2] & 0xff) << 16;
                // fall through: the tail bytes are folded in from the highest down
            case 2:
                h ^= (key[whole + 1] & 0xff) << 8;
                // fall through
            case 1:
                h ^= key[whole] & 0xff;
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
}
