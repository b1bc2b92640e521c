package io.bloomstream.flink.internal;

import org.apache.flink.api.common.typeutils.SerializerTestBase;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;

/**
 * Tests for {@link HashedEventTypeInfo.Serializer}: Flink's serializer contract (copies, round
 * trips, duplicates, snapshots and their restore), with events of every validity.
 */
class HashedEventSerializerTest extends SerializerTestBase<HashedEvent<String>> {

    @Override
    protected TypeSerializer<HashedEvent<String>> createSerializer() {
        return new HashedEventTypeInfo.Serializer<>(StringSerializer.INSTANCE);
    }

    @Override
    protected int getLength() {
        return -1;
    }

    @Override
    @SuppressWarnings("unchecked")
    protected Class<HashedEvent<String>> getTypeClass() {
        return (Class<HashedEvent<String>>) (Class<?>) HashedEvent.class;
    }

    @Override
    @SuppressWarnings("unchecked")
    protected HashedEvent<String>[] getTestData() {
        return new HashedEvent[] {
            new HashedEvent<>(0x9E3779B97F4A7C15L, true, "id-1"),
            new HashedEvent<>(Long.MIN_VALUE, true, ""),
            new HashedEvent<>(0, false, "no id"),
            new HashedEvent<>(-1, true, "ü-" + "x".repeat(70_000))
        };
    }
}
