package io.bloomstream.testing;

import java.lang.management.ManagementFactory;
import java.util.zip.CRC32C;

/**
 * The invariants every fuzz test of a decoder checks for each input (issue 20, item 7): the input
 * is decoded, or refused with the decoder's documented exception and nothing else; the heap
 * allocated stays within a small multiple of the input's length plus a fixed allowance; and the CPU
 * time stays within a small bound. A broken invariant throws {@link AssertionError}, which Jazzer
 * reports as a finding and keeps as a crashing input.
 *
 * <p>Allocation is the current thread's own count ({@link Allocations}), CPU time the current
 * thread's ({@code ThreadMXBean#getCurrentThreadCpuTime}): neither counts another thread's work, so
 * a busy machine does not make an input fail.
 */
public final class FuzzBudget {

    /**
     * How long each fuzz target fuzzes under the {@code fuzz} and {@code explore} profiles
     * (Jazzer's {@code maxDuration}: one constant, since an annotation takes no run-time value). A
     * longer search is another run: the corpus grown in {@code operators/.cifuzz-corpus/} carries
     * over.
     */
    public static final String DURATION = "4m";

    /** CPU time an action may take: inputs are kilobytes, the work microseconds. */
    public static final long CPU_NANOS = 2_000_000_000L;

    private static final java.lang.management.ThreadMXBean THREADS =
            ManagementFactory.getThreadMXBean();

    private final long bytesPerInputByte;
    private final long fixedBytes;

    /**
     * A budget of {@code bytesPerInputByte} times the input's length plus {@code fixedBytes} (the
     * decoder's own objects, an exception and its message).
     */
    public FuzzBudget(long bytesPerInputByte, long fixedBytes) {
        this.bytesPerInputByte = bytesPerInputByte;
        this.fixedBytes = fixedBytes;
    }

    /** Code that returns a value or throws anything. */
    @FunctionalInterface
    public interface Action<T> {
        T run() throws Throwable;
    }

    /**
     * Runs {@code action} on {@code input} within the budget.
     *
     * @param refusal the one exception type that refuses an input (and its subtypes), or null if
     *     the action must not throw at all
     * @return the action's value, or null if it refused the input
     * @throws AssertionError if it threw anything else, or went over the budget
     */
    public <T> T run(
            String what, byte[] input, Class<? extends Throwable> refusal, Action<T> action) {
        Allocations.measure(action::run); // the first execution links what it meets
        long cpu = THREADS.getCurrentThreadCpuTime();
        Object[] result = new Object[1];
        Allocations.Measured m = Allocations.measure(() -> result[0] = action.run());
        cpu = THREADS.getCurrentThreadCpuTime() - cpu;
        long allowed = bytesPerInputByte * input.length + fixedBytes;
        if (m.bytes() > allowed) {
            throw new AssertionError(
                    what
                            + " allocated "
                            + m.bytes()
                            + " bytes for "
                            + input.length
                            + " input bytes (allowed "
                            + allowed
                            + ")",
                    m.thrown());
        }
        if (cpu > CPU_NANOS) {
            throw new AssertionError(
                    what + " took " + cpu / 1_000_000 + " ms of CPU on " + input.length + " bytes",
                    m.thrown());
        }
        if (m.thrown() != null) {
            if (refusal != null && refusal.isInstance(m.thrown())) {
                return null;
            }
            throw new AssertionError(
                    what
                            + " threw "
                            + m.thrown()
                            + (refusal == null
                                    ? " (it must not throw)"
                                    : " (only " + refusal.getName() + " refuses)"),
                    m.thrown());
        }
        @SuppressWarnings("unchecked")
        T value = (T) result[0];
        return value;
    }

    /**
     * A copy of {@code data} whose last 4 bytes are the CRC32C of the others, as the filter format
     * requires: so a fuzzer explores what lies past the checksum instead of failing it every time.
     */
    public static byte[] withValidChecksum(byte[] data) {
        byte[] bytes = data.clone();
        if (bytes.length >= 4) {
            CRC32C crc = new CRC32C();
            crc.update(bytes, 0, bytes.length - 4);
            java.nio.ByteBuffer.wrap(bytes).putInt(bytes.length - 4, (int) crc.getValue());
        }
        return bytes;
    }
}
