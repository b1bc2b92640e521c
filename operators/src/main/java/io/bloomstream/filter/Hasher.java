package io.bloomstream.filter;

import com.dynatrace.hash4j.hashing.HashValue128;
import com.dynatrace.hash4j.hashing.Hasher128;
import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * A seeded (or keyed) hash of items: a {@link HashStrategy} together with its seed or key.
 * Immutable and thread-safe. Two filters can only be merged or compared when their hashers are
 * {@linkplain #equals equal}.
 *
 * <p>The 128-bit strategies hash strings as their UTF-8 bytes (a string with a lone surrogate as
 * its generalized UTF-8, see {@link Wtf8}, so that distinct strings never share their bytes) and
 * longs as their 8 little-endian bytes. {@link HashStrategy#XXH3_64} ({@link #xxh3_64}) gives one
 * 64-bit hash per item through the allocation-free {@code hash64} methods; it hashes strings as
 * their UTF-16LE code units.
 */
public final class Hasher {

    /**
     * The seed of {@link #defaultHasher()}: a fixed value, so filters can be merged and restored.
     */
    public static final long DEFAULT_SEED = 0x626c6f6f6d737472L; // "bloomstr"

    private static final byte[] KEY_CHECK_INPUT =
            "bloomstream key check".getBytes(StandardCharsets.US_ASCII);

    private static final Hasher DEFAULT = xxh3(DEFAULT_SEED);

    private final HashStrategy strategy;
    private final long seed;
    private final long k0;
    private final long k1;
    private final Hasher128 xxh3;
    private final Hasher64 xxh3x64;

    private Hasher(HashStrategy strategy, long seed, long k0, long k1) {
        this.strategy = strategy;
        this.seed = seed;
        this.k0 = k0;
        this.k1 = k1;
        this.xxh3 = strategy == HashStrategy.XXH3_128 ? Hashing.xxh3_128(seed) : null;
        this.xxh3x64 = strategy == HashStrategy.XXH3_64 ? Hashing.xxh3_64(seed) : null;
    }

    /** XXH3-128 with {@link #DEFAULT_SEED}. */
    public static Hasher defaultHasher() {
        return DEFAULT;
    }

    /**
     * XXH3-128 with the given seed. Creating one derives XXH3's secret from the seed, so keep and
     * reuse the instance.
     */
    public static Hasher xxh3(long seed) {
        if (seed == DEFAULT_SEED && DEFAULT != null) {
            return DEFAULT;
        }
        return new Hasher(HashStrategy.XXH3_128, seed, 0, 0);
    }

    /**
     * XXH3-64 with the given seed: one 64-bit hash per item, computed without allocation by the
     * {@code hash64} methods (see {@link HashStrategy#XXH3_64}). Keep and reuse the instance.
     */
    public static Hasher xxh3_64(long seed) {
        return new Hasher(HashStrategy.XXH3_64, seed, 0, 0);
    }

    /**
     * SipHash-2-4 (128-bit output) under the secret key (k0, k1): the first and second 8 bytes of a
     * 16-byte key, read little-endian. Keep the key secret; see {@link HashStrategy#SIPHASH_2_4}
     * for when to use it.
     */
    public static Hasher sipHash24(long k0, long k1) {
        long check = SipHash24.hash128(k0, k1, KEY_CHECK_INPUT, 0, KEY_CHECK_INPUT.length).h1();
        return new Hasher(HashStrategy.SIPHASH_2_4, check, k0, k1);
    }

    /**
     * The hasher of an unkeyed strategy with {@code seed}: {@link #xxh3_64} or {@link #xxh3}. Used
     * for the strategy and seed a filter file or state records; keyed strategies cannot be created
     * this way, since neither carries their key.
     *
     * @throws IllegalArgumentException if the strategy is unknown or keyed
     */
    public static Hasher forUnkeyed(HashStrategy strategy, long seed) {
        if (strategy.isKeyed()) {
            throw new IllegalArgumentException(
                    "strategy " + strategy + " is keyed: supply the hasher with its key");
        }
        return strategy == HashStrategy.XXH3_64 ? xxh3_64(seed) : xxh3(seed);
    }

    /** The strategy. */
    public HashStrategy strategy() {
        return strategy;
    }

    /**
     * The 64-bit value that the binary format stores in its seed field: the seed for unkeyed
     * strategies, and for keyed ones a key check value (a hash of a fixed input under the key),
     * which identifies the key without revealing it.
     */
    public long seed() {
        return seed;
    }

    /** Whether this hasher gives one 64-bit hash per item ({@link HashStrategy#XXH3_64}). */
    public boolean is64Bit() {
        return xxh3x64 != null;
    }

    /**
     * The 64-bit hash of {@code value}'s 8 little-endian bytes, without allocation.
     *
     * @throws IllegalStateException unless {@link #is64Bit()}
     */
    public long hash64(long value) {
        return require64().hashLongToLong(value);
    }

    /**
     * The 64-bit hash of {@code s}'s UTF-16LE code units, without allocation (injective on Java
     * strings, lone surrogates included).
     *
     * @throws IllegalStateException unless {@link #is64Bit()}
     */
    public long hash64(CharSequence s) {
        return require64().hashCharsToLong(Objects.requireNonNull(s, "s"));
    }

    /**
     * The 64-bit hash of {@code data[off, off+len)}.
     *
     * @throws IllegalStateException unless {@link #is64Bit()}
     */
    public long hash64(byte[] data, int off, int len) {
        Objects.checkFromIndexSize(off, len, data.length);
        return require64().hashBytesToLong(data, off, len);
    }

    private Hasher64 require64() {
        if (xxh3x64 == null) {
            throw new IllegalStateException(
                    strategy + " gives 128-bit hashes: use hash(...), or Hasher.xxh3_64(seed)");
        }
        return xxh3x64;
    }

    /**
     * Hashes {@code data[off, off+len)}. Under {@link HashStrategy#XXH3_64} both halves of the
     * result are the 64-bit hash (filters of that strategy read {@code h1} only).
     */
    public Hash128 hash(byte[] data, int off, int len) {
        Objects.checkFromIndexSize(off, len, data.length);
        if (xxh3 != null) {
            return of(xxh3.hashBytesTo128Bits(data, off, len));
        }
        if (xxh3x64 != null) {
            return of64(xxh3x64.hashBytesToLong(data, off, len));
        }
        return SipHash24.hash128(k0, k1, data, off, len);
    }

    /** Hashes all of {@code data}. */
    public Hash128 hash(byte[] data) {
        return hash(data, 0, data.length);
    }

    /**
     * Hashes the UTF-8 bytes of {@code s} (under {@link HashStrategy#XXH3_64} its UTF-16LE code
     * units, as {@link #hash64(CharSequence)}); a lone surrogate is encoded as its own 3-byte
     * sequence ({@link Wtf8#encode}), not as {@code '?'}, so {@code "a\uD800"} and {@code "a?"}
     * differ.
     */
    public Hash128 hash(String s) {
        if (xxh3x64 != null) {
            return of64(xxh3x64.hashCharsToLong(s));
        }
        return hash(Wtf8.encode(s));
    }

    /** Hashes the 8 little-endian bytes of {@code value}. */
    public Hash128 hash(long value) {
        if (xxh3 != null) {
            byte[] b = new byte[Long.BYTES];
            LittleEndian.putLong(b, 0, value);
            return of(xxh3.hashBytesTo128Bits(b, 0, Long.BYTES));
        }
        if (xxh3x64 != null) {
            return of64(xxh3x64.hashLongToLong(value));
        }
        return SipHash24.hash128(k0, k1, value);
    }

    private static Hash128 of64(long h) {
        return new Hash128(h, h);
    }

    private static Hash128 of(HashValue128 v) {
        return new Hash128(v.getMostSignificantBits(), v.getLeastSignificantBits());
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Hasher)) {
            return false;
        }
        Hasher other = (Hasher) o;
        return strategy == other.strategy && seed == other.seed && k0 == other.k0 && k1 == other.k1;
    }

    @Override
    public int hashCode() {
        return Objects.hash(strategy, seed);
    }

    /** Names the strategy and seed (never a secret key). */
    @Override
    public String toString() {
        return strategy.isKeyed()
                ? strategy + "(keyCheck=" + Long.toHexString(seed) + ")"
                : strategy + "(seed=" + Long.toHexString(seed) + ")";
    }
}
