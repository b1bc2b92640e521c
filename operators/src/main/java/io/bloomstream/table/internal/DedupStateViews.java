package io.bloomstream.table.internal;

import io.bloomstream.flink.state.FilterMeta;
import io.bloomstream.flink.typeutils.FilterMetaSerializer;
import java.io.IOException;
import java.util.Iterator;
import java.util.Map;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.table.api.dataview.MapView;
import org.apache.flink.types.Row;

/**
 * Views of {@code BLOOM_DEDUP}'s state entries as the {@link MapState} and {@link ValueState} that
 * the DataStream operator's state logic reads and writes, bound to the entries of each call.
 */
@Internal
public final class DedupStateViews {

    // Fields of the meta state row (see DedupTableFunction#META_TYPE).
    public static final int FILTER = 0;
    public static final int RETENTION_MS = 1;
    public static final int GENERATIONS = 2;

    private DedupStateViews() {}

    /**
     * The key's {@link FilterMeta} in the BYTES field of the meta state row, in the format of
     * {@link FilterMetaSerializer} (which starts with its layout version). Each write also records
     * the retention and generations of the config, so that a timer firing after a restore, before
     * any row reached the function, frees state under the config it was written with.
     */
    public static final class Meta implements ValueState<FilterMeta> {
        private final DataOutputSerializer out = new DataOutputSerializer(256);
        private final DataInputDeserializer in = new DataInputDeserializer();
        private Row row;
        private long retentionMillis;
        private int generations;

        public void bind(Row row, long retentionMillis, int generations) {
            this.row = row;
            this.retentionMillis = retentionMillis;
            this.generations = generations;
        }

        @Override
        public FilterMeta value() throws IOException {
            byte[] bytes = (byte[]) row.getField(FILTER);
            if (bytes == null) {
                return null;
            }
            in.setBuffer(bytes);
            return FilterMetaSerializer.INSTANCE.deserialize(in);
        }

        @Override
        public void update(FilterMeta meta) throws IOException {
            out.clear();
            FilterMetaSerializer.INSTANCE.serialize(meta, out);
            row.setField(FILTER, out.getCopyOfBuffer());
            row.setField(RETENTION_MS, retentionMillis);
            row.setField(GENERATIONS, generations);
        }

        @Override
        public void clear() {
            for (int i = 0; i < row.getArity(); i++) {
                row.setField(i, null);
            }
        }
    }

    /** The key's pages: page key ({@code StateLayout.pageKey}) to the page's words. */
    public static final class Pages implements MapState<Long, long[]> {
        private MapView<Long, long[]> view;

        public void bind(MapView<Long, long[]> view) {
            this.view = view;
        }

        @Override
        public long[] get(Long key) throws Exception {
            return view.get(key);
        }

        @Override
        public void put(Long key, long[] value) throws Exception {
            view.put(key, value);
        }

        @Override
        public void putAll(Map<Long, long[]> map) throws Exception {
            view.putAll(map);
        }

        @Override
        public void remove(Long key) throws Exception {
            view.remove(key);
        }

        @Override
        public boolean contains(Long key) throws Exception {
            return view.contains(key);
        }

        @Override
        public Iterable<Map.Entry<Long, long[]>> entries() throws Exception {
            return view.entries();
        }

        @Override
        public Iterable<Long> keys() throws Exception {
            return view.keys();
        }

        @Override
        public Iterable<long[]> values() throws Exception {
            return view.values();
        }

        @Override
        public Iterator<Map.Entry<Long, long[]>> iterator() throws Exception {
            return view.iterator();
        }

        @Override
        public boolean isEmpty() throws Exception {
            return view.isEmpty();
        }

        @Override
        public void clear() {
            view.clear();
        }
    }
}
