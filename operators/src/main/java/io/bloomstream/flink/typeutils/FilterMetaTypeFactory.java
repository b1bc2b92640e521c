package io.bloomstream.flink.typeutils;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.state.table.SavepointTypeInformationFactory;

/**
 * Names the type of a key's filter metadata to Flink's SQL {@code savepoint} connector, for a
 * column that reads it as a {@code ROW} of {@code FilterMeta}'s public fields:
 *
 * <pre>{@code
 * 'fields.meta.state-name' = 'bloom-meta',
 * 'fields.meta.value-type-factory' = 'io.bloomstream.flink.typeutils.FilterMetaTypeFactory'
 * }</pre>
 *
 * <p>Flink 2.2's connector needs it for any such column (it cannot infer a {@code ROW}'s state
 * type, and {@code value-class} gives a Kryo serializer that the savepoint's {@link
 * FilterMetaSerializer} refuses); Flink 2.3's finds the serializer in the savepoint when the column
 * is named after the state, and needs this only for a column named otherwise. Requires
 * flink-state-processor-api on the class path, as the connector does. docs/state.md, "Reading a
 * savepoint from SQL".
 */
@PublicEvolving
public final class FilterMetaTypeFactory implements SavepointTypeInformationFactory {

    @Override
    public TypeInformation<?> getTypeInformation() {
        return FilterMetaTypeInfo.INSTANCE;
    }
}
