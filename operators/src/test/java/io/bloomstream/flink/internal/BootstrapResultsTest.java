package io.bloomstream.flink.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.checkpoint.CheckpointProperties;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.state.api.output.TaggedOperatorSubtaskState;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.Test;

/** Tests for {@link BootstrapResults}. */
class BootstrapResultsTest {

    private static <T> T roundTrip(Class<T> type, T value) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        BootstrapResults.register(env);
        KryoSerializer<T> serializer =
                new KryoSerializer<>(
                        type, (SerializerConfigImpl) env.getConfig().getSerializerConfig());
        DataOutputSerializer out = new DataOutputSerializer(256);
        serializer.serialize(value, out);
        assertThat(serializer.copy(value)).as("immutable: a copy is the value").isSameAs(value);
        return serializer.deserialize(new DataInputDeserializer(out.getCopyOfBuffer()));
    }

    @Test
    void aSubtaskStateKeepsItsIndexAndState() throws Exception {
        OperatorSubtaskState state = OperatorSubtaskState.builder().build();
        TaggedOperatorSubtaskState back =
                roundTrip(
                        TaggedOperatorSubtaskState.class, new TaggedOperatorSubtaskState(3, state));
        assertThat(back.index).isEqualTo(3);
        assertThat(back.state).isEqualTo(state);
    }

    @Test
    void anOperatorStateAndMetadataKeepTheirFields() throws Exception {
        OperatorID id =
                OperatorID.fromJobVertexID(new org.apache.flink.runtime.jobgraph.JobVertexID());
        OperatorState operator = new OperatorState("dedup", "bloom-dedup", id, 2, 128);
        operator.putState(1, OperatorSubtaskState.builder().build());
        OperatorState back = roundTrip(OperatorState.class, operator);
        assertThat(back).isEqualTo(operator);

        CheckpointMetadata metadata =
                new CheckpointMetadata(
                        7,
                        List.of(operator),
                        List.of(),
                        CheckpointProperties.forSavepoint(
                                false,
                                org.apache.flink.core.execution.SavepointFormatType.CANONICAL));
        CheckpointMetadata read = roundTrip(CheckpointMetadata.class, metadata);
        assertThat(read.getCheckpointId()).isEqualTo(7);
        assertThat(read.getOperatorStates()).containsExactly(operator);
        assertThat(read.getMasterStates()).isEmpty();
        assertThat(read.getCheckpointProperties()).isEqualTo(metadata.getCheckpointProperties());
    }
}
