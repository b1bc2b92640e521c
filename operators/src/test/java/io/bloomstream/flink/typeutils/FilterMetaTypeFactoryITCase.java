package io.bloomstream.flink.typeutils;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.flink.IdSelector;
import io.bloomstream.flink.dedup.BloomDedup;
import io.bloomstream.flink.dedup.DedupConfig;
import io.bloomstream.testing.Backend;
import io.bloomstream.testing.MiniClusters;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tests for {@link FilterMetaTypeFactory}: Flink's SQL {@code savepoint} connector reads a global
 * dedup's {@code bloom-meta} through it into a column of any name, on both Flink lines (the
 * flink-2.2 module runs this class on 2.2, whose connector cannot read the metadata without it).
 *
 * <p>The source repeats 500 distinct ids without end; the savepoint is taken once all 500 have
 * passed. With {@code fpp} 1e-6 and the fixed seed no id of these 500 is a false positive (the
 * chance is about 5e-4, and fixed by the ids), so the filters took in exactly 500 items.
 */
class FilterMetaTypeFactoryITCase {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = MiniClusters.twoTaskManagers();

    private static final int DISTINCT = 500;

    private static final int SHARDS = 8;

    private static volatile CountDownLatch passed = new CountDownLatch(DISTINCT);

    @Test
    void theConnectorReadsTheMetadataIntoAColumnOfAnyName(@TempDir Path tmp) throws Exception {
        passed = new CountDownLatch(DISTINCT);
        Configuration conf = Backend.HEAP.jobConfig();
        conf.set(CoreOptions.DEFAULT_PARALLELISM, 2);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        GeneratorFunction<Long, String> id = i -> "id-" + (i % DISTINCT);
        DedupConfig config =
                DedupConfig.builder().expectedItems(10_000).fpp(1e-6).shards(SHARDS).build();
        BloomDedup.global(
                        env.fromSource(
                                        new DataGeneratorSource<>(
                                                id,
                                                Long.MAX_VALUE,
                                                RateLimiterStrategy.perSecond(5_000),
                                                Types.STRING),
                                        WatermarkStrategy.noWatermarks(),
                                        "ids")
                                .uid("ids"),
                        IdSelector.ofString(s -> s),
                        config)
                .sinkTo(new CountingSink());
        JobClient job = env.executeAsync("filter-meta-type-factory");
        assertThat(passed.await(2, TimeUnit.MINUTES)).as("every distinct id passed").isTrue();
        String savepoint =
                job.stopWithSavepoint(false, tmp.toUri().toString(), SavepointFormatType.CANONICAL)
                        .get(2, TimeUnit.MINUTES);

        TableEnvironment sql = TableEnvironment.create(EnvironmentSettings.inBatchMode());
        sql.getConfig().set("pipeline.generic-types", "false");
        sql.executeSql(
                "CREATE TABLE dedup_state (shard INT, meta ROW<strategyId INT, slots"
                        + " ARRAY<ARRAY<ROW<itemsAdded BIGINT, pages BIGINT>>>>, PRIMARY KEY"
                        + " (shard) NOT ENFORCED) WITH ('connector' = 'savepoint', 'state.path' = '"
                        + savepoint
                        + "', 'operator.uid' = 'bloom-dedup', 'fields.meta.state-name' ="
                        + " 'bloom-meta', 'fields.meta.value-type-factory' = '"
                        + FilterMetaTypeFactory.class.getName()
                        + "')");
        List<Row> rows = new ArrayList<>();
        try (CloseableIterator<Row> it =
                sql.executeSql(
                                "SELECT COUNT(DISTINCT d.shard), MIN(d.shard), MAX(d.shard),"
                                        + " SUM(g.itemsAdded), MIN(g.pages) FROM dedup_state AS d"
                                        + " CROSS JOIN UNNEST(d.meta.slots) AS s(stages) CROSS"
                                        + " JOIN UNNEST(s.stages) AS g(itemsAdded, pages)")
                        .collect()) {
            it.forEachRemaining(rows::add);
        }
        // 500 ids reach all 8 shards but with a chance of 8 (7/8)^500, about 1e-28
        assertThat(rows).containsExactly(Row.of(8L, 0, SHARDS - 1, (long) DISTINCT, 1L));
    }

    /** Counts the ids that passed (the mini cluster runs in this JVM). */
    static final class CountingSink implements Sink<String> {
        @Override
        public SinkWriter<String> createWriter(WriterInitContext context) {
            return new SinkWriter<>() {
                @Override
                public void write(String element, Context context) {
                    passed.countDown();
                }

                @Override
                public void flush(boolean endOfInput) {}

                @Override
                public void close() {}
            };
        }
    }
}
