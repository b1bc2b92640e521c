package io.bloomstream.jobs.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.filter.CountingBloomFilter;
import io.bloomstream.filter.FilterCodec;
import io.bloomstream.filter.FilterFile;
import io.bloomstream.filter.MembershipFilter;
import io.bloomstream.filter.Normalization;
import io.bloomstream.jobs.Cli;
import io.bloomstream.jobs.testdata.GenerateTestDataCommand;
import io.bloomstream.jobs.testdata.TestData;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Tests for {@link BuildFilterCommand}. */
class BuildFilterCommandTest {

    @TempDir Path tmp;

    private final Cli cli = new Cli();

    @Test
    void everyListedAddressIsFlaggedAndUnlistedOnesWithinTheTargetRate() throws Exception {
        Path list = Cli.testdata().resolve("spam/blocklist.txt");
        Path filterFile = tmp.resolve("spam.bloom");
        assertThat(
                        cli.run(
                                "build-filter",
                                "--input",
                                list.toString(),
                                "--output",
                                filterFile.toString(),
                                "--fpp",
                                "0.01",
                                "--normalize",
                                "email"))
                .as(cli.err.toString())
                .isZero();
        assertThat(cli.out.toString())
                .contains("entries added     100000")
                .contains("hashes (k)        ")
                .contains("expected fpp      ");
        FilterFile file = FilterCodec.decodeFile(Files.readAllBytes(filterFile), null);
        assertThat(file.normalization()).isEqualTo(Normalization.EMAIL);
        MembershipFilter filter = file.filter();
        List<String> listed = Files.readAllLines(list);
        assertThat(listed).hasSize(GenerateTestDataCommand.BLOCKLIST_SIZE);
        for (String entry : listed) {
            assertThat(filter.mightContain(Normalization.EMAIL.apply(entry))).as(entry).isTrue();
        }
        // 10^5 probes from another seed, none of them listed. The flags are
        // Binomial(n, p) with p the filter's model rate; 4.5 sigma keeps a spurious failure
        // below 1e-5 while a layout or sizing bug (rate off by 20% or more) still fails.
        List<String> probes = TestData.addresses(99, 100_000, new HashSet<>(listed));
        long flagged = probes.stream().filter(filter::mightContain).count();
        double p = filter.expectedFpp();
        double n = probes.size();
        assertThat(p).isBetween(0.009, 0.0101);
        assertThat((double) flagged)
                .isBetween(
                        n * p - 4.5 * Math.sqrt(n * p * (1 - p)),
                        n * p + 4.5 * Math.sqrt(n * p * (1 - p)));
    }

    @Test
    void explicitBitsAndHashesAndACountingVariant() throws Exception {
        Path list = tmp.resolve("list.txt");
        Files.write(list, List.of("Spam.Example", "", "   ", "evil.example"));
        Path out = tmp.resolve("domains.bloom");
        assertThat(
                        cli.run(
                                "build-filter",
                                "--input",
                                list.toString(),
                                "--output",
                                out.toString(),
                                "--bits",
                                "4096",
                                "--hashes",
                                "5",
                                "--normalize",
                                "domain",
                                "--counting"))
                .as(cli.err.toString())
                .isZero();
        assertThat(cli.out.toString())
                .contains("entries added     2")
                .contains("lines skipped     2")
                .contains("bits (m)          4096");
        FilterFile file = FilterCodec.decodeFile(Files.readAllBytes(out), null);
        assertThat(file.filter()).isInstanceOf(CountingBloomFilter.class);
        assertThat(file.filter().mightContain("spam.example")).isTrue();
        assertThat(((CountingBloomFilter) file.filter()).remove("spam.example")).isTrue();
    }

    @Test
    void badFlagsExitNonZeroWithAClearMessage() throws Exception {
        Path list = tmp.resolve("list.txt");
        Files.write(list, List.of("a"));
        String out = tmp.resolve("f.bloom").toString();
        assertThat(cli.run("build-filter", "--input", list.toString(), "--output", out))
                .isEqualTo(2);
        assertThat(cli.err.toString()).contains("Missing required argument");
        assertThat(
                        cli.run(
                                "build-filter",
                                "--input",
                                list.toString(),
                                "--output",
                                out,
                                "--fpp",
                                "0.01",
                                "--bits",
                                "100",
                                "--hashes",
                                "3"))
                .isEqualTo(2);
        assertThat(cli.err.toString()).contains("mutually exclusive");
        assertThat(
                        cli.run(
                                "build-filter",
                                "--input",
                                list.toString(),
                                "--output",
                                out,
                                "--fpp",
                                "1.5"))
                .isEqualTo(2);
        assertThat(cli.err.toString())
                .contains(
                        "'1.5' is not a rate between 0 and 1 (exclusive): did you mean 0.015 (1.5%)?");
        assertThat(
                        cli.run(
                                "build-filter",
                                "--input",
                                list.toString(),
                                "--output",
                                out,
                                "--fpp",
                                "0.01",
                                "--normalize",
                                "upper"))
                .isEqualTo(2);
        assertThat(cli.err.toString())
                .contains("normalization must be none, lowercase, email or domain");
        assertThat(
                        cli.run(
                                "build-filter",
                                "--input",
                                tmp.resolve("nope").toString(),
                                "--output",
                                out,
                                "--fpp",
                                "0.01"))
                .isEqualTo(2);
        assertThat(cli.err.toString()).contains("no such file");
        assertThat(Files.exists(Path.of(out))).isFalse();
    }

    @Test
    void anExplicitShapeGetsThePageThatKeepsTheClassicRate() throws Exception {
        // m/n = 20, k = 10 over the 100,000 listed addresses: 512-bit pages had 2.3x the
        // classic rate; the automatic page keeps it within 5% (Sizing.autoPageBits).
        Path filterFile = tmp.resolve("shape.bloom");
        assertThat(
                        cli.run(
                                "build-filter",
                                "--input",
                                Cli.testdata().resolve("spam/blocklist.txt").toString(),
                                "--output",
                                filterFile.toString(),
                                "--bits",
                                "2000000",
                                "--hashes",
                                "10",
                                "--normalize",
                                "email"))
                .as(cli.err.toString())
                .isZero();
        assertThat(cli.out.toString()).contains("layout            8192-bit pages");
        var spec =
                ((io.bloomstream.filter.BloomFilter)
                                FilterCodec.decodeFile(Files.readAllBytes(filterFile), null)
                                        .filter())
                        .spec();
        double classic = io.bloomstream.filter.Sizing.falsePositiveRate(2_000_000, 10, 100_000);
        assertThat(spec.expectedFpp(100_000)).isLessThanOrEqualTo(1.05 * classic);
        assertThat(cli.out.toString()).contains("(classic layout, same m and k: ");
    }

    @Test
    void readsAPipeOnceAndAddsEveryEntry() throws Exception {
        // A named pipe stands for <(zcat list.gz) and /dev/stdin: what was read is gone. The
        // writer writes the list once, then, as a second writer would, opens it again and again
        // without writing: a second pass reads nothing, so the filter held no entry.
        Path fifo = tmp.resolve("list.fifo");
        Assumptions.assumeTrue(
                new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor() == 0, "mkfifo");
        List<String> list = List.of("alpha@x.org", "", "Beta@Y.org", "gamma@z.org");
        java.util.concurrent.atomic.AtomicBoolean done =
                new java.util.concurrent.atomic.AtomicBoolean();
        Thread writer =
                new Thread(
                        () -> {
                            try {
                                Files.write(fifo, list);
                                while (!done.get()) {
                                    Files.newOutputStream(fifo).close(); // blocks for a reader
                                }
                            } catch (java.io.IOException e) {
                                throw new java.io.UncheckedIOException(e);
                            }
                        });
        writer.setDaemon(true);
        writer.start();
        Path out = tmp.resolve("piped.bloom");
        int status =
                cli.run(
                        "build-filter",
                        "--input",
                        fifo.toString(),
                        "--output",
                        out.toString(),
                        "--fpp",
                        "0.001",
                        "--json");
        done.set(true);
        // Opening for read and write never blocks and lets a writer blocked in open return. The
        // writer may not have reached its open yet (it can be between a close and the check of
        // done), so open until it has seen done and ended, for at most ten seconds.
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (writer.isAlive() && System.nanoTime() < deadline) {
            new java.io.RandomAccessFile(fifo.toFile(), "rw").close();
            writer.join(20);
        }
        assertThat(writer.isAlive()).as("the writer thread ended").isFalse();
        assertThat(status).as(cli.err.toString()).isZero();
        assertThat(cli.out.toString()).contains("\"entries_added\":3,\"lines_skipped\":1");
        MembershipFilter filter = FilterCodec.decodeFile(Files.readAllBytes(out), null).filter();
        for (String entry : List.of("alpha@x.org", "beta@y.org", "gamma@z.org")) {
            assertThat(filter.mightContain(entry)).as(entry).isTrue();
        }
        try (var files = Files.list(tmp)) {
            assertThat(files.map(f -> f.getFileName().toString()))
                    .containsExactlyInAnyOrder("list.fifo", "piped.bloom");
        }
    }

    @Test
    void skipsALineLongerThanTheCapAndSaysSo() throws Exception {
        Path list = tmp.resolve("list.txt");
        Files.writeString(list, "short.example\n" + "x".repeat(3000) + "\nother.example\n");
        Path out = tmp.resolve("capped.bloom");
        assertThat(
                        cli.run(
                                "build-filter",
                                "--input",
                                list.toString(),
                                "--output",
                                out.toString(),
                                "--fpp",
                                "0.01",
                                "--max-line-bytes",
                                "2k"))
                .as(cli.err.toString())
                .isZero();
        assertThat(cli.out.toString())
                .contains("entries added     2")
                .contains("lines skipped     1 (empty, unusable, too long or not UTF-8)");
        assertThat(cli.err.toString())
                .contains(
                        "warning: skipped 1 line longer than --max-line-bytes 2000 (the first:"
                                + " line 2, 3000 bytes)");
        MembershipFilter filter = FilterCodec.decodeFile(Files.readAllBytes(out), null).filter();
        assertThat(filter.mightContain("short.example")).isTrue();
        assertThat(filter.mightContain("x".repeat(3000))).isFalse();
    }

    @Test
    void refusesAFileFarLargerThanItsListNeedsUnlessAllowed() throws Exception {
        Path list = tmp.resolve("three.txt");
        Files.write(list, List.of("a", "b", "c"));
        Path out = tmp.resolve("huge.bloom");
        assertThat(
                        cli.run(
                                "build-filter",
                                "--input",
                                list.toString(),
                                "--output",
                                out.toString(),
                                "--bits",
                                "1T",
                                "--hashes",
                                "3"))
                .isEqualTo(2);
        assertThat(cli.err.toString())
                .contains(
                        "--bits 1000000000000 for 3 entries is 333333333333 bits per entry: the"
                                + " file would take 116.42 GiB")
                .contains("--allow-oversized");
        assertThat(Files.exists(out)).isFalse();
        try (var files = Files.list(tmp)) {
            assertThat(files.map(f -> f.getFileName().toString())).containsExactly("three.txt");
        }
    }

    @Test
    void keepsAPipesEntriesOwnerOnlyAndWritesTheFilterAsAnyFile() throws Exception {
        // the spill file holds the list in plain text (for a keyed file, what the key hides)
        Path fifo = tmp.resolve("list.fifo");
        Assumptions.assumeTrue(
                new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor() == 0, "mkfifo");
        Assumptions.assumeTrue(
                Files.getFileStore(tmp).supportsFileAttributeView("posix"), "POSIX permissions");
        Path dir = tmp.resolve("out").resolve("nested"); // created with the first temporary file
        Path out = dir.resolve("piped.bloom");
        int[] status = {-1};
        Thread build =
                new Thread(
                        () ->
                                status[0] =
                                        cli.run(
                                                "build-filter",
                                                "--input",
                                                fifo.toString(),
                                                "--output",
                                                out.toString(),
                                                "--fpp",
                                                "0.001"));
        build.setDaemon(true);
        build.start();
        String entriesMode;
        try (var w = Files.newOutputStream(fifo)) { // returns once the command reads the pipe
            try (var files = Files.list(dir)) {
                Path entries =
                        files.filter(f -> f.getFileName().toString().endsWith(".entries"))
                                .findFirst()
                                .orElseThrow();
                entriesMode =
                        java.nio.file.attribute.PosixFilePermissions.toString(
                                Files.getPosixFilePermissions(entries));
            }
            w.write("alpha@x.org\nbeta@y.org\n".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        build.join(60_000);
        assertThat(build.isAlive()).as("the build ended").isFalse();
        assertThat(status[0]).as(cli.err.toString()).isZero();
        assertThat(entriesMode).isEqualTo("rw-------");
        // the filter keeps the umask's permissions, as any file the user writes
        Path plain = Files.createFile(tmp.resolve("plain"));
        assertThat(Files.getPosixFilePermissions(out))
                .isEqualTo(Files.getPosixFilePermissions(plain));
        try (var files = Files.list(dir)) {
            assertThat(files.map(f -> f.getFileName().toString())).containsExactly("piped.bloom");
        }
    }

    @Test
    void refusesBeforeCreatingTheOutputDirectory() throws Exception {
        Path list = tmp.resolve("three.txt");
        Files.write(list, List.of("a", "b", "c"));
        Path out = tmp.resolve("new").resolve("dir").resolve("x.bloom");
        assertThat(
                        cli.run(
                                "build-filter",
                                "--input",
                                list.toString(),
                                "--output",
                                out.toString(),
                                "--bits",
                                "1T",
                                "--hashes",
                                "3"))
                .isEqualTo(2);
        // refused as soon as the list is counted, before a filter or a directory is made
        assertThat(cli.err.toString()).contains("--allow-oversized");
        assertThat(tmp.resolve("new")).doesNotExist();
    }

    @Test
    void removesItsTemporaryFileWhenInterrupted() throws Exception {
        // a second JVM reads a pipe that is never closed: it holds its spill file and blocks
        // there, writing nothing large, until it is sent SIGTERM, as Ctrl-C does
        Path fifo = tmp.resolve("list.fifo");
        Assumptions.assumeTrue(
                new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor() == 0, "mkfifo");
        Path dir = Files.createDirectory(tmp.resolve("out"));
        List<String> cmd =
                List.of(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-Xmx64m",
                        "-cp",
                        System.getProperty("java.class.path"),
                        io.bloomstream.jobs.Main.class.getName(),
                        "build-filter",
                        "--input",
                        fifo.toString(),
                        "--output",
                        dir.resolve("piped.bloom").toString(),
                        "--fpp",
                        "0.01");
        // opened for reading and writing: never blocks, and the pipe keeps a writer, so the
        // child's read waits for more
        try (java.io.RandomAccessFile writer = new java.io.RandomAccessFile(fifo.toFile(), "rw");
                java.nio.file.WatchService watch = dir.getFileSystem().newWatchService()) {
            writer.write("alpha@x.org\n".getBytes(java.nio.charset.StandardCharsets.UTF_8));
            dir.register(watch, java.nio.file.StandardWatchEventKinds.ENTRY_CREATE);
            Process p =
                    new ProcessBuilder(cmd)
                            .redirectErrorStream(true)
                            .redirectOutput(tmp.resolve("build.log").toFile())
                            .start();
            try {
                java.nio.file.WatchKey key = watch.poll(60, java.util.concurrent.TimeUnit.SECONDS);
                assertThat(key).as(Files.readString(tmp.resolve("build.log"))).isNotNull();
                assertThat(key.pollEvents().get(0).context().toString())
                        .startsWith(".build-filter-")
                        .endsWith(".entries");
                assertThat(p.isAlive()).as("blocked on the pipe").isTrue();
                p.destroy(); // SIGTERM
                assertThat(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            } finally {
                p.destroyForcibly();
            }
        }
        try (var files = Files.list(dir)) {
            assertThat(files).as(Files.readString(tmp.resolve("build.log"))).isEmpty();
        }
    }
}
