package io.bloomstream.flink.screen;

import io.bloomstream.filter.Hasher;
import io.bloomstream.filter.Normalization;
import io.bloomstream.flink.internal.RejectLog;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.BroadcastState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeutils.base.BooleanSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.runtime.execution.SuppressRestartsException;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.co.BroadcastProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;
import org.apache.flink.util.function.SerializableFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The screening function: checks the configured fields of each event against the filter file in
 * force and an exact overlay of live adds and removes. Clean events go to the main output, flagged
 * ones to the flagged side output, events with a field missing to the rejected side output. Use it
 * through {@link BloomScreen}.
 *
 * <p>State: only the broadcast state of the commands (the path, version and checksum of the file in
 * force, the last command's sequence number, and the overlay of entries added or removed since it
 * was loaded) is checkpointed; the filter is loaded from the file, in {@code open()} and on a load
 * command, and shared with the other tasks of the JVM ({@link SharedFilters}). A restore that finds
 * another file at the path (another checksum) fails without restarts.
 *
 * @param <T> the event type
 */
@Internal
public class ScreenFunction<T> extends BroadcastProcessFunction<T, FilterUpdate, T>
        implements CheckpointedFunction {

    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(ScreenFunction.class);

    /** Broadcast state of the live overlay: entry to listed (added) or not (removed). */
    public static final MapStateDescriptor<String, Boolean> OVERLAY_STATE =
            new MapStateDescriptor<>(
                    "bloom-screen-overlay", StringSerializer.INSTANCE, BooleanSerializer.INSTANCE);

    /**
     * Broadcast state of the file in force: keys {@code path} and {@code version}; since 0.3 also
     * {@code checksum}, the file's CRC32C trailer when it was loaded (8 hex digits), and {@code
     * sequence}, the last command processed.
     */
    public static final MapStateDescriptor<String, String> FILTER_STATE =
            new MapStateDescriptor<>(
                    "bloom-screen-filter", StringSerializer.INSTANCE, StringSerializer.INSTANCE);

    private static final String PATH = "path";
    private static final String FILE_VERSION = "version";
    private static final String SEQUENCE = "sequence";
    private static final String CHECKSUM = "checksum";

    private final ScreenConfig<T> config;
    private final OutputTag<ScreenMatch<T>> flagged;
    private final OutputTag<T> rejected;

    private transient String[] fieldNames;
    private transient SerializableFunction<T, String>[] fields;
    private transient Normalization normalization;
    private transient Hasher hasher;
    private transient BroadcastState<String, Boolean> overlay;
    private transient BroadcastState<String, String> inForce;
    private transient int overlaySize;
    private transient ScreenFilterLoader.Loaded loaded;
    private transient ScreenMetrics metrics;
    private transient RejectLog rejectLog;

    ScreenFunction(
            ScreenConfig<T> config, OutputTag<ScreenMatch<T>> flagged, OutputTag<T> rejected) {
        this.config = Objects.requireNonNull(config, "config");
        this.flagged = Objects.requireNonNull(flagged, "flagged");
        this.rejected = Objects.requireNonNull(rejected, "rejected");
    }

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        overlay = context.getOperatorStateStore().getBroadcastState(OVERLAY_STATE);
        inForce = context.getOperatorStateStore().getBroadcastState(FILTER_STATE);
        String version = inForce.get(FILE_VERSION);
        if (version == null || Long.parseLong(version) < config.initialVersion()) {
            if (version != null) {
                LOG.info(
                        "Restored filter version {} is older than the configured {}: loading {}"
                                + " and dropping the live updates of the old version",
                        version,
                        config.initialVersion(),
                        config.filterPath());
            }
            inForce.put(PATH, config.filterPath());
            inForce.put(FILE_VERSION, Long.toString(config.initialVersion()));
            inForce.remove(CHECKSUM);
            overlay.clear();
        } else if (!inForce.get(PATH).equals(config.filterPath())) {
            LOG.warn(
                    "Restored filter version {} ({}) stays in force over the configured {}"
                            + " (version {}); configure a higher initial version to switch",
                    version,
                    inForce.get(PATH),
                    config.filterPath(),
                    config.initialVersion());
        }
        overlaySize = 0;
        for (Map.Entry<String, Boolean> ignored : overlay.entries()) {
            overlaySize++;
        }
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) {
        // The broadcast state is snapshotted by Flink; the filter itself is never checkpointed.
    }

    @Override
    @SuppressWarnings("unchecked")
    public void open(OpenContext openContext) throws Exception {
        metrics = new ScreenMetrics(getRuntimeContext().getMetricGroup());
        rejectLog = new RejectLog(LOG, ScreenMetrics.REJECTED);
        normalization = config.normalization();
        hasher = config.hasher();
        List<String> names = config.fieldNames();
        fieldNames = names.toArray(new String[0]);
        fields = config.fields().toArray(new SerializableFunction[0]);
        String path = inForce.get(PATH);
        long version = Long.parseLong(inForce.get(FILE_VERSION));
        String checksum = inForce.get(CHECKSUM);
        try {
            loaded = ScreenFilterLoader.load(path, version, checksum, normalization, hasher);
        } catch (ScreenFilterLoader.BadFilterFileException e) {
            if (e.permanent()) {
                // Restarting cannot fix a missing, bad or changed file: fail, do not loop.
                throw new SuppressRestartsException(e);
            }
            throw e;
        }
        if (checksum == null) {
            inForce.put(CHECKSUM, loaded.checksum());
        }
        metrics.filterInForce(loaded);
        metrics.overlayEntries(overlaySize);
        String sequence = inForce.get(SEQUENCE);
        metrics.commandSequence(sequence == null ? 0 : Long.parseLong(sequence));
        LOG.info(
                "Screening {} with filter version {} from {} ({} bytes, checksum {}, expected rate"
                        + " {}), {} live updates",
                names,
                version,
                path,
                loaded.bytes(),
                loaded.checksum(),
                loaded.filter().expectedFpp(),
                overlaySize);
    }

    @Override
    public void processElement(T event, ReadOnlyContext ctx, Collector<T> out) throws Exception {
        metrics.screened.inc();
        String missing = null;
        for (int i = 0; i < fields.length; i++) {
            String value = normalization.apply(fields[i].apply(event));
            if (value == null) {
                if (missing == null) {
                    missing = fieldNames[i];
                }
            } else if (listed(value)) {
                metrics.flagged.inc();
                ctx.output(flagged, new ScreenMatch<>(event, fieldNames[i], value));
                return;
            }
        }
        if (missing != null) {
            // Not proven clean: a missing field could have matched.
            reject(event, ctx, missing);
            return;
        }
        out.collect(event);
    }

    /** The overlay decides entries added or removed live; the filter decides the rest. */
    private boolean listed(String value) throws Exception {
        if (overlaySize > 0) {
            Boolean live = overlay.get(value);
            if (live != null) {
                return live;
            }
        }
        return loaded.reader().mightContain(value);
    }

    @Override
    public void processBroadcastElement(FilterUpdate command, Context ctx, Collector<T> out)
            throws Exception {
        if (command == null || command.type == null || command.value == null) {
            commandError(command, "incomplete command");
            return;
        }
        if (command.sequence <= 0) {
            // Only the screen's single producer numbers commands; without it tasks could diverge.
            commandError(
                    command,
                    "not numbered by the screen's command producer: commands must reach the"
                            + " screen through BloomScreen, which gives every task one order");
            return;
        }
        sequenced(command.sequence);
        switch (command.type) {
            case ADD:
            case REMOVE:
                String entry = normalization.apply(command.value);
                if (entry == null) {
                    commandError(command, "the entry is empty or unusable under " + normalization);
                    return;
                }
                if (overlay.get(entry) == null) {
                    overlaySize++;
                }
                overlay.put(entry, command.type == FilterUpdate.Type.ADD);
                break;
            case LOAD:
                if (!load(command)) {
                    return;
                }
                break;
            default:
                throw new IllegalStateException("unknown command type " + command.type);
        }
        metrics.overlayEntries(overlaySize);
        commandApplied(command);
    }

    private boolean load(FilterUpdate command) throws Exception {
        if (command.version <= loaded.version()) {
            commandError(
                    command,
                    "stale: version " + command.version + " is not above " + loaded.version());
            return false;
        }
        ScreenFilterLoader.Loaded next;
        try {
            next =
                    ScreenFilterLoader.load(
                            command.value, command.version, null, normalization, hasher);
        } catch (ScreenFilterLoader.BadFilterFileException e) {
            if (!e.permanent()) {
                // A transient read error: fail, so the restart replays the command and every
                // task ends on the same version.
                throw e;
            }
            metrics.loadErrors.inc();
            LOG.error(
                    "Rejected filter version {}; version {} stays in force. {}",
                    command.version,
                    loaded.version(),
                    e.getMessage(),
                    e);
            return false;
        }
        ScreenFilterLoader.Loaded previous = loaded;
        loaded = next; // one assignment in the task thread: events see the old or the new file
        previous.lease().close();
        inForce.put(PATH, next.path());
        inForce.put(FILE_VERSION, Long.toString(next.version()));
        inForce.put(CHECKSUM, next.checksum());
        overlay.clear(); // the new file is the whole list
        overlaySize = 0;
        metrics.filterInForce(next);
        LOG.info(
                "Filter version {} in force: {} ({} bytes, checksum {})",
                next.version(),
                next.path(),
                next.bytes(),
                next.checksum());
        return true;
    }

    private void sequenced(long sequence) throws Exception {
        String last = inForce.get(SEQUENCE);
        if (last != null && sequence <= Long.parseLong(last)) {
            LOG.warn(
                    "Screen command #{} after #{}: the command producer restarted without its"
                            + " state, or commands are replayed (at-least-once checkpoints)",
                    sequence,
                    last);
        }
        inForce.put(SEQUENCE, Long.toString(sequence));
        metrics.commandSequence(sequence);
    }

    @Override
    public void close() throws Exception {
        if (loaded != null) {
            loaded.lease().close(); // the last task of this JVM to let go frees the filter
            loaded = null;
        }
        super.close();
    }

    /** The metrics (for tests). */
    ScreenMetrics metrics() {
        return metrics;
    }

    /** The filter in force (for tests). */
    io.bloomstream.filter.MembershipFilter filterInForce() {
        return loaded.filter();
    }

    /** Called after a command took effect in this task (a hook for subclasses and tests). */
    protected void commandApplied(FilterUpdate command) {}

    private void commandError(FilterUpdate command, String problem) {
        metrics.commandErrors.inc();
        LOG.warn("Ignored screen command '{}': {}", command, problem);
    }

    private void reject(T event, ReadOnlyContext ctx, String field) {
        metrics.rejected.inc();
        ctx.output(rejected, event);
        rejectLog.rejected(
                metrics.rejected.getCount(), "field " + field + " missing or unusable", event);
    }
}
