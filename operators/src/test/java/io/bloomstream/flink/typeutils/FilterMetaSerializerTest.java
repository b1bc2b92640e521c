package io.bloomstream.flink.typeutils;

import io.bloomstream.flink.state.FilterMeta;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.typeutils.SerializerTestBase;
import org.apache.flink.api.common.typeutils.TypeSerializer;

/** Tests for {@link FilterMetaSerializer}. */
class FilterMetaSerializerTest extends SerializerTestBase<FilterMeta> {

    @Override
    protected TypeSerializer<FilterMeta> createSerializer() {
        return FilterMetaSerializer.INSTANCE;
    }

    @Override
    protected int getLength() {
        return -1;
    }

    @Override
    protected Class<FilterMeta> getTypeClass() {
        return FilterMeta.class;
    }

    @Override
    protected FilterMeta[] getTestData() {
        List<List<FilterMeta.Stage>> two = new ArrayList<>();
        List<FilterMeta.Stage> first = new ArrayList<>();
        first.add(new FilterMeta.Stage(9728, 7, 512, 1000, 1000));
        first.add(new FilterMeta.Stage(21504, 7, 512, 2000, 17, FilterMeta.UNKNOWN_PAGES));
        two.add(first);
        two.add(new ArrayList<>());
        List<List<FilterMeta.Stage>> one = new ArrayList<>();
        one.add(new ArrayList<>(List.of(new FilterMeta.Stage(1L << 33, 13, 0, 1L << 28, 5))));
        List<List<FilterMeta.Stage>> ranged = new ArrayList<>();
        ranged.add(new ArrayList<>(List.of(new FilterMeta.Stage(4096, 7, 2048, 300, 12, 3, 81))));
        ranged.add(new ArrayList<>());
        FilterMeta counted =
                new FilterMeta(
                        1,
                        42,
                        FilterMeta.DOMAIN_EVENT_TIME,
                        10_000,
                        4_321,
                        new long[] {-3, FilterMeta.EMPTY},
                        new long[] {5, FilterMeta.EMPTY},
                        ranged);
        counted.countedBy = -77;
        return new FilterMeta[] {
            new FilterMeta(1, 42, new long[] {7, FilterMeta.EMPTY}, two),
            new FilterMeta(2, -1, new long[] {0}, one),
            counted
        };
    }
}
