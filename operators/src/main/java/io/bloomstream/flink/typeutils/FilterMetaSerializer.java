package io.bloomstream.flink.typeutils;

import io.bloomstream.flink.state.FilterMeta;
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
 * Serializes {@link FilterMeta} in the <em>metadata format</em> (its own versions, {@link
 * #VERSION_1} to {@link #CURRENT_VERSION}, apart from every other versioned artefact: the table in
 * docs/state.md). Every value starts with its version, so old state stays readable by the same
 * serializer (its snapshot is compatible as is); {@link #deserialize(DataInputView)} reads each
 * version in one switch:
 *
 * <ul>
 *   <li>Version 3 (bloomstream 0.4 on, written now): as version 2 with the version byte {@code 0x80
 *       | 3}, and each stage ends with its set bits (8, signed: -1 not recorded, as in dedup state;
 *       see {@link FilterMeta.Stage#setBits}).
 *   <li>Version 2 (bloomstream 0.2 and 0.3): the byte {@code 0x80 | 2}, strategy id (1 byte), seed
 *       (8), time domain (1, signed: -1 unrecorded, 0 none, 1 event time, 2 processing time),
 *       generation length in ms (8), bucket phase in ms (8), the run that counted the key's pages
 *       ({@link FilterMeta#countedBy}, 8), slot count (varint), then per slot its first and last
 *       bucket (8 + 8) and stage count (varint), then per stage bits (8), hashes (4), pageBits (4),
 *       capacity (8), itemsAdded (8), non-empty pages (8, signed: -1 unknown). Read with the set
 *       bits {@link FilterMeta#UNKNOWN_SET_BITS}: count state counts them by one scan on first use.
 *   <li>Version 1 (bloomstream 0.1): strategy id (1 byte, below 0x80), seed (8), generation count
 *       (varint), then per generation its bucket (8) and stage count (varint), then per stage bits,
 *       hashes, pageBits, capacity and itemsAdded as above. Read with the domain and generation
 *       length {@link FilterMeta#UNRECORDED}, the pages {@link FilterMeta#UNKNOWN_PAGES} and the
 *       key not counted: the operator fills them in on first use.
 * </ul>
 *
 * <p>Counts are bounded before anything is allocated, so a corrupt value fails with an {@link
 * IOException} naming the field.
 */
@Internal
public final class FilterMetaSerializer extends TypeSerializerSingleton<FilterMeta> {

    private static final long serialVersionUID = 1L;

    /** The shared instance. */
    public static final FilterMetaSerializer INSTANCE = new FilterMetaSerializer();

    /** The most slots a key's metadata may have. */
    public static final int MAX_SLOTS = 64;

    private static final int MAX_STAGES = 64;

    /** The metadata format of bloomstream 0.1: no version byte (the first byte is below 0x80). */
    static final int VERSION_1 = 1;

    /** The metadata format of bloomstream 0.2 and 0.3 (without set bits). */
    static final int VERSION_2 = 2;

    /** The metadata format of bloomstream 0.4 on: each stage's set bits. */
    static final int VERSION_3 = 3;

    /** The metadata format written now. */
    public static final int CURRENT_VERSION = VERSION_3;

    private static final int VERSION_FLAG = 0x80;

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
        out.writeByte(VERSION_FLAG | CURRENT_VERSION);
        out.writeByte(meta.strategyId);
        out.writeLong(meta.seed);
        out.writeByte(meta.domain);
        out.writeLong(meta.generationMillis);
        out.writeLong(meta.offset);
        out.writeLong(meta.countedBy);
        PageSerializer.writeVarInt(meta.generations(), out);
        for (int g = 0; g < meta.generations(); g++) {
            out.writeLong(meta.buckets[g]);
            out.writeLong(meta.lastBuckets[g]);
            writeStages(meta.slots.get(g), out);
        }
    }

    private static void writeStages(List<FilterMeta.Stage> stages, DataOutputView out)
            throws IOException {
        PageSerializer.writeVarInt(stages.size(), out);
        for (FilterMeta.Stage s : stages) {
            out.writeLong(s.bits);
            out.writeInt(s.hashes);
            out.writeInt(s.pageBits);
            out.writeLong(s.capacity);
            out.writeLong(s.itemsAdded);
            out.writeLong(s.pages);
            out.writeLong(s.setBits);
        }
    }

    @Override
    public FilterMeta deserialize(DataInputView in) throws IOException {
        int first = in.readUnsignedByte();
        // Version 1 has no version byte (its first byte is the strategy id, flag clear); a byte
        // with the flag set and version 1 (0x81) is corrupt, not version 1.
        int version = (first & VERSION_FLAG) == 0 ? VERSION_1 : first & ~VERSION_FLAG;
        if ((first & VERSION_FLAG) != 0 && version == VERSION_1) {
            throw new IOException(
                    "corrupt filter metadata: first byte 0x81 (the version flag with version 1,"
                            + " which is written without a version byte)");
        }
        switch (version) {
            case VERSION_1:
                return deserializeV1(first, in);
            case VERSION_2:
                return deserializeV2(in, false);
            case VERSION_3:
                return deserializeV2(in, true);
            default:
                throw new IOException(
                        "corrupt or newer filter metadata: metadata format version "
                                + version
                                + ", this bloomstream reads "
                                + VERSION_1
                                + " to "
                                + CURRENT_VERSION);
        }
    }

    /** Versions 2 and 3, after the version byte; version 3 adds each stage's set bits. */
    private static FilterMeta deserializeV2(DataInputView in, boolean withSetBits)
            throws IOException {
        int strategyId = in.readUnsignedByte();
        long seed = in.readLong();
        int domain = in.readByte();
        if (domain < FilterMeta.UNRECORDED || domain > FilterMeta.DOMAIN_PROCESSING_TIME) {
            throw new IOException("corrupt filter metadata: time domain " + domain);
        }
        long generationMillis = in.readLong();
        long offset = in.readLong();
        long countedBy = in.readLong();
        int n = slotCount(in, 0);
        long[] buckets = new long[n];
        long[] lastBuckets = new long[n];
        List<List<FilterMeta.Stage>> slots = new ArrayList<>(n);
        for (int g = 0; g < n; g++) {
            buckets[g] = in.readLong();
            lastBuckets[g] = in.readLong();
            slots.add(readStages(in, true, withSetBits));
        }
        FilterMeta meta =
                new FilterMeta(
                        strategyId,
                        seed,
                        domain,
                        generationMillis,
                        offset,
                        buckets,
                        lastBuckets,
                        slots);
        meta.countedBy = countedBy;
        return meta;
    }

    private static FilterMeta deserializeV1(int strategyId, DataInputView in) throws IOException {
        long seed = in.readLong();
        int n = slotCount(in, 1);
        long[] buckets = new long[n];
        List<List<FilterMeta.Stage>> slots = new ArrayList<>(n);
        for (int g = 0; g < n; g++) {
            buckets[g] = in.readLong();
            slots.add(readStages(in, false, false));
        }
        return new FilterMeta(strategyId, seed, buckets, slots);
    }

    private static int slotCount(DataInputView in, int min) throws IOException {
        int n = PageSerializer.readVarInt(in);
        if (n < min || n > MAX_SLOTS) {
            throw new IOException(
                    "corrupt filter metadata: slot count " + n + " not in [" + min + ", 64]");
        }
        return n;
    }

    private static List<FilterMeta.Stage> readStages(
            DataInputView in, boolean withPages, boolean withSetBits) throws IOException {
        int n = PageSerializer.readVarInt(in);
        if (n < 0 || n > MAX_STAGES) {
            throw new IOException("corrupt filter metadata: stage count " + n);
        }
        List<FilterMeta.Stage> stages = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            long bits = in.readLong();
            int hashes = in.readInt();
            int pageBits = in.readInt();
            long capacity = in.readLong();
            long items = in.readLong();
            long pages = withPages ? in.readLong() : FilterMeta.UNKNOWN_PAGES;
            if (pages < FilterMeta.UNKNOWN_PAGES) {
                throw new IOException("corrupt filter metadata: page count " + pages);
            }
            long setBits = withSetBits ? in.readLong() : FilterMeta.UNKNOWN_SET_BITS;
            if (setBits < FilterMeta.UNKNOWN_SET_BITS || setBits > bits) {
                throw new IOException(
                        "corrupt filter metadata: set bits " + setBits + " of a stage of " + bits);
            }
            stages.add(
                    new FilterMeta.Stage(bits, hashes, pageBits, capacity, items, pages, setBits));
        }
        return stages;
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

    /**
     * The snapshot. Its own version stays 1: the value layout carries its version (see the class
     * comment), so every layout is read by this serializer and no migration is needed.
     */
    public static final class Snapshot extends SimpleTypeSerializerSnapshot<FilterMeta> {
        public Snapshot() {
            super(() -> INSTANCE);
        }
    }

    private Object readResolve() {
        return INSTANCE;
    }
}
