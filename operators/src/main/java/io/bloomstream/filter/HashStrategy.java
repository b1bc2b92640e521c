package io.bloomstream.filter;

/**
 * How items are hashed. Each strategy has a stable numeric id that is written into the binary
 * format; ids are never reused or renumbered (a test fails if one changes).
 *
 * <p>Longs are always hashed as their 8 little-endian bytes. Under {@link #XXH3_128} and {@link
 * #SIPHASH_2_4} strings are hashed as their UTF-8 bytes, so {@code add("abc")} and {@code
 * add("abc".getBytes(UTF_8))} set the same bits. (A string with a lone surrogate, which is not
 * valid UTF-16, is hashed as its {@link Wtf8} bytes, never as {@code getBytes(UTF_8)}'s lossy
 * {@code '?'}.) Under {@link #XXH3_64} strings are hashed as their UTF-16LE code units instead (see
 * there).
 */
public enum HashStrategy {
    /**
     * XXH3-128 (xxHash 0.8) with a 64-bit seed, computed by hash4j. Fast, well distributed, not
     * resistant to adversaries: anyone who knows the seed can craft ids that collide.
     */
    XXH3_128(1, false),

    /**
     * SipHash-2-4 with 128-bit output (Aumasson and Bernstein 2012) under a secret 128-bit key. Use
     * it when ids come from a party that could choose them to collide on purpose (for example
     * user-supplied ids in a public API: a flood of crafted ids that map to the same bits drives
     * the false-positive rate up, and dedup then drops genuine events). It costs about 3x the time
     * of XXH3 per short id. The key itself is never written to the binary format, only a key check
     * value derived from it.
     */
    SIPHASH_2_4(2, true),

    /**
     * XXH3-64 (xxHash 0.8) with a 64-bit seed, computed by hash4j without allocating: one 64-bit
     * hash per item, from which {@link FilterSpec} derives the page and, by re-mixing, the k
     * positions (see {@link FilterSpec#positions64}). Not resistant to adversaries.
     *
     * <p>Strings are hashed as their UTF-16 code units in little-endian order (hash4j's {@code
     * hashCharsToLong}, with no intermediate array), which is injective on all Java strings, lone
     * surrogates included; so {@code add("abc")} sets the bits of {@code
     * add("abc".getBytes(UTF_16LE))}, not of the UTF-8 bytes. Longs are hashed as their 8
     * little-endian bytes, byte arrays as they are.
     */
    XXH3_64(3, false);

    private final int id;
    private final boolean keyed;

    HashStrategy(int id, boolean keyed) {
        this.id = id;
        this.keyed = keyed;
    }

    /** The stable id written into the binary format. */
    public int id() {
        return id;
    }

    /** Whether the strategy needs a secret key that the binary format does not carry. */
    public boolean isKeyed() {
        return keyed;
    }

    /**
     * Looks a strategy up by its id.
     *
     * @throws IllegalArgumentException if no strategy has that id
     */
    public static HashStrategy fromId(int id) {
        for (HashStrategy s : values()) {
            if (s.id == id) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown hash strategy id: " + id);
    }
}
