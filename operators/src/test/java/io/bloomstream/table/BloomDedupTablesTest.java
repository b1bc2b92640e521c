package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomstream.flink.TimeDomain;
import io.bloomstream.flink.dedup.DedupConfig;
import java.time.Duration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.Test;

/** Tests for {@link BloomDedupTables}' refusals, at planning time (no job runs). */
class BloomDedupTablesTest {

    private static final DedupConfig CONFIG = DedupConfig.builder().expectedItems(100).build();

    private final StreamTableEnvironment t =
            StreamTableEnvironment.create(StreamExecutionEnvironment.getExecutionEnvironment());

    private Table table() {
        return t.fromValues(
                DataTypes.ROW(
                        DataTypes.FIELD("id", DataTypes.STRING()),
                        DataTypes.FIELD("score", DataTypes.DOUBLE()),
                        DataTypes.FIELD("code", DataTypes.BYTES())),
                Row.of("a", 1.0, new byte[] {1}));
    }

    @Test
    void refusesAnIdColumnOfAnotherTypeNamingItAndTheType() {
        assertThatThrownBy(() -> BloomDedupTables.dedup(t, table(), "score", CONFIG))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("score")
                .hasMessageContaining("DOUBLE")
                .hasMessageContaining("STRING, BYTES or integer");
    }

    @Test
    void refusesAnIdColumnTheTableDoesNotHave() {
        assertThatThrownBy(() -> BloomDedupTables.dedup(t, table(), "user", CONFIG))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("user")
                .hasMessageContaining("[id, score, code]");
    }

    @Test
    void refusesAnUpdatingTable() {
        Table counts =
                table().groupBy(org.apache.flink.table.api.Expressions.$("id"))
                        .select(
                                org.apache.flink.table.api.Expressions.$("id"),
                                org.apache.flink.table.api.Expressions.$("score").count().as("n"));
        assertThatThrownBy(() -> BloomDedupTables.dedup(t, counts, "id", CONFIG))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("insert-only");
    }

    @Test
    void refusesEventTimeWithoutARowtime() {
        DedupConfig eventTime =
                DedupConfig.builder()
                        .expectedItems(100)
                        .retention(Duration.ofMinutes(5), TimeDomain.EVENT_TIME)
                        .build();
        assertThatThrownBy(() -> BloomDedupTables.dedup(t, table(), "id", eventTime))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("rowtime");
    }

    @Test
    void refusesABlankUid() {
        assertThatThrownBy(() -> BloomDedupTables.withUidPrefix(" "))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
