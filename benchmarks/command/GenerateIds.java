import java.io.BufferedOutputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.SplittableRandom;

/**
 * Writes the command benchmark's input: {@code lines} lines over {@code distinct} ids of 16
 * lower-case hex characters, each id {@code lines / distinct} times or once more, in a shuffled
 * order fixed by the seed (the same bytes on every machine). Id {@code i} is the 64-bit mix of
 * {@code i} (a bijection, so the ids are distinct).
 *
 * <p>Run as a single-file program: {@code java GenerateIds.java DISTINCT LINES FILE [SEED]}.
 */
public final class GenerateIds {
    public static void main(String[] args) throws IOException {
        int distinct = Integer.parseInt(args[0]);
        int lines = Integer.parseInt(args[1]);
        long seed = args.length > 3 ? Long.parseLong(args[3]) : 42L;
        if (distinct < 1 || lines < distinct) {
            throw new IllegalArgumentException("need 1 <= DISTINCT <= LINES");
        }
        int[] order = new int[lines];
        for (int i = 0; i < lines; i++) {
            order[i] = i % distinct;
        }
        SplittableRandom random = new SplittableRandom(seed);
        for (int i = lines - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        byte[] hex = "0123456789abcdef".getBytes();
        byte[] line = new byte[17];
        line[16] = '\n';
        try (OutputStream out = new BufferedOutputStream(new FileOutputStream(args[2]), 1 << 20)) {
            for (int i = 0; i < lines; i++) {
                long v = mix(order[i]);
                for (int c = 15; c >= 0; c--) {
                    line[c] = hex[(int) (v & 15)];
                    v >>>= 4;
                }
                out.write(line);
            }
        }
    }

    /** SplitMix64's finalizer: a bijection on 64-bit values. */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}
