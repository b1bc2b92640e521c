package io.bloomstream.jobs.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.filter.BloomFilter;
import io.bloomstream.filter.FilterCodec;
import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.Hasher;
import io.bloomstream.filter.Normalization;
import io.bloomstream.jobs.Cli;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tests for {@link KeyOptions}: keyed (SipHash) filter files made with the library are read by
 * {@code inspect} and {@code query}, and written by {@code build-filter}, with a key from a file or
 * an environment variable; without the key the file is called keyed, not invalid (issue 29, item
 * 18).
 */
class KeyedFilterFilesTest {

    /** k0 = 0x0706050403020100 and k1 = 0x0f0e0d0c0b0a0908, little-endian. */
    private static final String KEY = "000102030405060708090a0b0c0d0e0f";

    @TempDir Path tmp;

    private final Cli cli = new Cli();

    @AfterEach
    void restoreEnvironment() {
        KeyOptions.environment = System::getenv;
    }

    private Path keyedFile() throws Exception {
        Hasher keyed = Hasher.sipHash24(0x0706050403020100L, 0x0f0e0d0c0b0a0908L);
        BloomFilter f =
                BloomFilter.create(
                        FilterSpec.builder().expectedItems(1000).fpp(0.001).hasher(keyed).build());
        f.add("listed@example.com");
        Path file = tmp.resolve("keyed.bloom");
        Files.write(file, FilterCodec.encode(f, Normalization.EMAIL));
        return file;
    }

    private Path keyFile(String text) throws Exception {
        Path key = tmp.resolve("key-" + text.length() + ".hex");
        Files.writeString(key, text + "\n");
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
        return key;
    }

    @Test
    void withoutItsKeyAKeyedFileIsCalledKeyedAndTheFlagsNamed() throws Exception {
        Path file = keyedFile();
        assertThat(cli.run("inspect", "--filter", file.toString())).isEqualTo(1);
        assertThat(cli.err.toString())
                .contains("a keyed (SipHash-2-4) filter file: give its key with --key-file")
                .doesNotContain("not a valid filter file");
    }

    @Test
    void inspectAndQueryReadAKeyedFileWithItsKeyFromAFileOrTheEnvironment() throws Exception {
        Path file = keyedFile();
        Path key = keyFile(KEY);
        assertThat(
                        cli.run(
                                "inspect",
                                "--filter",
                                file.toString(),
                                "--key-file",
                                key.toString(),
                                "--json"))
                .isZero();
        Map<String, Object> json = Cli.json(cli.out.toString());
        assertThat(json).containsEntry("strategy", "SIPHASH_2_4").containsEntry("items_added", 1L);
        assertThat(cli.err.toString()).doesNotContain(KEY);

        KeyOptions.environment = name -> name.equals("LIST_KEY") ? KEY.toUpperCase() : null;
        Path probe = tmp.resolve("probe.txt");
        Files.write(probe, List.of("Listed@Example.com", "other@example.com"));
        Path hits = tmp.resolve("hits.txt");
        assertThat(
                        cli.run(
                                "query",
                                "--filter",
                                file.toString(),
                                "--key-env",
                                "LIST_KEY",
                                "--input",
                                probe.toString(),
                                "--output",
                                hits.toString()))
                .isZero();
        assertThat(Files.readAllLines(hits)).containsExactly("Listed@Example.com");
    }

    @Test
    void aKeyForAnUnkeyedFileIsRefusedNamingItsHash() throws Exception {
        BloomFilter f = BloomFilter.create(100, 0.01);
        f.add("listed");
        Path file = tmp.resolve("unkeyed.bloom");
        Files.write(file, FilterCodec.encode(f));
        Path key = keyFile(KEY);
        Path probe = tmp.resolve("probe.txt");
        Files.write(probe, List.of("listed"));
        for (String[] args :
                new String[][] {
                    {"inspect", "--filter", file.toString(), "--key-file", key.toString()},
                    {
                        "query",
                        "--filter",
                        file.toString(),
                        "--key-file",
                        key.toString(),
                        "--input",
                        probe.toString(),
                        "--output",
                        tmp.resolve("hits.txt").toString()
                    }
                }) {
            Cli run = new Cli();
            assertThat(run.run(args)).as(args[0]).isEqualTo(1);
            assertThat(run.err.toString())
                    .as(args[0])
                    .contains(file + ": not a keyed filter file (its hash is XXH3_64")
                    .contains("leave out --key-file");
        }
    }

    @Test
    void aSeedWithAKeyIsRefusedByBuildFilterAndScreen() throws Exception {
        Path list = tmp.resolve("list.txt");
        Files.write(list, List.of("listed@example.com"));
        Path key = keyFile(KEY);
        Path file = keyedFile();
        for (String[] args :
                new String[][] {
                    {
                        "build-filter",
                        "--input",
                        list.toString(),
                        "--output",
                        tmp.resolve("seeded.bloom").toString(),
                        "--fpp",
                        "0.01",
                        "--key-file",
                        key.toString(),
                        "--seed",
                        "7"
                    },
                    {
                        "screen",
                        "--filter",
                        file.toString(),
                        "--normalize",
                        "email",
                        "--key-file",
                        key.toString(),
                        "--seed",
                        "7",
                        "--input",
                        list.toString(),
                        "--output",
                        tmp.resolve("clean").toString(),
                        "--flagged-output",
                        tmp.resolve("flagged").toString()
                    }
                }) {
            Cli run = new Cli();
            assertThat(run.run(args)).as(args[0]).isEqualTo(2);
            assertThat(run.err.toString())
                    .as(args[0])
                    .contains("--seed is for XXH3 files: a keyed file takes no seed");
        }
    }

    @Test
    void aWrongMissingOrMalformedKeyIsRefusedNamingTheFlagNeverTheKey() throws Exception {
        Path file = keyedFile();
        Path wrong = keyFile("ff0102030405060708090a0b0c0d0e0f");
        assertThat(cli.run("inspect", "--filter", file.toString(), "--key-file", wrong.toString()))
                .isEqualTo(1);
        assertThat(cli.err.toString()).contains("wrong key");
        UnaryOperator<String> none = name -> null;
        KeyOptions.environment = none;
        assertThat(cli.run("inspect", "--filter", file.toString(), "--key-env", "NOPE"))
                .isEqualTo(2);
        assertThat(cli.err.toString()).contains("--key-env NOPE: the environment variable is not");
        Path shortKey = keyFile("0011secret");
        assertThat(
                        cli.run(
                                "inspect",
                                "--filter",
                                file.toString(),
                                "--key-file",
                                shortKey.toString()))
                .isEqualTo(2);
        assertThat(cli.err.toString())
                .contains("--key-file " + shortKey + ": must hold the 16-byte SipHash key")
                .doesNotContain("0011secret");
    }

    @Test
    void buildFilterWritesAKeyedFileThatTheLibraryReadsWithTheKey() throws Exception {
        Path list = tmp.resolve("list.txt");
        Files.write(list, List.of("Listed@Example.com", "x@example.com"));
        Path out = tmp.resolve("built.bloom");
        Path key = keyFile(KEY);
        assertThat(
                        cli.run(
                                "build-filter",
                                "--input",
                                list.toString(),
                                "--output",
                                out.toString(),
                                "--fpp",
                                "0.001",
                                "--normalize",
                                "email",
                                "--key-file",
                                key.toString()))
                .isZero();
        Hasher keyed = Hasher.sipHash24(0x0706050403020100L, 0x0f0e0d0c0b0a0908L);
        var read = FilterCodec.decodeFile(Files.readAllBytes(out), keyed);
        assertThat(read.filter().hasher()).isEqualTo(keyed);
        assertThat(read.filter().mightContain("listed@example.com")).isTrue();
        assertThat(
                        cli.run(
                                "build-filter",
                                "--input",
                                list.toString(),
                                "--output",
                                out.toString(),
                                "--fpp",
                                "0.001",
                                "--seed",
                                "7",
                                "--key-file",
                                key.toString()))
                .isEqualTo(2);
        assertThat(cli.err.toString()).contains("--seed is for XXH3 files");
    }

    @Test
    void screenFlagsWithAKeyedFileAndItsKey() throws Exception {
        Path list = tmp.resolve("list.txt");
        Files.write(list, List.of("listed@example.com"));
        Path filter = tmp.resolve("screen.bloom");
        Path key = keyFile(KEY);
        assertThat(
                        cli.run(
                                "build-filter",
                                "--input",
                                list.toString(),
                                "--output",
                                filter.toString(),
                                "--fpp",
                                "0.001",
                                "--normalize",
                                "email",
                                "--key-file",
                                key.toString()))
                .isZero();
        Path mails = tmp.resolve("mails.jsonl");
        Files.write(
                mails,
                List.of("{\"from\":\"Listed@Example.com\"}", "{\"from\":\"ok@example.com\"}"));
        assertThat(
                        cli.run(
                                "screen",
                                "--filter",
                                filter.toString(),
                                "--key-file",
                                key.toString(),
                                "--input",
                                mails.toString(),
                                "--format",
                                "json",
                                "--field",
                                "from",
                                "--output",
                                tmp.resolve("clean").toString(),
                                "--flagged-output",
                                tmp.resolve("flagged").toString()))
                .as(cli.err.toString())
                .isZero();
        assertThat(Cli.readParts(tmp.resolve("flagged")))
                .singleElement(org.assertj.core.api.InstanceOfAssertFactories.STRING)
                .contains("listed@example.com");
        assertThat(Cli.readParts(tmp.resolve("clean")))
                .containsExactly("{\"from\":\"ok@example.com\"}");
    }
}
