package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.filter.BloomFilter;
import io.bloomstream.filter.Estimate;
import io.bloomstream.filter.FilterSpec;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link BloomCountDistinct} in streaming SQL against the exact {@code COUNT(DISTINCT)}. */
class BloomCountDistinctITCase {

    @RegisterExtension static final MiniClusterExtension MINI_CLUSTER = SqlHarness.miniCluster();

    @Test
    void groupByPageMatchesExactCount() throws Exception {
        TableEnvironment env = SqlHarness.streaming("hashmap", 2);
        SqlHarness.createClicks(env, SqlHarness.clicksFile(), "");
        Map<List<Object>, Row> rows =
                SqlHarness.finalRows(
                        env.executeSql(
                                "SELECT page, BLOOM_COUNT_DISTINCT(`user`, 10000, 0.01),"
                                        + " COUNT(DISTINCT `user`) FROM clicks GROUP BY page"),
                        1);
        Map<String, Long> truth = SqlHarness.truth();
        Map<String, Set<String>> users = SqlHarness.usersPerPage(SqlHarness.clicks());
        FilterSpec spec = BloomArguments.spec("test", 10000, 0.01);
        assertThat(rows).hasSize(truth.size());
        for (Row r : rows.values()) {
            String page = (String) r.getField(0);
            long bloom = (Long) r.getField(1);
            long exact = (Long) r.getField(2);
            assertThat(exact).isEqualTo(truth.get(page));
            BloomFilter library = BloomFilter.create(spec);
            users.get(page).forEach(library::add);
            Estimate e = library.estimate();
            assertThat(bloom).as(page).isEqualTo(Math.round(e.estimate()));
            assertThat((double) Math.abs(bloom - exact))
                    .as(page)
                    .isLessThanOrEqualTo(3 * e.standardError() + 0.5);
        }
    }
}
