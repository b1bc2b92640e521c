package io.bloomstream.table.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.apache.flink.table.api.dataview.MapView;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.Test;

/**
 * Tests for {@link SqlDedupLayout}: its versions, fixed for good, and the migrate switch of the row
 * (layouts 1 to 3).
 */
class SqlDedupLayoutTest {

    private final MapView<Long, long[]> oldPages = new MapView<>();
    private final MapView<Integer, byte[]> meta = new MapView<>();
    private final MapView<Long, byte[]> pages = new MapView<>();

    @Test
    void versionsNeverChange() {
        assertThat(
                        List.of(
                                SqlDedupLayout.VERSION_1,
                                SqlDedupLayout.VERSION_2,
                                SqlDedupLayout.VERSION_3,
                                SqlDedupLayout.VERSION_4,
                                SqlDedupLayout.VERSION_5,
                                SqlDedupLayout.VERSION_6,
                                SqlDedupLayout.CURRENT_VERSION,
                                SqlDedupLayout.ROW_MARKER))
                .containsExactly(1, 2, 3, 4, 5, 6, 6, 4);
        assertThat(
                        List.of(
                                SqlDedupLayout.META_STATE,
                                SqlDedupLayout.PAGES_STATE,
                                SqlDedupLayout.META_V2_STATE,
                                SqlDedupLayout.PAGES_V2_STATE,
                                SqlDedupLayout.EXACT_STATE,
                                SqlDedupLayout.META_V6_STATE,
                                SqlDedupLayout.PAGES_V6_STATE,
                                SqlDedupLayout.EXACT_V6_STATE,
                                SqlDedupLayout.PENDING_STATE))
                .containsExactly(
                        "bloom_meta",
                        "bloom_pages",
                        "bloom_meta_v2",
                        "bloom_pages_v2",
                        "bloom_exact",
                        "bloom_meta_v6",
                        "bloom_pages_v6",
                        "bloom_exact_v6",
                        "bloom_pending");
        String entry = SqlDedupLayout.exactEntry(45, "id-7");
        assertThat(entry).isEqualTo("-id-7"); // slot 45 is the char 45, a hyphen
        assertThat(SqlDedupLayout.slotOfExactEntry(entry)).isEqualTo(45);
        assertThat(
                        List.of(
                                SqlDedupLayout.META_KEY,
                                SqlDedupLayout.DEFERRED_META_KEY,
                                SqlDedupLayout.TIMER_CONFIG_KEY))
                .containsExactly(0, 1, 2);
    }

    @Test
    void version1MovesItsMetadataPagesAndConfigAndEmptiesTheRow() throws Exception {
        byte[] filter = {1, 2, 3};
        Row row = Row.of(filter, 30_000L, 3);
        oldPages.put(7L, new long[] {1, 2});
        assertThat(SqlDedupLayout.migrate(row, oldPages, meta, pages))
                .isEqualTo(SqlDedupLayout.VERSION_1);
        assertThat(meta.get(SqlDedupLayout.META_KEY)).isEqualTo(filter);
        assertThat(SqlDedupLayout.decode(pages.get(7L))).containsExactly(1, 2);
        assertThat(oldPages.isEmpty()).isTrue();
        byte[] config = meta.get(SqlDedupLayout.TIMER_CONFIG_KEY);
        assertThat(SqlDedupLayout.timerRetentionMillis(config)).isEqualTo(30_000L);
        assertThat(SqlDedupLayout.timerGenerations(config)).isEqualTo(3);
        assertThat(row).isEqualTo(Row.of(null, null, null));
        assertThat(SqlDedupLayout.versionOf(row)).isEqualTo(SqlDedupLayout.VERSION_4);
    }

    @Test
    void versions2And3MoveTheirConfigAndEmptyTheRow() throws Exception {
        Row plain = Row.of(null, 0L, 1);
        assertThat(SqlDedupLayout.migrate(plain, oldPages, meta, pages))
                .isEqualTo(SqlDedupLayout.VERSION_2);
        assertThat(meta.contains(SqlDedupLayout.TIMER_CONFIG_KEY)).as("no retention").isFalse();
        assertThat(plain).isEqualTo(Row.of(null, null, null));
        Row retained = Row.of(null, 60_000L, 2);
        SqlDedupLayout.migrate(retained, oldPages, meta, pages);
        assertThat(SqlDedupLayout.timerRetentionMillis(meta.get(SqlDedupLayout.TIMER_CONFIG_KEY)))
                .isEqualTo(60_000L);
        assertThat(retained).isEqualTo(Row.of(null, null, null));
    }

    @Test
    void aRowOfLayout4OrLaterIsLeftAsItIs() throws Exception {
        Row row = Row.of(null, null, SqlDedupLayout.ROW_MARKER);
        assertThat(SqlDedupLayout.migrate(row, oldPages, meta, pages))
                .isEqualTo(SqlDedupLayout.VERSION_4);
        assertThat(row).isEqualTo(Row.of(null, null, SqlDedupLayout.ROW_MARKER));
        assertThat(meta.isEmpty()).isTrue();
        assertThat(pages.isEmpty()).isTrue();
    }
}
