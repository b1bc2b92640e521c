package io.bloomstream.flink.state;

import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.HashStrategy;
import io.bloomstream.filter.Hasher;
import io.bloomstream.flink.internal.RefusedRestore;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.annotation.Internal;

/**
 * The small per-key value beside a key's pages: the hasher, the key's retention shape (time domain,
 * generation length and bucket phase), and for each generation slot its range of time buckets and
 * its cascade stages (each stage's shape, items, pages and, in count and overlap state, set bits).
 * Everything that decides how pages are read is recorded here, so a job restored with a changed
 * config still reads old pages correctly: stages keep the shape they were created with and new
 * stages take the new config; a key keeps its generation length until its state is freed. Mutable;
 * serialized by {@link io.bloomstream.flink.typeutils.FilterMetaSerializer}.
 */
@Internal
public final class FilterMeta {

    /** Bucket value of an empty slot. */
    public static final long EMPTY = Long.MIN_VALUE;

    /** {@link #domain}: no retention (one generation for ever). */
    public static final int DOMAIN_NONE = 0;

    /** {@link #domain}: event-time retention. */
    public static final int DOMAIN_EVENT_TIME = 1;

    /** {@link #domain}: processing-time retention. */
    public static final int DOMAIN_PROCESSING_TIME = 2;

    /** {@link #domain} and {@link #generationMillis} of state written before they were recorded. */
    public static final int UNRECORDED = -1;

    /**
     * {@link Stage#pages} of state written before page counts were recorded (metadata format 1).
     */
    public static final long UNKNOWN_PAGES = -1;

    /**
     * {@link Stage#setBits} of a stage whose set bits are not recorded: state written before layout
     * 3, and dedup state (only count and overlap keep them).
     */
    public static final long UNKNOWN_SET_BITS = -1;

    /** {@link #countedBy} of a key whose pages no running subtask has counted yet. */
    public static final long NOT_COUNTED = 0;

    /** One cascade stage. */
    public static final class Stage {
        public final long bits;
        public final int hashes;
        public final int pageBits;
        public final long capacity;
        public long itemsAdded;

        /** The stage's non-empty pages (entries in the pages state), or {@link #UNKNOWN_PAGES}. */
        public long pages;

        /**
         * The number of set bits over the stage's pages, kept as they change (count and overlap
         * state), or {@link #UNKNOWN_SET_BITS}.
         */
        public long setBits;

        private transient FilterSpec spec;

        /** A stage without pages, its set bits not recorded. */
        public Stage(long bits, int hashes, int pageBits, long capacity, long itemsAdded) {
            this(bits, hashes, pageBits, capacity, itemsAdded, 0);
        }

        /** A stage, its set bits not recorded. */
        public Stage(
                long bits, int hashes, int pageBits, long capacity, long itemsAdded, long pages) {
            this(bits, hashes, pageBits, capacity, itemsAdded, pages, UNKNOWN_SET_BITS);
        }

        public Stage(
                long bits,
                int hashes,
                int pageBits,
                long capacity,
                long itemsAdded,
                long pages,
                long setBits) {
            this.bits = bits;
            this.hashes = hashes;
            this.pageBits = pageBits;
            this.capacity = capacity;
            this.itemsAdded = itemsAdded;
            this.pages = pages;
            this.setBits = setBits;
        }

        /** Notes that a page of this stage was created (a no-op while the count is unknown). */
        public void pageCreated() {
            if (pages != UNKNOWN_PAGES) {
                pages++;
            }
        }

        /**
         * Notes that {@code n} bits of this stage were set (a no-op while the count is unknown).
         */
        public void bitsSet(int n) {
            if (setBits != UNKNOWN_SET_BITS) {
                setBits += n;
            }
        }

        public FilterSpec spec(Hasher hasher) {
            if (spec == null) {
                spec = FilterSpec.of(bits, hashes, pageBits, hasher);
            }
            return spec;
        }

        Stage copy() {
            return new Stage(bits, hashes, pageBits, capacity, itemsAdded, pages, setBits);
        }
    }

    public final int strategyId;
    public final long seed;

    /** Which clock the buckets count: one of the DOMAIN_ constants, or {@link #UNRECORDED}. */
    public int domain;

    /** The length of a time bucket in ms (0 without retention), or {@link #UNRECORDED}. */
    public long generationMillis;

    /** The key's bucket phase in [0, generationMillis): bucket b covers [bL + o, (b+1)L + o). */
    public long offset;

    /** Per slot: the first bucket it holds, or {@link #EMPTY}. */
    public long[] buckets;

    /** Per slot: the last bucket it holds (dedup; a slot holds a range of buckets). */
    public long[] lastBuckets;

    public final List<List<Stage>> slots;

    /**
     * The run of a dedup subtask (a random id drawn when the subtask opens) whose allocated-pages
     * gauge includes this key's pages, or {@link #NOT_COUNTED}. A key read with another value is
     * counted once and marked, so a restored key's pages are counted exactly once per run.
     */
    public long countedBy = NOT_COUNTED;

    public FilterMeta(int strategyId, long seed, long[] buckets, List<List<Stage>> slots) {
        this(strategyId, seed, UNRECORDED, UNRECORDED, 0, buckets, buckets.clone(), slots);
    }

    public FilterMeta(
            int strategyId,
            long seed,
            int domain,
            long generationMillis,
            long offset,
            long[] buckets,
            long[] lastBuckets,
            List<List<Stage>> slots) {
        if (buckets.length != slots.size() || lastBuckets.length != slots.size()) {
            throw new IllegalArgumentException(
                    "buckets and slots differ: "
                            + buckets.length
                            + ", "
                            + lastBuckets.length
                            + " vs "
                            + slots.size());
        }
        this.strategyId = strategyId;
        this.seed = seed;
        this.domain = domain;
        this.generationMillis = generationMillis;
        this.offset = offset;
        this.buckets = buckets;
        this.lastBuckets = lastBuckets;
        this.slots = slots;
    }

    /** An empty dedup meta without slots, for the given retention shape. */
    public static FilterMeta forDedup(
            Hasher hasher, int domain, long generationMillis, long offset) {
        return new FilterMeta(
                hasher.strategy().id(),
                hasher.seed(),
                domain,
                generationMillis,
                offset,
                new long[0],
                new long[0],
                new ArrayList<>());
    }

    /** Adds an empty slot and returns its index. */
    public int addSlot() {
        int n = buckets.length;
        buckets = java.util.Arrays.copyOf(buckets, n + 1);
        lastBuckets = java.util.Arrays.copyOf(lastBuckets, n + 1);
        buckets[n] = EMPTY;
        lastBuckets[n] = EMPTY;
        slots.add(new ArrayList<>());
        return n;
    }

    /** An empty meta with {@code generations} slots. */
    public static FilterMeta empty(Hasher hasher, int generations) {
        long[] buckets = new long[generations];
        java.util.Arrays.fill(buckets, EMPTY);
        List<List<Stage>> slots = new ArrayList<>(generations);
        for (int i = 0; i < generations; i++) {
            slots.add(new ArrayList<>());
        }
        return new FilterMeta(
                hasher.strategy().id(),
                hasher.seed(),
                DOMAIN_NONE,
                0,
                0,
                buckets,
                buckets.clone(),
                slots);
    }

    /**
     * Checks that the state was written with this hasher.
     *
     * @throws org.apache.flink.runtime.execution.SuppressRestartsException around an {@link
     *     IllegalStateException} naming both hashers, when it was not (a restore with another hash
     *     strategy or seed, which no restart can fix)
     */
    public void checkHasher(Hasher hasher) {
        if (strategyId != hasher.strategy().id() || seed != hasher.seed()) {
            throw RefusedRestore.of(
                    "filter state was written with hash strategy "
                            + HashStrategy.fromId(strategyId)
                            + " and seed "
                            + Long.toHexString(seed)
                            + ", but the job is configured with "
                            + hasher
                            + (strategyId != hasher.strategy().id()
                                    ? ": restore with hashStrategy("
                                            + HashStrategy.fromId(strategyId)
                                            + ") in the config (state of bloomstream 0.4 and"
                                            + " before was hashed with XXH3_128)"
                                    : ": restore with the original seed"));
        }
    }

    public int generations() {
        return buckets.length;
    }

    /** The key's pages, the sum of its stages' counts; {@link #UNKNOWN_PAGES} if one is unknown. */
    public long pages() {
        long n = 0;
        for (List<Stage> slot : slots) {
            for (Stage s : slot) {
                if (s.pages == UNKNOWN_PAGES) {
                    return UNKNOWN_PAGES;
                }
                n += s.pages;
            }
        }
        return n;
    }

    /** The pages of the slots in the bit set {@code slotBits}. */
    public long pagesOf(long slotBits) {
        long n = 0;
        for (int i = 0; i < slots.size(); i++) {
            if ((slotBits & (1L << i)) != 0) {
                for (Stage s : slots.get(i)) {
                    n += s.pages;
                }
            }
        }
        return n;
    }

    /**
     * The items added to the stages of the slots in the bit set {@code slotBits} ({@code -1L}:
     * all): in exact mode, the slots' exact entries.
     */
    public long itemsOf(long slotBits) {
        long n = 0;
        for (int i = 0; i < slots.size(); i++) {
            if ((slotBits & (1L << i)) != 0) {
                for (Stage s : slots.get(i)) {
                    n += s.itemsAdded;
                }
            }
        }
        return n;
    }

    /** A deep copy. */
    public FilterMeta copy() {
        List<List<Stage>> copied = new ArrayList<>(slots.size());
        for (List<Stage> slot : slots) {
            List<Stage> s = new ArrayList<>(slot.size());
            for (Stage st : slot) {
                s.add(st.copy());
            }
            copied.add(s);
        }
        FilterMeta m =
                new FilterMeta(
                        strategyId,
                        seed,
                        domain,
                        generationMillis,
                        offset,
                        buckets.clone(),
                        lastBuckets.clone(),
                        copied);
        m.countedBy = countedBy;
        return m;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof FilterMeta)) {
            return false;
        }
        FilterMeta m = (FilterMeta) o;
        if (strategyId != m.strategyId
                || seed != m.seed
                || domain != m.domain
                || generationMillis != m.generationMillis
                || offset != m.offset
                || countedBy != m.countedBy
                || !java.util.Arrays.equals(buckets, m.buckets)
                || !java.util.Arrays.equals(lastBuckets, m.lastBuckets)) {
            return false;
        }
        for (int i = 0; i < slots.size(); i++) {
            List<Stage> a = slots.get(i);
            List<Stage> b = m.slots.get(i);
            if (a.size() != b.size()) {
                return false;
            }
            for (int j = 0; j < a.size(); j++) {
                Stage x = a.get(j);
                Stage y = b.get(j);
                if (x.bits != y.bits
                        || x.hashes != y.hashes
                        || x.pageBits != y.pageBits
                        || x.capacity != y.capacity
                        || x.itemsAdded != y.itemsAdded
                        || x.pages != y.pages
                        || x.setBits != y.setBits) {
                    return false;
                }
            }
        }
        return true;
    }

    @Override
    public int hashCode() {
        return java.util.Arrays.hashCode(buckets) * 31 + Long.hashCode(seed);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("FilterMeta{domain=").append(domain);
        sb.append(", generationMillis=").append(generationMillis);
        sb.append(", offset=").append(offset);
        for (int i = 0; i < slots.size(); i++) {
            sb.append(", slot").append(i).append("(buckets=");
            sb.append(buckets[i] == EMPTY ? "empty" : buckets[i] + ".." + lastBuckets[i]);
            for (Stage s : slots.get(i)) {
                sb.append(", [m=").append(s.bits).append(" k=").append(s.hashes);
                sb.append(" items=").append(s.itemsAdded).append('/').append(s.capacity);
                sb.append(" pages=").append(s.pages);
                if (s.setBits != UNKNOWN_SET_BITS) {
                    sb.append(" setBits=").append(s.setBits);
                }
                sb.append(']');
            }
            sb.append(')');
        }
        return sb.append('}').toString();
    }
}
