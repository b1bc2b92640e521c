package io.bloomstream.table.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.apache.flink.table.api.dataview.MapView;
import org.junit.jupiter.api.Test;

/**
 * Tests for {@link SqlDedupViews}: a key of layouts 2 to 5 moves to the entries of layout 6 whole,
 * once.
 */
class SqlDedupViewsTest {

    private final MapView<Integer, byte[]> oldMeta = new MapView<>();
    private final MapView<Long, byte[]> oldPages = new MapView<>();
    private final MapView<String, Boolean> oldExact = new MapView<>();
    private final MapView<Integer, byte[]> meta = new MapView<>();
    private final MapView<Long, byte[]> pages = new MapView<>();
    private final MapView<String, Boolean> exact = new MapView<>();
    private final SqlDedupViews views =
            new SqlDedupViews()
                    .bind(oldMeta, oldPages, oldExact, meta, pages, exact, new MapView<>());

    @Test
    void aKeyOfLayout5MovesWholeAndOnce() throws Exception {
        byte[] m = {9};
        byte[] config = SqlDedupLayout.encodeTimerConfig(30_000, 3);
        oldMeta.put(SqlDedupLayout.DEFERRED_META_KEY, m);
        oldMeta.put(SqlDedupLayout.TIMER_CONFIG_KEY, config);
        oldPages.put(7L, new byte[] {1, 2, 3, 4, 5, 6, 7, 8});
        oldExact.put(SqlDedupLayout.exactEntry(1, "a"), Boolean.TRUE);

        assertThat(views.moveFromLayout5()).isTrue();

        assertThat(meta.getMap())
                .containsOnlyKeys(
                        SqlDedupLayout.DEFERRED_META_KEY, SqlDedupLayout.TIMER_CONFIG_KEY);
        assertThat(meta.get(SqlDedupLayout.DEFERRED_META_KEY)).isEqualTo(m);
        assertThat(meta.get(SqlDedupLayout.TIMER_CONFIG_KEY)).isEqualTo(config);
        assertThat(pages.getMap()).containsOnlyKeys(7L);
        assertThat(exact.getMap()).isEqualTo(Map.of(SqlDedupLayout.exactEntry(1, "a"), true));
        assertThat(oldMeta.isEmpty()).isTrue();
        assertThat(oldPages.isEmpty()).isTrue();
        assertThat(oldExact.isEmpty()).isTrue();
        assertThat(views.moveFromLayout5()).as("nothing left to move").isFalse();
        assertThat(views.hasNoFilter()).isFalse();
    }

    @Test
    void aKeyWithoutOldStateMovesNothing() throws Exception {
        oldMeta.put(SqlDedupLayout.TIMER_CONFIG_KEY, new byte[12]); // no metadata: no filter
        assertThat(views.moveFromLayout5()).isFalse();
        assertThat(meta.isEmpty()).isTrue();
        assertThat(views.hasNoFilter()).isTrue();
    }
}
