package io.bloomstream.flink.screen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomstream.filter.BloomFilter;
import io.bloomstream.filter.FilterCodec;
import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.HashStrategy;
import io.bloomstream.filter.Hasher;
import io.bloomstream.filter.Normalization;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.execution.SuppressRestartsException;
import org.apache.flink.streaming.api.operators.co.CoBroadcastWithNonKeyedOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.BroadcastOperatorTestHarness;
import org.apache.flink.util.OutputTag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tests for {@link ScreenFunction} in Flink's broadcast operator harness. Events are "from,replyTo"
 * strings; an empty part is a missing field.
 */
public class ScreenFunctionTest {

    public static final OutputTag<ScreenMatch<String>> FLAGGED =
            BloomScreen.flaggedTag(Types.STRING);
    public static final OutputTag<String> REJECTED = BloomScreen.rejectedTag(Types.STRING);

    @TempDir Path tmp;

    static String from(String event) {
        return event.split(",", -1)[0];
    }

    static String replyTo(String event) {
        return event.split(",", -1)[1];
    }

    /** Writes a filter of {@code entries}, normalized as EMAIL, and returns its URI. */
    public static String writeFilter(
            Path file, Normalization normalization, Hasher hasher, String... entries)
            throws Exception {
        BloomFilter f =
                BloomFilter.create(
                        FilterSpec.builder().expectedItems(1000).fpp(0.001).hasher(hasher).build());
        for (String e : entries) {
            f.add(normalization.apply(e));
        }
        Files.write(file, FilterCodec.encode(f, normalization));
        return file.toUri().toString();
    }

    String spamFile() throws Exception {
        return writeFilter(
                tmp.resolve("spam-v1.bloom"),
                Normalization.EMAIL,
                Hasher.defaultHasher(),
                "spammer@bad.example",
                "Phisher@Evil.example");
    }

    public static ScreenConfig<String> config(String path) {
        return ScreenConfig.<String>builder()
                .filterPath(path)
                .normalization(Normalization.EMAIL)
                .field("from", ScreenFunctionTest::from)
                .field("replyTo", ScreenFunctionTest::replyTo)
                .build();
    }

    /** Commands applied, seen through the hook. */
    static final class Recording extends ScreenFunction<String> {
        private static final long serialVersionUID = 1L;
        final ConcurrentLinkedQueue<FilterUpdate> applied = new ConcurrentLinkedQueue<>();

        Recording(ScreenConfig<String> config) {
            super(config, FLAGGED, REJECTED);
        }

        @Override
        protected void commandApplied(FilterUpdate command) {
            applied.add(command);
        }
    }

    static BroadcastOperatorTestHarness<String, FilterUpdate, String> harness(
            ScreenFunction<String> fn) throws Exception {
        return new BroadcastOperatorTestHarness<>(
                new CoBroadcastWithNonKeyedOperator<>(
                        fn, List.of(ScreenFunction.OVERLAY_STATE, ScreenFunction.FILTER_STATE)),
                1,
                1,
                0);
    }

    public static BroadcastOperatorTestHarness<String, FilterUpdate, String> open(
            ScreenFunction<String> fn, OperatorSubtaskState restore) throws Exception {
        BroadcastOperatorTestHarness<String, FilterUpdate, String> h = harness(fn);
        h.setup();
        if (restore == null) {
            h.initializeEmptyState();
        } else {
            h.initializeState(restore);
        }
        h.open();
        return h;
    }

    public static List<String> clean(BroadcastOperatorTestHarness<String, FilterUpdate, String> h) {
        List<String> out = new ArrayList<>();
        for (Object o : h.getOutput()) {
            if (o instanceof StreamRecord) {
                out.add((String) ((StreamRecord<?>) o).getValue());
            }
        }
        return out;
    }

    public static List<ScreenMatch<String>> flagged(
            BroadcastOperatorTestHarness<String, FilterUpdate, String> h) {
        List<ScreenMatch<String>> out = new ArrayList<>();
        if (h.getSideOutput(FLAGGED) != null) {
            h.getSideOutput(FLAGGED).forEach(r -> out.add(r.getValue()));
        }
        return out;
    }

    @Test
    void flagsListedSendersAndSaysWhichFieldMatched() throws Exception {
        try (var h = open(new Recording(config(spamFile())), null)) {
            h.processElement("alice@good.example,alice@good.example", 1);
            h.processElement("SPAMMER@bad.example,alice@good.example", 2);
            h.processElement("bob@good.example,Phisher <phisher@evil.example>", 3);
            assertThat(clean(h)).containsExactly("alice@good.example,alice@good.example");
            assertThat(flagged(h))
                    .containsExactly(
                            new ScreenMatch<>(
                                    "SPAMMER@bad.example,alice@good.example",
                                    "from",
                                    "spammer@bad.example"),
                            new ScreenMatch<>(
                                    "bob@good.example,Phisher <phisher@evil.example>",
                                    "replyTo",
                                    "phisher@evil.example"));
        }
    }

    @Test
    void aFileOfBloomFilterCreateIsServedAndOneOfAnotherSeedIsRefused() throws Exception {
        // BloomFilter.create(n, p) makes the blocked layout on XXH3-64; the file's reader probes
        // with the file's own hash, so the default screen (XXH3, default seed) serves it.
        BloomFilter created = BloomFilter.create(1_000, 0.001);
        assertThat(created.hasher().strategy()).isEqualTo(HashStrategy.XXH3_64);
        created.add(Normalization.EMAIL.apply("spammer@bad.example"));
        Path file = tmp.resolve("created.bloom");
        Files.write(file, FilterCodec.encode(created, Normalization.EMAIL));
        try (var h = open(new Recording(config(file.toUri().toString())), null)) {
            h.processElement("alice@good.example,alice@good.example", 1);
            h.processElement("Spammer@Bad.example,alice@good.example", 2);
            assertThat(clean(h)).containsExactly("alice@good.example,alice@good.example");
            assertThat(flagged(h))
                    .containsExactly(
                            new ScreenMatch<>(
                                    "Spammer@Bad.example,alice@good.example",
                                    "from",
                                    "spammer@bad.example"));
        }
        assertStartFails(
                writeFilter(
                        tmp.resolve("xxh3-64-seed.bloom"),
                        Normalization.EMAIL,
                        Hasher.xxh3_64(42),
                        "spammer@bad.example"),
                "built with hash XXH3_64(seed=2a)");
    }

    @Test
    void eventsWithAMissingFieldAreRejectedUnlessAnotherFieldMatched() throws Exception {
        try (var h = open(new Recording(config(spamFile())), null)) {
            h.processElement(",alice@good.example", 1);
            h.processElement("not-an-address,alice@good.example", 2);
            h.processElement(",spammer@bad.example", 3);
            assertThat(clean(h)).isEmpty();
            assertThat(h.getSideOutput(REJECTED))
                    .extracting(StreamRecord::getValue)
                    .containsExactly(",alice@good.example", "not-an-address,alice@good.example");
            assertThat(flagged(h)).extracting(m -> m.field).containsExactly("replyTo");
        }
    }

    @Test
    void liveAddsAndRemovesChangeTheScreenAndARemoveUnflagsOnlyItsEntry() throws Exception {
        Recording fn = new Recording(config(spamFile()));
        try (var h = open(fn, null)) {
            h.processBroadcastElement(FilterUpdate.add("New@Spam.example").withSequence(1), 1);
            h.processBroadcastElement(
                    FilterUpdate.remove("spammer@bad.example").withSequence(2), 2);
            h.processBroadcastElement(
                    FilterUpdate.add("not-an-address").withSequence(3), 3); // unusable: ignored
            assertThat(fn.applied).hasSize(2);
            h.processElement("new@spam.example,x@good.example", 4);
            h.processElement("spammer@bad.example,x@good.example", 5);
            h.processElement("phisher@evil.example,x@good.example", 6);
            assertThat(clean(h)).containsExactly("spammer@bad.example,x@good.example");
            assertThat(flagged(h))
                    .extracting(m -> m.value)
                    .containsExactly("new@spam.example", "phisher@evil.example");
        }
    }

    @Test
    void liveUpdatesSurviveSnapshotAndRestore() throws Exception {
        String path = spamFile();
        OperatorSubtaskState snapshot;
        try (var h = open(new Recording(config(path)), null)) {
            h.processBroadcastElement(FilterUpdate.add("new@spam.example").withSequence(1), 1);
            h.processBroadcastElement(
                    FilterUpdate.remove("spammer@bad.example").withSequence(2), 2);
            snapshot = h.snapshot(1, 10);
        }
        try (var h = open(new Recording(config(path)), snapshot)) {
            h.processElement("new@spam.example,x@good.example", 4);
            h.processElement("spammer@bad.example,x@good.example", 5);
            assertThat(clean(h)).containsExactly("spammer@bad.example,x@good.example");
            assertThat(flagged(h)).extracting(m -> m.value).containsExactly("new@spam.example");
        }
    }

    @Test
    void aNewVersionIsSwappedInAndClearsTheOverlay() throws Exception {
        String v2 =
                writeFilter(
                        tmp.resolve("spam-v2.bloom"),
                        Normalization.EMAIL,
                        Hasher.defaultHasher(),
                        "other@spam.example");
        OperatorSubtaskState snapshot;
        try (var h = open(new Recording(config(spamFile())), null)) {
            h.processBroadcastElement(FilterUpdate.add("new@spam.example").withSequence(1), 1);
            h.processBroadcastElement(FilterUpdate.load(v2, 2).withSequence(2), 2);
            h.processElement("spammer@bad.example,x@good.example", 3);
            h.processElement("new@spam.example,x@good.example", 4);
            h.processElement("other@spam.example,x@good.example", 5);
            assertThat(flagged(h)).extracting(m -> m.value).containsExactly("other@spam.example");
            snapshot = h.snapshot(1, 10);
        }
        // The restored task loads version 2, not the configured file.
        try (var h = open(new Recording(config(spamFile())), snapshot)) {
            h.processElement("other@spam.example,x@good.example", 6);
            h.processElement("spammer@bad.example,x@good.example", 7);
            assertThat(clean(h)).containsExactly("spammer@bad.example,x@good.example");
        }
    }

    @Test
    void aBadOrStaleNewVersionIsRejectedAndTheOldOneStaysInForce() throws Exception {
        Path corrupt = tmp.resolve("corrupt.bloom");
        byte[] bytes = Files.readAllBytes(Path.of(java.net.URI.create(spamFile())));
        bytes[bytes.length / 2] ^= 4;
        Files.write(corrupt, bytes);
        String other =
                writeFilter(
                        tmp.resolve("domains.bloom"),
                        Normalization.DOMAIN,
                        Hasher.defaultHasher(),
                        "bad.example");
        Recording fn = new Recording(config(spamFile()));
        try (var h = open(fn, null)) {
            h.processBroadcastElement(
                    FilterUpdate.load(corrupt.toUri().toString(), 2).withSequence(1), 1);
            h.processBroadcastElement(
                    FilterUpdate.load(tmp.resolve("missing").toUri().toString(), 3).withSequence(2),
                    2);
            h.processBroadcastElement(FilterUpdate.load(other, 4).withSequence(3), 3);
            h.processBroadcastElement(FilterUpdate.load(spamFile(), 1).withSequence(4), 4); // stale
            assertThat(fn.applied).isEmpty();
            h.processElement("spammer@bad.example,x@good.example", 5);
            assertThat(flagged(h)).hasSize(1);
        }
    }

    @Test
    void badFilterFilesFailAtStartWithoutRestartsNamingFileAndProblem() throws Exception {
        byte[] good = Files.readAllBytes(Path.of(java.net.URI.create(spamFile())));
        byte[] truncated = java.util.Arrays.copyOf(good, good.length - 100);
        byte[] magic = good.clone();
        magic[0] = 'X';
        byte[] flipped = good.clone();
        flipped[60] ^= 0x10;
        assertStartFails(tmp.resolve("missing.bloom").toUri().toString(), "does not exist");
        assertStartFails(
                Files.createDirectories(tmp.resolve("a-directory")).toUri().toString(),
                "it is a directory");
        assertStartFails(write("truncated.bloom", truncated), "truncated");
        assertStartFails(write("magic.bloom", magic), "field magic");
        assertStartFails(write("flipped.bloom", flipped), "checksum mismatch");
        byte[] hashes = good.clone();
        hashes[27] ^= 0x7F; // the header's k: corrupt, so a checksum mismatch, not "out of range"
        assertStartFails(write("hashes.bloom", hashes), "checksum mismatch");
        assertStartFails(
                writeFilter(
                        tmp.resolve("xxh3-seed.bloom"),
                        Normalization.EMAIL,
                        Hasher.xxh3(42),
                        "spammer@bad.example"),
                "built with hash");
        assertStartFails(
                writeFilter(
                        tmp.resolve("siphash.bloom"),
                        Normalization.EMAIL,
                        Hasher.sipHash24(1, 2),
                        "spammer@bad.example"),
                "a keyed (SipHash-2-4) filter file: screen it with its key");
        assertStartFails(
                writeFilter(
                        tmp.resolve("lower.bloom"),
                        Normalization.LOWERCASE,
                        Hasher.defaultHasher(),
                        "spammer@bad.example"),
                "normalization 'lowercase'");
    }

    private String write(String name, byte[] bytes) throws Exception {
        Path p = tmp.resolve(name);
        Files.write(p, bytes);
        return p.toUri().toString();
    }

    private static void assertStartFails(String path, String problem) {
        assertThatThrownBy(() -> open(new Recording(config(path)), null).close())
                .isInstanceOf(SuppressRestartsException.class)
                .cause()
                .hasMessageContaining("Cannot use screening filter file " + path)
                .hasMessageContaining(problem);
    }

    @Test
    void aRedeployWithAHigherInitialVersionReplacesTheRestoredFile() throws Exception {
        String v1 = spamFile();
        OperatorSubtaskState snapshot;
        try (var h = open(new Recording(config(v1)), null)) {
            h.processBroadcastElement(FilterUpdate.add("new@spam.example").withSequence(1), 1);
            snapshot = h.snapshot(1, 10);
        }
        String v2 =
                writeFilter(
                        tmp.resolve("spam-v2.bloom"),
                        Normalization.EMAIL,
                        Hasher.defaultHasher(),
                        "other@spam.example");
        ScreenConfig<String> same =
                ScreenConfig.<String>builder()
                        .filterPath(v2)
                        .normalization(Normalization.EMAIL)
                        .field("from", ScreenFunctionTest::from)
                        .build();
        // Same version: the restored file and its live add stay in force.
        try (var h = open(new Recording(same), snapshot)) {
            h.processElement("new@spam.example,x@good.example", 2);
            h.processElement("other@spam.example,x@good.example", 3);
            assertThat(flagged(h)).extracting(m -> m.value).containsExactly("new@spam.example");
        }
        ScreenConfig<String> higher =
                ScreenConfig.<String>builder()
                        .filterPath(v2)
                        .initialVersion(2)
                        .normalization(Normalization.EMAIL)
                        .field("from", ScreenFunctionTest::from)
                        .build();
        // A higher version: the new file, without the old file's live updates.
        try (var h = open(new Recording(higher), snapshot)) {
            h.processElement("new@spam.example,x@good.example", 2);
            h.processElement("other@spam.example,x@good.example", 3);
            assertThat(flagged(h)).extracting(m -> m.value).containsExactly("other@spam.example");
        }
    }

    @Test
    void aLoadFromAWrongPathOrWithoutPermissionIsRejectedCountedAndTheOldFilterStays()
            throws Exception {
        String v2 =
                writeFilter(
                        tmp.resolve("spam-v2.bloom"),
                        Normalization.EMAIL,
                        Hasher.defaultHasher(),
                        "other@spam.example");
        Recording fn = new Recording(config(spamFile()));
        try (var h = open(fn, null)) {
            // No file system for the scheme: a typo a retry cannot fix.
            h.processBroadcastElement(
                    FilterUpdate.load("nosuchscheme:///lists/spam-v2.bloom", 2).withSequence(1), 1);
            // The file exists, but the task may not read it (an object store's 403).
            h.processBroadcastElement(
                    FilterUpdate.load(v2.replace("file:", "denied:"), 3).withSequence(2), 2);
            assertThat(fn.applied).isEmpty();
            assertThat(fn.metrics().loadErrors.getCount()).isEqualTo(2);
            h.processElement("spammer@bad.example,x@good.example", 3);
            h.processElement("other@spam.example,x@good.example", 4);
            assertThat(flagged(h)).extracting(m -> m.value).containsExactly("spammer@bad.example");
        }
    }

    @Test
    void aTransientReadErrorFailsTheTaskSoThatTheRestartRetries() throws Exception {
        String flaky = spamFile().replace("file:", "flaky:");
        Recording fn = new Recording(config(spamFile()));
        try (var h = open(fn, null)) {
            assertThatThrownBy(
                            () ->
                                    h.processBroadcastElement(
                                            FilterUpdate.load(flaky, 2).withSequence(1), 1))
                    .isInstanceOf(ScreenFilterLoader.BadFilterFileException.class)
                    .hasMessageContaining("reading failed")
                    .hasMessageContaining("timed out");
            assertThat(fn.metrics().loadErrors.getCount()).isZero();
        }
        assertThatThrownBy(() -> open(new Recording(config(flaky)), null).close())
                .isInstanceOf(ScreenFilterLoader.BadFilterFileException.class)
                .isNotInstanceOf(SuppressRestartsException.class);
    }

    @Test
    void aRestoreThatFindsAnotherFileAtThePathFailsAndSaysSo() throws Exception {
        String path = spamFile();
        OperatorSubtaskState snapshot;
        try (var h = open(new Recording(config(path)), null)) {
            h.processBroadcastElement(FilterUpdate.add("new@spam.example").withSequence(1), 1);
            snapshot = h.snapshot(1, 10);
        }
        String before = String.format("%08x", trailer(path));
        // Someone rebuilds the list in place, under the same path.
        writeFilter(
                tmp.resolve("spam-v1.bloom"),
                Normalization.EMAIL,
                Hasher.defaultHasher(),
                "someone@else.example");
        String after = String.format("%08x", trailer(path));
        assertThat(after).isNotEqualTo(before);
        assertThatThrownBy(() -> open(new Recording(config(path)), snapshot).close())
                .isInstanceOf(SuppressRestartsException.class)
                .cause()
                .hasMessageContaining("changed since filter version 1")
                .hasMessageContaining("checksum recorded " + before + ", found " + after);
    }

    private static int trailer(String uri) throws Exception {
        byte[] b = Files.readAllBytes(Path.of(java.net.URI.create(uri)));
        return java.nio.ByteBuffer.wrap(b, b.length - 4, 4).getInt();
    }

    @Test
    void tasksOfOneJvmShareOneDecodedFilterAndTheLastToCloseFreesIt() throws Exception {
        String path = spamFile();
        Recording a = new Recording(config(path));
        Recording b = new Recording(config(path));
        var ha = open(a, null);
        var hb = open(b, null);
        assertThat(a.filterInForce()).isSameAs(b.filterInForce());
        assertThat(SharedFilters.uses(path)).isEqualTo(2);
        hb.processElement("spammer@bad.example,x@good.example", 1);
        assertThat(flagged(hb)).hasSize(1);
        ha.close();
        assertThat(SharedFilters.uses(path)).isEqualTo(1);
        hb.close();
        assertThat(SharedFilters.uses(path)).isZero();
    }

    @Test
    void rejectsCommandsThatTheSingleProducerDidNotNumber() throws Exception {
        Recording fn = new Recording(config(spamFile()));
        try (var h = open(fn, null)) {
            h.processBroadcastElement(FilterUpdate.add("new@spam.example"), 1);
            h.processBroadcastElement(FilterUpdate.remove("spammer@bad.example"), 2);
            assertThat(fn.applied).isEmpty();
            h.processElement("new@spam.example,x@good.example", 3);
            h.processElement("spammer@bad.example,x@good.example", 4);
            assertThat(flagged(h)).extracting(m -> m.value).containsExactly("spammer@bad.example");
        }
    }

    @Test
    void parsesTextCommands() {
        assertThat(FilterUpdate.parse("add  a@b.example"))
                .isEqualTo(FilterUpdate.add("a@b.example"));
        assertThat(FilterUpdate.parse("REMOVE a@b.example"))
                .isEqualTo(FilterUpdate.remove("a@b.example"));
        assertThat(FilterUpdate.parse("load 7 s3://lists/spam v7.bloom"))
                .isEqualTo(FilterUpdate.load("s3://lists/spam v7.bloom", 7));
        assertThatThrownBy(() -> FilterUpdate.parse("load x y")).hasMessageContaining("'load x y'");
        assertThatThrownBy(() -> FilterUpdate.parse("drop a"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void configNeedsAPathAndAField() {
        assertThatThrownBy(() -> ScreenConfig.<String>builder().filterPath("f").build())
                .hasMessageContaining("field");
        assertThatThrownBy(() -> ScreenConfig.<String>builder().field("a", s -> s).build())
                .hasMessageContaining("filterPath");
        assertThatThrownBy(
                        () -> ScreenConfig.<String>builder().field("a", s -> s).field("a", s -> s))
                .hasMessageContaining("'a' given twice");
    }
}
