package io.bloomstream.flink.internal;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.KryoException;
import com.esotericsoftware.kryo.Serializer;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import java.io.IOException;
import java.io.Serializable;
import java.util.ArrayList;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.runtime.checkpoint.CheckpointProperties;
import org.apache.flink.runtime.checkpoint.MasterState;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.state.api.output.TaggedOperatorSubtaskState;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.InstantiationUtil;

/**
 * How the State Processor API's own records cross its job: its {@code TaggedOperatorSubtaskState},
 * {@code OperatorState} and {@code CheckpointMetadata} are generic types, so Kryo writes them, and
 * Kryo's field serializer cannot create their private nested classes (such as {@code
 * InflightDataRescalingDescriptor.NoRescalingDescriptor}) on JDK 17 unless the JVM opens {@code
 * java.lang} to it, as Flink's distribution does and a local run or a test JVM does not. {@link
 * #register} gives Kryo a serializer of these three built on Java serialization, as Flink's RPC
 * ships the same state objects. (A savepoint job still needs generic types enabled.)
 */
@Internal
public final class BootstrapResults {

    private BootstrapResults() {}

    /** Registers the serializer of the three types on {@code env}'s config. */
    public static void register(StreamExecutionEnvironment env) {
        if (env.getConfig().getSerializerConfig() instanceof SerializerConfigImpl config) {
            for (Class<?> type :
                    new Class<?>[] {
                        TaggedOperatorSubtaskState.class,
                        OperatorState.class,
                        CheckpointMetadata.class
                    }) {
                config.addDefaultKryoSerializer(type, new JavaSerialized());
            }
        }
    }

    /**
     * The three types by Java serialization: a subtask's state with its index, an operator's state
     * as it is, metadata as its checkpoint id, operator and master states and properties. Immutable
     * once made, so copies share them.
     */
    static final class JavaSerialized extends Serializer<Object> implements Serializable {
        private static final long serialVersionUID = 1L;

        JavaSerialized() {
            setImmutable(true);
        }

        @Override
        public void write(Kryo kryo, Output out, Object value) {
            if (value instanceof TaggedOperatorSubtaskState tagged) {
                out.writeInt(tagged.index);
                bytes(out, tagged.state);
            } else if (value instanceof CheckpointMetadata metadata) {
                out.writeLong(metadata.getCheckpointId());
                bytes(out, new ArrayList<>(metadata.getOperatorStates()));
                bytes(out, new ArrayList<>(metadata.getMasterStates()));
                bytes(out, metadata.getCheckpointProperties());
            } else {
                bytes(out, (Serializable) value);
            }
        }

        @Override
        @SuppressWarnings("unchecked")
        public Object read(Kryo kryo, Input in, Class<?> type) {
            ClassLoader loader = kryo.getClassLoader();
            if (type == TaggedOperatorSubtaskState.class) {
                int index = in.readInt();
                return new TaggedOperatorSubtaskState(
                        index, (OperatorSubtaskState) object(in, loader));
            }
            if (type == CheckpointMetadata.class) {
                long id = in.readLong();
                ArrayList<OperatorState> operators = (ArrayList<OperatorState>) object(in, loader);
                ArrayList<MasterState> masters = (ArrayList<MasterState>) object(in, loader);
                CheckpointProperties properties = (CheckpointProperties) object(in, loader);
                return new CheckpointMetadata(id, operators, masters, properties);
            }
            return object(in, loader);
        }

        private static void bytes(Output out, Serializable value) {
            try {
                byte[] bytes = InstantiationUtil.serializeObject(value);
                out.writeInt(bytes.length);
                out.writeBytes(bytes);
            } catch (IOException e) {
                throw new KryoException("cannot serialize " + value, e);
            }
        }

        private static Object object(Input in, ClassLoader loader) {
            byte[] bytes = in.readBytes(in.readInt());
            try {
                return InstantiationUtil.deserializeObject(bytes, loader);
            } catch (IOException | ClassNotFoundException e) {
                throw new KryoException("cannot read a State Processor API record", e);
            }
        }
    }
}
