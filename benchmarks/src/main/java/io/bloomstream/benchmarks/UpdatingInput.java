package io.bloomstream.benchmarks;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.FilterFunction;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;

/**
 * The updating input of {@link SqlBenchmark}'s {@code *_updating} queries: a generated retract
 * changelog, read by {@code fromChangelogStream} with {@code ChangelogMode.all()}, so that no
 * upstream operator keeps state (an upsert source's normalization, a {@code GROUP BY}) and the
 * measured state is the aggregate's alone.
 *
 * <p>For {@code n} values: logical rows {@code j} in [0, 2n), each {@code +I} of its own value
 * ({@link #valueOf}, all distinct), in order; every even row is deleted ({@code -D}) {@link #LAG}
 * rows after it was inserted (one delete after each pair of inserts; the last even rows, which no
 * later pair follows, are deleted at the end). So {@code 3n} changelog rows ({@link
 * #changelogRows}), and the {@code n} odd rows' values are present at the end: the exact distinct
 * count is {@code n}, and the state of {@code COUNT(DISTINCT)} holds {@code n} values, with up to
 * {@code LAG / 2} more during the run.
 */
final class UpdatingInput {

    /** How many logical rows after its insert an even row is deleted. */
    static final long LAG = 10_000;

    /** The changelog's row type: one BIGINT column {@code x}. */
    static final TypeInformation<Row> ROW_TYPE = Types.ROW_NAMED(new String[] {"x"}, Types.LONG);

    private UpdatingInput() {}

    /** The changelog rows for {@code n} values present at the end: {@code 3n}. */
    static long changelogRows(long n) {
        return 3 * n;
    }

    /**
     * Changelog row {@code i} (in [0, 3n)) for {@code n} values, deletes {@code lag} rows behind
     * (at most {@code 2n}; odd lags count as the even below): the logical row {@code j >= 0} it
     * inserts, or {@code -1 - j} for the row it deletes ({@link #deletedRow}).
     */
    static long entry(long i, long n, long lag) {
        long half = Math.min(lag / 2, n); // pairs inserted before the first delete
        long head = 2 * half;
        long middleEnd = head + 3 * (n - half);
        if (i < head) {
            return i;
        }
        if (i < middleEnd) {
            long k = i - head;
            long m = half + k / 3;
            long r = k % 3;
            return r < 2 ? 2 * m + r : -1 - 2 * (m - half);
        }
        // the tail: the even rows of the last `half` pairs, in order
        return -1 - (2 * (n - half) + 2 * (i - middleEnd));
    }

    /** The logical row a delete {@code entry} (negative) removes. */
    static long deletedRow(long entry) {
        return -1 - entry;
    }

    /**
     * The value of logical row {@code row}: MurmurHash3's 64-bit finalizer, a bijection, so every
     * row has its own value. Unlike {@link JobBenchmark#idOf} (a multiplication by an odd constant,
     * which keeps the parity of the index) its low bits do not follow the row's, so the deleted
     * (even) rows and the present (odd) ones fall into the same groups ({@link
     * SqlQueries#GROUP_OF_X}).
     */
    static long valueOf(long row) {
        long h = row;
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return h;
    }

    /**
     * The changelog for {@code n} values as a stream of rows, each changelog row's index first
     * through {@code stamp} (which drops the end markers, -1, the source emits past the last row).
     */
    static DataStream<Row> changelog(
            StreamExecutionEnvironment env, long n, FilterFunction<Long> stamp) {
        long rows = changelogRows(n);
        DataGeneratorSource<Long> source =
                new DataGeneratorSource<>(i -> i < rows ? i : -1L, Long.MAX_VALUE, Types.LONG);
        return env.fromSource(source, WatermarkStrategy.noWatermarks(), "changelog")
                .uid("changelog")
                .filter(stamp)
                .uid("real-rows")
                .name("real-rows")
                .map(new ToRow(n))
                .returns(ROW_TYPE)
                .uid("to-row")
                .name("to-row");
    }

    /** Changelog row index to its {@code +I} or {@code -D} row. */
    private static final class ToRow implements MapFunction<Long, Row> {
        private static final long serialVersionUID = 1L;
        private final long n;

        ToRow(long n) {
            this.n = n;
        }

        @Override
        public Row map(Long i) {
            long e = entry(i, n, LAG);
            return e >= 0
                    ? Row.ofKind(RowKind.INSERT, valueOf(e))
                    : Row.ofKind(RowKind.DELETE, valueOf(deletedRow(e)));
        }
    }
}
