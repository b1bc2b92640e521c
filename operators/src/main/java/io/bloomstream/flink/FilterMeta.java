package io.bloomstream.flink;

import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.HashStrategy;
import io.bloomstream.filter.Hasher;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.annotation.Internal;

/**
 * The small per-key value beside a key's pages: the hasher, and for each retention generation slot
 * its time bucket and its cascade stages (each stage's shape and items). Stages keep the shape they
 * were created with, so a job restored with a changed config still reads old pages correctly; new
 * stages take the new config. Mutable; serialized by {@link
 * io.bloomstream.flink.typeutils.FilterMetaSerializer}.
 */
@Internal
public final class FilterMeta {

    /** Bucket value of an empty slot. */
    public static final long EMPTY = Long.MIN_VALUE;

    /** One cascade stage. */
    public static final class Stage {
        public final long bits;
        public final int hashes;
        public final int pageBits;
        public final long capacity;
        public long itemsAdded;
        private transient FilterSpec spec;

        public Stage(long bits, int hashes, int pageBits, long capacity, long itemsAdded) {
            this.bits = bits;
            this.hashes = hashes;
            this.pageBits = pageBits;
            this.capacity = capacity;
            this.itemsAdded = itemsAdded;
        }

        FilterSpec spec(Hasher hasher) {
            if (spec == null) {
                spec = FilterSpec.of(bits, hashes, pageBits, hasher);
            }
            return spec;
        }

        Stage copy() {
            return new Stage(bits, hashes, pageBits, capacity, itemsAdded);
        }
    }

    public final int strategyId;
    public final long seed;
    public final long[] buckets;
    public final List<List<Stage>> slots;

    public FilterMeta(int strategyId, long seed, long[] buckets, List<List<Stage>> slots) {
        if (buckets.length != slots.size()) {
            throw new IllegalArgumentException(
                    "buckets and slots differ: " + buckets.length + " vs " + slots.size());
        }
        this.strategyId = strategyId;
        this.seed = seed;
        this.buckets = buckets;
        this.slots = slots;
    }

    /** An empty meta with {@code generations} slots. */
    static FilterMeta empty(Hasher hasher, int generations) {
        long[] buckets = new long[generations];
        java.util.Arrays.fill(buckets, EMPTY);
        List<List<Stage>> slots = new ArrayList<>(generations);
        for (int i = 0; i < generations; i++) {
            slots.add(new ArrayList<>());
        }
        return new FilterMeta(hasher.strategy().id(), hasher.seed(), buckets, slots);
    }

    /** Checks that the state was written with this hasher. */
    void checkHasher(Hasher hasher) {
        if (strategyId != hasher.strategy().id() || seed != hasher.seed()) {
            throw new IllegalStateException(
                    "filter state was written with hash strategy "
                            + HashStrategy.fromId(strategyId)
                            + " and seed "
                            + Long.toHexString(seed)
                            + ", but the job is configured with "
                            + hasher
                            + ": restore with the original seed");
        }
    }

    public int generations() {
        return buckets.length;
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
        return new FilterMeta(strategyId, seed, buckets.clone(), copied);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof FilterMeta)) {
            return false;
        }
        FilterMeta m = (FilterMeta) o;
        if (strategyId != m.strategyId
                || seed != m.seed
                || !java.util.Arrays.equals(buckets, m.buckets)) {
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
                        || x.itemsAdded != y.itemsAdded) {
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
        StringBuilder sb = new StringBuilder("FilterMeta{");
        for (int i = 0; i < slots.size(); i++) {
            sb.append(i == 0 ? "" : ", ").append("slot").append(i).append("(bucket=");
            sb.append(buckets[i] == EMPTY ? "empty" : Long.toString(buckets[i]));
            for (Stage s : slots.get(i)) {
                sb.append(", [m=").append(s.bits).append(" k=").append(s.hashes);
                sb.append(" items=").append(s.itemsAdded).append('/').append(s.capacity);
                sb.append(']');
            }
            sb.append(')');
        }
        return sb.append('}').toString();
    }
}
