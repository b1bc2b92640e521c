package io.bloomstream.flink.typeutils;

import io.bloomstream.flink.FilterMeta;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * Serializes {@link FilterMeta}. Layout (version 1): strategy id (1 byte), seed (8), generation
 * count (varint), then per generation its bucket (8) and stage count (varint), then per stage bits
 * (8), hashes (4), pageBits (4), capacity (8), itemsAdded (8).
 */
@Internal
public final class FilterMetaSerializer extends TypeSerializerSingleton<FilterMeta> {

    private static final long serialVersionUID = 1L;

    /** The shared instance. */
    public static final FilterMetaSerializer INSTANCE = new FilterMetaSerializer();

    private static final int MAX_GENERATIONS = 64;
    private static final int MAX_STAGES = 64;

    @Override
    public boolean isImmutableType() {
        return false;
    }

    @Override
    public FilterMeta createInstance() {
        return new FilterMeta(
                0, 0, new long[] {FilterMeta.EMPTY}, new ArrayList<>(List.of(new ArrayList<>())));
    }

    @Override
    public FilterMeta copy(FilterMeta from) {
        return from.copy();
    }

    @Override
    public FilterMeta copy(FilterMeta from, FilterMeta reuse) {
        return from.copy();
    }

    @Override
    public int getLength() {
        return -1;
    }

    @Override
    public void serialize(FilterMeta meta, DataOutputView out) throws IOException {
        out.writeByte(meta.strategyId);
        out.writeLong(meta.seed);
        PageSerializer.writeVarInt(meta.generations(), out);
        for (int g = 0; g < meta.generations(); g++) {
            out.writeLong(meta.buckets[g]);
            List<FilterMeta.Stage> stages = meta.slots.get(g);
            PageSerializer.writeVarInt(stages.size(), out);
            for (FilterMeta.Stage s : stages) {
                out.writeLong(s.bits);
                out.writeInt(s.hashes);
                out.writeInt(s.pageBits);
                out.writeLong(s.capacity);
                out.writeLong(s.itemsAdded);
            }
        }
    }

    @Override
    public FilterMeta deserialize(DataInputView in) throws IOException {
        int strategyId = in.readUnsignedByte();
        long seed = in.readLong();
        int generations = PageSerializer.readVarInt(in);
        if (generations < 1 || generations > MAX_GENERATIONS) {
            throw new IOException("corrupt filter metadata: " + generations + " generations");
        }
        long[] buckets = new long[generations];
        List<List<FilterMeta.Stage>> slots = new ArrayList<>(generations);
        for (int g = 0; g < generations; g++) {
            buckets[g] = in.readLong();
            int n = PageSerializer.readVarInt(in);
            if (n < 0 || n > MAX_STAGES) {
                throw new IOException("corrupt filter metadata: " + n + " stages");
            }
            List<FilterMeta.Stage> stages = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                stages.add(
                        new FilterMeta.Stage(
                                in.readLong(),
                                in.readInt(),
                                in.readInt(),
                                in.readLong(),
                                in.readLong()));
            }
            slots.add(stages);
        }
        return new FilterMeta(strategyId, seed, buckets, slots);
    }

    @Override
    public FilterMeta deserialize(FilterMeta reuse, DataInputView in) throws IOException {
        return deserialize(in);
    }

    @Override
    public void copy(DataInputView in, DataOutputView out) throws IOException {
        serialize(deserialize(in), out);
    }

    @Override
    public TypeSerializerSnapshot<FilterMeta> snapshotConfiguration() {
        return new Snapshot();
    }

    /** The snapshot; version 1 is the layout above. */
    public static final class Snapshot extends SimpleTypeSerializerSnapshot<FilterMeta> {
        public Snapshot() {
            super(() -> INSTANCE);
        }
    }

    private Object readResolve() {
        return INSTANCE;
    }
}
