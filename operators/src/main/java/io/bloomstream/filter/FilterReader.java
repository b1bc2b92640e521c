package io.bloomstream.filter;

import java.util.List;
import java.util.Objects;

/**
 * A read-only view of a filter for one thread. Filters are not thread-safe, as their lookups use a
 * scratch array of their own; a reader has its own, so any number of threads can each query one
 * filter through their own reader, as long as no thread adds to it (a filter decoded once and never
 * changed, shared by the tasks of a process).
 */
public final class FilterReader {

    private final MembershipFilter filter;
    private final long[] scratch;

    private FilterReader(MembershipFilter filter, int maxHashes) {
        this.filter = filter;
        this.scratch = new long[maxHashes];
    }

    /**
     * A reader of {@code filter}.
     *
     * @throws IllegalArgumentException for a filter type without a concurrent read path
     */
    public static FilterReader of(MembershipFilter filter) {
        Objects.requireNonNull(filter, "filter");
        if (filter instanceof BloomFilter b) {
            return new FilterReader(filter, b.spec().hashes());
        }
        if (filter instanceof CountingBloomFilter c) {
            return new FilterReader(filter, c.spec().hashes());
        }
        if (filter instanceof ScalableBloomFilter s) {
            int k = 1;
            for (BloomFilter stage : s.stages()) {
                k = Math.max(k, stage.spec().hashes());
            }
            return new FilterReader(filter, k);
        }
        throw new IllegalArgumentException(
                "no concurrent read path for " + filter.getClass().getName());
    }

    /** The filter read. */
    public MembershipFilter filter() {
        return filter;
    }

    /** Whether the string (as UTF-8) might have been added; see {@link MembershipFilter}. */
    public boolean mightContain(String item) {
        Hash128 h = filter.hasher().hash(Objects.requireNonNull(item, "item"));
        return mightContain(h.h1(), h.h2());
    }

    /** Whether the item with this hash might have been added. */
    public boolean mightContain(long h1, long h2) {
        if (filter instanceof BloomFilter b) {
            return b.mightContain(h1, h2, scratch);
        }
        if (filter instanceof CountingBloomFilter c) {
            return c.mightContain(h1, h2, scratch);
        }
        List<BloomFilter> stages = ((ScalableBloomFilter) filter).stages();
        for (int i = stages.size() - 1; i >= 0; i--) {
            if (stages.get(i).mightContain(h1, h2, scratch)) {
                return true;
            }
        }
        return false;
    }
}
