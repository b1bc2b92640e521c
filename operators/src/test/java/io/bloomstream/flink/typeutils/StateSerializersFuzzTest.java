package io.bloomstream.flink.typeutils;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.bloomstream.flink.state.FilterMeta;
import io.bloomstream.testing.FuzzBudget;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * Fuzz tests of the state serializers' reads (issue 20, item 7): {@link PageSerializer} and {@link
 * FilterMetaSerializer} read any bytes as a value, or refuse them with an {@link IOException}
 * (their documented exception), within the budget; what they read writes back to the same value;
 * and their snapshots read any bytes or refuse them the same way.
 *
 * <p>The default test run replays the committed corpus in {@code StateSerializersFuzzTestInputs/};
 * the {@code fuzz} profile fuzzes (CONTRIBUTING.md, "Fuzzing the decoders").
 */
class StateSerializersFuzzTest {

    /** How long each target fuzzes under the {@code fuzz} profile. */
    static final String FUZZ_DURATION = FuzzBudget.DURATION;

    /** A value is read once; copy() reads and writes it. */
    private static final FuzzBudget READ = new FuzzBudget(16, 32 * 1024);

    /**
     * Flink's SimpleTypeSerializerSnapshot reads an old snapshot's class name with readUTF, which
     * allocates for the length its 2-byte field declares before it reads the bytes: a byte array
     * and a char array of up to 65,535 each, 192 KiB at most (found by fuzzing: 46 KB for a 4-byte
     * input; then, by -Pexplore, 200,136 bytes for {@code 02 ff ff ff ff}). Flink's code, bounded:
     * that much more, and the usual 32 KiB.
     */
    private static final FuzzBudget SNAPSHOT = new FuzzBudget(16, 3 * 65_535 + 32 * 1024);

    static {
        // Load and link what the reads meet, so that no input pays for it.
        for (byte[] seed : new byte[][] {{}, {1, 0, 0, 0, 0, 0, 0, 0, 0}, {(byte) 0x83, 1}}) {
            pageValuesOf(seed);
            filterMetaValuesOf(seed);
            snapshotsOf(seed);
        }
    }

    private static DataInputDeserializer in(byte[] bytes) {
        return new DataInputDeserializer(bytes);
    }

    @FuzzTest(maxDuration = FUZZ_DURATION)
    void pageValues(byte[] data) {
        pageValuesOf(data);
    }

    private static void pageValuesOf(byte[] data) {
        long[] page =
                READ.run(
                        "PageSerializer.deserialize",
                        data,
                        IOException.class,
                        () -> PageSerializer.INSTANCE.deserialize(in(data)));
        READ.run(
                "PageSerializer.copy",
                data,
                IOException.class,
                () -> {
                    PageSerializer.INSTANCE.copy(in(data), new DataOutputSerializer(64));
                    return null;
                });
        if (page != null) {
            try {
                assertThat(
                                PageSerializer.INSTANCE.deserialize(
                                        in(write(PageSerializer.INSTANCE, page))))
                        .isEqualTo(page);
            } catch (IOException e) {
                throw new AssertionError("a page written by the serializer does not read", e);
            }
        }
    }

    @FuzzTest(maxDuration = FUZZ_DURATION)
    void filterMetaValues(byte[] data) {
        filterMetaValuesOf(data);
    }

    private static void filterMetaValuesOf(byte[] data) {
        FilterMeta meta =
                READ.run(
                        "FilterMetaSerializer.deserialize",
                        data,
                        IOException.class,
                        () -> FilterMetaSerializer.INSTANCE.deserialize(in(data)));
        READ.run(
                "FilterMetaSerializer.copy",
                data,
                IOException.class,
                () -> {
                    FilterMetaSerializer.INSTANCE.copy(in(data), new DataOutputSerializer(64));
                    return null;
                });
        if (meta != null) {
            // What was read writes back (in the current layout) and reads as itself.
            byte[] written = write(FilterMetaSerializer.INSTANCE, meta);
            FilterMeta again = readMeta(written);
            assertThat(write(FilterMetaSerializer.INSTANCE, again)).isEqualTo(written);
            assertThat(write(FilterMetaSerializer.INSTANCE, meta.copy())).isEqualTo(written);
        }
    }

    /** A snapshot's content, read at the version the input's first byte names. */
    @FuzzTest(maxDuration = FUZZ_DURATION)
    void snapshots(byte[] data) {
        snapshotsOf(data);
    }

    private static void snapshotsOf(byte[] data) {
        int version = data.length == 0 ? 1 : data[0];
        byte[] rest = data.length == 0 ? data : java.util.Arrays.copyOfRange(data, 1, data.length);
        for (TypeSerializerSnapshot<?> snapshot :
                new TypeSerializerSnapshot<?>[] {
                    new PageSerializer.Snapshot(), new FilterMetaSerializer.Snapshot()
                }) {
            SNAPSHOT.run(
                    snapshot.getClass().getName() + ".readSnapshot",
                    data,
                    IOException.class,
                    () -> {
                        snapshot.readSnapshot(
                                version, in(rest), StateSerializersFuzzTest.class.getClassLoader());
                        return snapshot.restoreSerializer();
                    });
        }
    }

    private static FilterMeta readMeta(byte[] bytes) {
        try {
            return FilterMetaSerializer.INSTANCE.deserialize(in(bytes));
        } catch (IOException e) {
            throw new AssertionError("a value written by the serializer does not read", e);
        }
    }

    private static <T> byte[] write(
            org.apache.flink.api.common.typeutils.TypeSerializer<T> serializer, T value) {
        DataOutputSerializer out = new DataOutputSerializer(64);
        try {
            serializer.serialize(value, out);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        return out.getCopyOfBuffer();
    }

    /** Writes the seed corpus (run by hand, once). */
    public static void main(String[] args) throws IOException {
        Path dir =
                Path.of(
                        args.length > 0
                                ? args[0]
                                : "operators/src/test/resources/io/bloomstream/flink/typeutils/"
                                        + "StateSerializersFuzzTestInputs");
        Path pages = Files.createDirectories(dir.resolve("pageValues"));
        Files.write(pages.resolve("seed-empty-page"), write(PageSerializer.INSTANCE, new long[0]));
        Files.write(
                pages.resolve("seed-512-bit-page"),
                write(PageSerializer.INSTANCE, new long[] {1, 2, 3, 4, 5, 6, 7, -1}));
        Path metas = Files.createDirectories(dir.resolve("filterMetaValues"));
        Path golden = Path.of("operators/src/test/resources/golden");
        Files.copy(golden.resolve("filter-meta-v2.bin"), metas.resolve("seed-filter-meta-v2"));
        Files.copy(golden.resolve("filter-meta-v3.bin"), metas.resolve("seed-filter-meta-v3"));
        Path snaps = Files.createDirectories(dir.resolve("snapshots"));
        Files.write(snaps.resolve("seed-version-1"), new byte[] {1});
        Files.write(snaps.resolve("seed-version-3"), new byte[] {3});
    }
}
