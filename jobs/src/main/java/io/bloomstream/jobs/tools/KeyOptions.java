package io.bloomstream.jobs.tools;

import io.bloomstream.filter.Hasher;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Set;
import java.util.function.UnaryOperator;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * {@code --key-file FILE | --key-env VAR}: the secret key of keyed (SipHash-2-4) filter files, for
 * the commands that read or write them. The key is 16 bytes written as 32 hex digits (the first 8
 * bytes are k0 and the next 8 are k1, each read little-endian, as {@link Hasher#sipHash24} takes
 * them), read from a file or from an environment variable, never from the command line, where other
 * users see it in the process list and it stays in the shell's history.
 */
public final class KeyOptions {

    /** How environment variables are read (tests replace it). */
    static UnaryOperator<String> environment = System::getenv;

    @Option(
            names = "--key-file",
            paramLabel = "FILE",
            description =
                    "Keyed (SipHash) filter files: a file holding the 16-byte key as 32 hex"
                            + " digits (keep it private: chmod 600).")
    Path keyFile;

    @Option(
            names = "--key-env",
            paramLabel = "VAR",
            description =
                    "Keyed (SipHash) filter files: the name of an environment variable holding the"
                            + " key as 32 hex digits.")
    String keyEnv;

    /** Whether a key was given. */
    public boolean given() {
        return keyFile != null || keyEnv != null;
    }

    /**
     * The keyed hasher of the key given, or null when none was.
     *
     * @throws CommandLine.ParameterException naming the flag when the key cannot be read or is not
     *     32 hex digits (the message never quotes the key)
     */
    public Hasher hasher(CommandLine cl) {
        long[] k = key(cl);
        return k == null ? null : Hasher.sipHash24(k[0], k[1]);
    }

    /**
     * The hasher of a command that also takes {@code --seed}: the keyed hasher of the key given, or
     * XXH3 with {@code seed} when none was.
     *
     * @throws CommandLine.ParameterException as {@link #hasher}, or when {@code --seed} is given
     *     with a key
     */
    public Hasher hasher(CommandLine cl, long seed) {
        long[] k = keyWithoutSeed(cl);
        return k == null ? Hasher.xxh3(seed) : Hasher.sipHash24(k[0], k[1]);
    }

    /**
     * The key given, as {k0, k1}, or null when none was, for a command that also takes {@code
     * --seed}: a keyed file takes no seed.
     *
     * @throws CommandLine.ParameterException as {@link #hasher}, or when {@code --seed} is given
     *     with a key
     */
    public long[] keyWithoutSeed(CommandLine cl) {
        long[] k = key(cl);
        if (k != null && cl.getParseResult().hasMatchedOption("--seed")) {
            throw new CommandLine.ParameterException(
                    cl, "--seed is for XXH3 files: a keyed file takes no seed");
        }
        return k;
    }

    /**
     * The key given, as {k0, k1}, or null when none was.
     *
     * @throws CommandLine.ParameterException as {@link #hasher}
     */
    public long[] key(CommandLine cl) {
        if (keyFile != null && keyEnv != null) {
            throw new CommandLine.ParameterException(cl, "give --key-file or --key-env, not both");
        }
        if (keyFile != null) {
            String text;
            try {
                text = Files.readString(keyFile, StandardCharsets.US_ASCII);
            } catch (IOException e) {
                String why = io.bloomstream.jobs.console.FileErrors.unreadable(keyFile);
                throw new CommandLine.ParameterException(
                        cl, "--key-file " + keyFile + ": " + (why != null ? why : e.toString()));
            }
            warnIfOthersCanRead(cl);
            return parse(cl, "--key-file " + keyFile, text);
        }
        if (keyEnv != null) {
            String text = environment.apply(keyEnv);
            if (text == null) {
                throw new CommandLine.ParameterException(
                        cl, "--key-env " + keyEnv + ": the environment variable is not set");
            }
            return parse(cl, "--key-env " + keyEnv, text);
        }
        return null;
    }

    private static long[] parse(CommandLine cl, String flag, String text) {
        String hex = text.strip();
        if (hex.length() != 32 || !hex.chars().allMatch(c -> Character.digit(c, 16) >= 0)) {
            throw new CommandLine.ParameterException(
                    cl,
                    flag
                            + ": must hold the 16-byte SipHash key as 32 hex digits (for a new"
                            + " key: od -An -tx1 -N16 /dev/urandom | tr -d ' \\n')");
        }
        long k0 = 0;
        long k1 = 0;
        for (int i = 0; i < 8; i++) {
            k0 |= (long) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16) << (8 * i);
            k1 |= (long) Integer.parseInt(hex.substring(16 + 2 * i, 18 + 2 * i), 16) << (8 * i);
        }
        return new long[] {k0, k1};
    }

    private void warnIfOthersCanRead(CommandLine cl) {
        try {
            Set<PosixFilePermission> p = Files.getPosixFilePermissions(keyFile);
            if (p.contains(PosixFilePermission.GROUP_READ)
                    || p.contains(PosixFilePermission.OTHERS_READ)) {
                PrintWriter err = cl.getErr();
                err.println(
                        "warning: --key-file "
                                + keyFile
                                + " can be read by other users (chmod 600 "
                                + keyFile
                                + ")");
                err.flush();
            }
        } catch (IOException | UnsupportedOperationException e) {
            // not a POSIX file system: nothing to say
        }
    }
}
