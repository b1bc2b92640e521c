package io.bloomstream.flink.count;

import io.bloomstream.filter.Estimate;
import io.bloomstream.filter.Hasher;
import io.bloomstream.filter.Pages;
import io.bloomstream.flink.state.FilterMeta;
import io.bloomstream.flink.state.StateLayout;
import io.bloomstream.flink.typeutils.FilterMetaSerializer;
import io.bloomstream.flink.typeutils.PageSerializer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.runtime.state.KeyedStateBackend;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness;

/**
 * Reads a key's count or overlap state directly from a harness's keyed backend (heap or RocksDB)
 * and counts set bits the way estimates were computed before the counts were kept: by a full scan
 * of the key's pages. The reference for the incremental counts.
 */
public final class CountStateScan {

    private final KeyedStateBackend<String> backend;
    private final String metaName;
    private final String pagesName;

    private CountStateScan(KeyedStateBackend<String> backend, String metaName, String pagesName) {
        this.backend = backend;
        this.metaName = metaName;
        this.pagesName = pagesName;
    }

    /** The count state of {@link CountFunction} in {@code h}. */
    public static CountStateScan count(AbstractStreamOperatorTestHarness<?> h) {
        return new CountStateScan(
                backendOf(h), CountFunction.META_STATE, CountFunction.PAGES_STATE);
    }

    /** Side {@code side} ("a" or "b") of the overlap state in {@code h}. */
    public static CountStateScan overlap(AbstractStreamOperatorTestHarness<?> h, String side) {
        return new CountStateScan(
                backendOf(h), "bloom-overlap-meta-" + side, "bloom-overlap-pages-" + side);
    }

    @SuppressWarnings("unchecked")
    private static KeyedStateBackend<String> backendOf(AbstractStreamOperatorTestHarness<?> h) {
        return (KeyedStateBackend<String>)
                (KeyedStateBackend<?>) h.getOperator().getKeyedStateBackend();
    }

    /** The key's metadata, or null. */
    public FilterMeta meta(String key) throws Exception {
        backend.setCurrentKey(key);
        ValueState<FilterMeta> meta =
                backend.getPartitionedState(
                        VoidNamespace.INSTANCE,
                        VoidNamespaceSerializer.INSTANCE,
                        new ValueStateDescriptor<>(metaName, FilterMetaSerializer.INSTANCE));
        return meta.value();
    }

    /** The key's pages by page key (copies). */
    public Map<Long, long[]> pages(String key) throws Exception {
        backend.setCurrentKey(key);
        MapState<Long, long[]> pages =
                backend.getPartitionedState(
                        VoidNamespace.INSTANCE,
                        VoidNamespaceSerializer.INSTANCE,
                        new MapStateDescriptor<>(
                                pagesName, LongSerializer.INSTANCE, PageSerializer.INSTANCE));
        Map<Long, long[]> copy = new HashMap<>();
        for (Map.Entry<Long, long[]> e : pages.entries()) {
            copy.put(e.getKey(), e.getValue().clone());
        }
        return copy;
    }

    /** Per stage of {@code slot}, the set bits counted by a scan of all of the key's pages. */
    public static long[] scan(Map<Long, long[]> pages, int slot, int stages) {
        long[] bits = new long[stages];
        for (Map.Entry<Long, long[]> e : pages.entrySet()) {
            if (StateLayout.slotOf(e.getKey()) == slot) {
                bits[StateLayout.stageOf(e.getKey())] += Pages.bitCount(e.getValue());
            }
        }
        return bits;
    }

    /** The estimate of a slot from scanned set-bit counts, as emissions computed it by a scan. */
    public static Estimate estimate(FilterMeta meta, int slot, long[] setBits, Hasher hasher) {
        List<Estimate> parts = new ArrayList<>();
        List<FilterMeta.Stage> stages = meta.slots.get(slot);
        for (int i = 0; i < stages.size(); i++) {
            parts.add(Estimate.of(setBits[i], stages.get(i).spec(hasher)));
        }
        return Estimate.sum(parts);
    }

    /** The estimate of the OR of two sides' filters of one shape (slot 0), by a scan. */
    public static Estimate unionEstimate(
            FilterMeta meta, Map<Long, long[]> a, Map<Long, long[]> b, Hasher hasher) {
        Map<Long, long[]> union = new HashMap<>();
        for (Map<Long, long[]> side : List.of(a, b)) {
            for (Map.Entry<Long, long[]> e : side.entrySet()) {
                long[] words =
                        union.computeIfAbsent(e.getKey(), k -> new long[e.getValue().length]);
                for (int w = 0; w < words.length; w++) {
                    words[w] |= e.getValue()[w];
                }
            }
        }
        return estimate(meta, 0, scan(union, 0, meta.slots.get(0).size()), hasher);
    }
}
