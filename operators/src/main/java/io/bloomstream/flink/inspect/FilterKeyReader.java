package io.bloomstream.flink.inspect;

import io.bloomstream.flink.state.FilterMeta;
import io.bloomstream.flink.state.StateLayout;
import io.bloomstream.flink.typeutils.FilterMetaSerializer;
import io.bloomstream.flink.typeutils.PageSerializer;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.state.api.functions.KeyedStateReaderFunction;
import org.apache.flink.util.Collector;

/**
 * Reads one key's filter metadata and pages (dedup's {@code bloom-meta} and {@code bloom-pages}, or
 * count's) into one row: the key as text and its figures, packed into a {@code long[]} (see {@link
 * #GENERATIONS} and {@link #STAGE_FIELDS}), so that the rows travel with Flink's own serializers.
 * The set bits are counted from the pages themselves.
 */
final class FilterKeyReader<K> extends KeyedStateReaderFunction<K, Tuple2<String, long[]>> {

    private static final long serialVersionUID = 1L;

    /** The row's type. */
    static final TypeInformation<Tuple2<String, long[]>> ROW =
            Types.TUPLE(Types.STRING, Types.PRIMITIVE_ARRAY(Types.LONG));

    /** Index of the key's generations (slots) in the row; its stages follow. */
    static final int GENERATIONS = 0;

    /**
     * Fields per stage, from index 1: slot, bits, hashes, page bits, capacity, items, pages, set
     * bits, bytes.
     */
    static final int STAGE_FIELDS = 9;

    static final int SLOT = 0;
    static final int BITS = 1;
    static final int HASHES = 2;
    static final int PAGE_BITS = 3;
    static final int CAPACITY = 4;
    static final int ITEMS = 5;
    static final int PAGES = 6;
    static final int SET_BITS = 7;
    static final int BYTES = 8;

    private final String metaName;
    private final String pagesName;
    private transient ValueState<FilterMeta> meta;
    private transient MapState<Long, long[]> pages;

    FilterKeyReader(String metaName, String pagesName) {
        this.metaName = metaName;
        this.pagesName = pagesName;
    }

    @Override
    public void open(OpenContext context) {
        meta =
                getRuntimeContext()
                        .getState(
                                new ValueStateDescriptor<>(
                                        metaName, FilterMetaSerializer.INSTANCE));
        pages =
                getRuntimeContext()
                        .getMapState(
                                new MapStateDescriptor<>(
                                        pagesName,
                                        LongSerializer.INSTANCE,
                                        PageSerializer.INSTANCE));
    }

    @Override
    public void readKey(K key, Context context, Collector<Tuple2<String, long[]>> out)
            throws Exception {
        FilterMeta m = meta.value();
        if (m == null) {
            return; // pages without metadata are never read by the operator either
        }
        int stages = 0;
        int[] first = new int[m.slots.size()];
        for (int slot = 0; slot < m.slots.size(); slot++) {
            first[slot] = stages;
            stages += m.slots.get(slot).size();
        }
        long[] row = new long[1 + stages * STAGE_FIELDS];
        row[GENERATIONS] = m.generations();
        for (int slot = 0; slot < m.slots.size(); slot++) {
            List<FilterMeta.Stage> slotStages = m.slots.get(slot);
            for (int i = 0; i < slotStages.size(); i++) {
                FilterMeta.Stage s = slotStages.get(i);
                int at = 1 + (first[slot] + i) * STAGE_FIELDS;
                row[at + SLOT] = slot;
                row[at + BITS] = s.bits;
                row[at + HASHES] = s.hashes;
                row[at + PAGE_BITS] = s.pageBits;
                row[at + CAPACITY] = s.capacity;
                row[at + ITEMS] = s.itemsAdded;
            }
        }
        for (Map.Entry<Long, long[]> e : pages.entries()) {
            long pageKey = e.getKey();
            int slot = StateLayout.slotOf(pageKey);
            int stage = StateLayout.stageOf(pageKey);
            if (slot >= m.slots.size() || stage >= m.slots.get(slot).size()) {
                continue; // a page of a slot or stage the metadata no longer holds: never read
            }
            int at = 1 + (first[slot] + stage) * STAGE_FIELDS;
            long[] words = e.getValue();
            long set = 0;
            for (long w : words) {
                set += Long.bitCount(w);
            }
            row[at + PAGES]++;
            row[at + SET_BITS] += set;
            row[at + BYTES] += 8L * words.length;
        }
        out.collect(Tuple2.of(String.valueOf(key), row));
    }
}
