package io.bloomstream.table;

import io.bloomstream.flink.screen.ScreenFilterLoader;
import io.bloomstream.table.internal.FilterValues;
import io.bloomstream.table.internal.SqlArguments;
import io.bloomstream.table.internal.SqlArguments.Arg;
import io.bloomstream.table.internal.SqlArguments.Kind;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.catalog.DataTypeFactory;
import org.apache.flink.table.functions.ScalarFunction;
import org.apache.flink.table.types.inference.TypeInference;
import org.apache.flink.table.types.inference.TypeStrategies;

/**
 * {@code BLOOM_MIGHT_CONTAIN(filter, value)} -> BOOLEAN: whether {@code value} might be in {@code
 * filter}. FALSE is certain (no false negatives); TRUE is wrong with the filter's false-positive
 * rate for a value never added.
 *
 * <pre>{@code
 * SELECT * FROM mails WHERE BLOOM_MIGHT_CONTAIN('s3://lists/blocklist.bloom', sender);
 * SELECT e.* FROM events e, (SELECT BLOOM_BUILD(id, 100000, 0.01) AS f FROM seen) s
 *   WHERE NOT BLOOM_MIGHT_CONTAIN(s.f, e.id);
 * }</pre>
 *
 * <p>{@code filter} is BYTES in the library's binary format (from {@link BuildFilterAggFunction
 * BLOOM_BUILD}, {@link UnionAggFunction BLOOM_UNION} or a file's contents; decoded once and kept
 * while rows pass the same bytes), or a STRING path of a file written by {@code build-filter}, on
 * any Flink file system ({@code file://}, {@code s3://}, ...). The path must be a string literal,
 * checked when the query is planned: the TaskManagers open it with their credentials, so rows must
 * not choose it. A file is loaded once per task and cached, by its normalized path, for the job's
 * life (tasks of one TaskManager share one copy; at most {@value #MAX_FILES} files a call), with
 * the screen's checks: format, version, checksum, not a directory, readable; replacing the file
 * does not reload it (restart the job). A bad file or bad bytes fail the query with a message
 * naming the file or argument and the problem, never an answer; a file's bytes and size are never
 * quoted. Bloom, counting and scalable filters are all accepted; keyed (SipHash) filters are not
 * (SQL has no key).
 *
 * <p>{@code value} is hashed by type, as the filter was built: a STRING as UTF-8, an integer as its
 * 64-bit value, BYTES as they are. {@code build-filter} files hold text lines: probe them with a
 * STRING (for example {@code CAST(id AS STRING)}). A STRING is first normalized as the filter
 * records ({@code build-filter --normalize}, default lowercase): a value unusable under it (an
 * e-mail normalization of a value without {@code @}) was never added and gives FALSE. NULL filter
 * or value gives NULL.
 *
 * <p>The function declares itself non-deterministic, so the planner never evaluates it on the
 * client, even when all its arguments are literals.
 */
@PublicEvolving
public class MightContainScalarFunction extends ScalarFunction {

    private static final long serialVersionUID = 1L;

    /** The SQL name. */
    public static final String NAME = "BLOOM_MIGHT_CONTAIN";

    /** The most filter files one call of the function reads (a literal path: one). */
    static final int MAX_FILES = 8;

    private transient FilterValues filters;
    private transient Map<String, ScreenFilterLoader.Loaded> files; // by normalized path
    private transient String lastPath; // as the rows spell it
    private transient ScreenFilterLoader.Loaded last;

    /** Whether {@code value} might be in {@code filter} (BYTES, or the path of a filter file). */
    public Boolean eval(Object filter, Object value) {
        if (filter == null || value == null) {
            return null;
        }
        if (filter instanceof String path) {
            ScreenFilterLoader.Loaded file = file(path);
            return FilterValues.Decoded.mightContain(file.reader(), file.normalization(), value);
        }
        if (filters == null) {
            filters = new FilterValues(NAME);
        }
        return filters.get((byte[]) filter).mightContain(value);
    }

    /**
     * The file of {@code path}, loaded once per normalized path ({@link
     * ScreenFilterLoader#normalizedPath}: {@code /a/./b}, {@code /a//b} and {@code file:///a/b} are
     * one file), at most {@link #MAX_FILES} of them. The path is a literal, so every row passes the
     * same string: it is normalized once.
     */
    private ScreenFilterLoader.Loaded file(String path) {
        if (path.equals(lastPath)) {
            return last;
        }
        if (files == null) {
            files = new HashMap<>();
        }
        try {
            String key = ScreenFilterLoader.normalizedPath(path);
            ScreenFilterLoader.Loaded loaded = files.get(key);
            if (loaded == null) {
                if (files.size() >= MAX_FILES) {
                    throw new IllegalArgumentException(
                            NAME
                                    + ": cannot use filter file "
                                    + path
                                    + ": a call reads at most "
                                    + MAX_FILES
                                    + " filter files, and this would be one more than "
                                    + MAX_FILES
                                    + " filter files (the path must be a literal)");
                }
                loaded = ScreenFilterLoader.loadAsRecorded(path);
                files.put(key, loaded);
            }
            lastPath = path;
            last = loaded;
            return loaded;
        } catch (ScreenFilterLoader.BadFilterFileException e) {
            // No cause: the message says it all, and a client shows the root cause's message,
            // which would otherwise be the screen's wording rather than the function's.
            throw new IllegalArgumentException(
                    NAME + ": cannot use filter file " + path + ": " + e.problem());
        }
    }

    /**
     * False: the answer for a path depends on a file the tasks read, so the planner must not fold a
     * call with literal arguments on the client (which may not see the file).
     */
    @Override
    public boolean isDeterministic() {
        return false;
    }

    @Override
    public void close() {
        if (files != null) {
            files.values().forEach(ScreenFilterLoader.Loaded::release);
            files = null;
        }
        lastPath = null;
        last = null;
    }

    @Override
    public TypeInference getTypeInference(DataTypeFactory typeFactory) {
        return TypeInference.newBuilder()
                .inputTypeStrategy(
                        SqlArguments.strategy(
                                NAME,
                                2,
                                new Arg("filter", Kind.FILTER_OR_PATH),
                                new Arg("value", Kind.VALUE)))
                .outputTypeStrategy(TypeStrategies.explicit(DataTypes.BOOLEAN()))
                .build();
    }
}
