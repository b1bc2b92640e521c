package io.bloomstream.flink.screen;

import io.bloomstream.filter.Hasher;
import io.bloomstream.filter.Normalization;
import io.bloomstream.flink.internal.OperatorUids;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.util.function.SerializableFunction;

/**
 * The configuration of a screen ({@link BloomScreen}): the filter file, the fields of an event to
 * check, how their values are normalized and which hash the file must have been built with.
 * Immutable and validated; build it with {@link #builder()}.
 *
 * @param <T> the event type
 */
@PublicEvolving
public final class ScreenConfig<T> implements Serializable {

    private static final long serialVersionUID = 1L;

    /** Default normalization of screened values: {@link Normalization#LOWERCASE}. */
    public static final Normalization DEFAULT_NORMALIZATION = Normalization.LOWERCASE;

    /** The version number of the initial filter file unless set. */
    public static final long DEFAULT_INITIAL_VERSION = 1;

    private final String filterPath;
    private final long initialVersion;
    private final Normalization normalization;
    private final List<String> fieldNames;
    private final List<SerializableFunction<T, String>> fields;
    private final long seed;
    private final long sipK0;
    private final long sipK1;
    private final boolean sipHash;
    private final String uidPrefix;

    private ScreenConfig(Builder<T> b) {
        this.filterPath = b.filterPath;
        this.initialVersion = b.initialVersion;
        this.normalization = b.normalization;
        this.fieldNames = List.copyOf(b.fields.keySet());
        this.fields = Collections.unmodifiableList(new ArrayList<>(b.fields.values()));
        this.seed = b.seed;
        this.sipHash = b.sipHash;
        this.sipK0 = b.sipK0;
        this.sipK1 = b.sipK1;
        this.uidPrefix = b.uidPrefix;
    }

    /** A builder with the defaults. */
    public static <T> Builder<T> builder() {
        return new Builder<>();
    }

    /** The initial filter file (any Flink file system URI: file://, s3://, hdfs://). */
    public String filterPath() {
        return filterPath;
    }

    /**
     * The version number of {@link #filterPath()}. On restore, a state that holds an older version
     * than this gives way to this file (so a redeploy with a new file and a higher version takes
     * effect); otherwise the restored version and its updates stay in force.
     */
    public long initialVersion() {
        return initialVersion;
    }

    /** How screened values and live updates are normalized; the file must record the same. */
    public Normalization normalization() {
        return normalization;
    }

    /** The names of the screened fields, in the order they are checked. */
    public List<String> fieldNames() {
        return fieldNames;
    }

    /** The field extractors, in the order of {@link #fieldNames()}. */
    List<SerializableFunction<T, String>> fields() {
        return fields;
    }

    /** The hasher the filter file must have been built with. */
    public Hasher hasher() {
        return sipHash ? Hasher.sipHash24(sipK0, sipK1) : Hasher.xxh3(seed);
    }

    /**
     * The uid and name of the screen operator, and the prefix of the helper operators it adds
     * (default {@link BloomScreen#DEFAULT_UID}); see {@link BloomScreen}.
     */
    public String uidPrefix() {
        return uidPrefix;
    }

    @Override
    public String toString() {
        return "ScreenConfig{filterPath="
                + filterPath
                + ", initialVersion="
                + initialVersion
                + ", normalization="
                + normalization
                + ", fields="
                + fieldNames
                + ", hasher="
                + (sipHash ? "SIPHASH_2_4 (keyed)" : "XXH3_128 seed " + seed)
                + ", uidPrefix="
                + uidPrefix
                + "}";
    }

    /** Builds a {@link ScreenConfig}; each setter checks its argument, {@link #build} the rest. */
    public static final class Builder<T> {
        private String filterPath;
        private long initialVersion = DEFAULT_INITIAL_VERSION;
        private Normalization normalization = DEFAULT_NORMALIZATION;
        private final Map<String, SerializableFunction<T, String>> fields = new LinkedHashMap<>();
        private long seed = Hasher.DEFAULT_SEED;
        private boolean sipHash;
        private long sipK0;
        private long sipK1;
        private String uidPrefix = BloomScreen.DEFAULT_UID;

        private Builder() {}

        /** The filter file (required). */
        public Builder<T> filterPath(String filterPath) {
            Objects.requireNonNull(filterPath, "filterPath");
            if (filterPath.isBlank()) {
                throw new IllegalArgumentException("filterPath must not be blank");
            }
            this.filterPath = filterPath;
            return this;
        }

        /** The version number of the filter file (default 1, at least 0). */
        public Builder<T> initialVersion(long initialVersion) {
            if (initialVersion < 0) {
                throw new IllegalArgumentException(
                        "initialVersion must be >= 0, was " + initialVersion);
            }
            this.initialVersion = initialVersion;
            return this;
        }

        /** How values are normalized (default {@link #DEFAULT_NORMALIZATION}). */
        public Builder<T> normalization(Normalization normalization) {
            this.normalization = Objects.requireNonNull(normalization, "normalization");
            return this;
        }

        /**
         * Screens the field {@code name}, extracted by {@code extractor} (null means the event
         * lacks the field). At least one field; an event is flagged when any field matches.
         */
        public Builder<T> field(String name, SerializableFunction<T, String> extractor) {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(extractor, "extractor");
            if (fields.containsKey(name)) {
                throw new IllegalArgumentException("field '" + name + "' given twice");
            }
            fields.put(name, extractor);
            return this;
        }

        /** The XXH3 seed the file was built with (default {@link Hasher#DEFAULT_SEED}). */
        public Builder<T> seed(long seed) {
            this.seed = seed;
            this.sipHash = false;
            return this;
        }

        /**
         * The file was built with keyed SipHash-2-4 and this key (the key travels in the job graph;
         * keep the job's configuration private).
         */
        public Builder<T> sipHashKey(long k0, long k1) {
            this.sipHash = true;
            this.sipK0 = k0;
            this.sipK1 = k1;
            return this;
        }

        /**
         * The uid and name of the screen operator; helper operators get this prefix and a suffix
         * (default {@link BloomScreen#DEFAULT_UID}, which keeps the uids of earlier releases). Give
         * each screen of a job its own prefix.
         *
         * @throws IllegalArgumentException if the prefix is blank
         */
        public Builder<T> uidPrefix(String uidPrefix) {
            this.uidPrefix = OperatorUids.checkPrefix(uidPrefix);
            return this;
        }

        /**
         * The config.
         *
         * @throws IllegalStateException if the filter path or every field is missing
         */
        public ScreenConfig<T> build() {
            if (filterPath == null) {
                throw new IllegalStateException("filterPath is required");
            }
            if (fields.isEmpty()) {
                throw new IllegalStateException("at least one field to screen is required");
            }
            return new ScreenConfig<>(this);
        }
    }
}
