package io.bloomstream.table;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.dag.Transformation;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.runtime.operators.testutils.MockEnvironment;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.operators.Input;
import org.apache.flink.streaming.api.operators.MultipleInputStreamOperator;
import org.apache.flink.streaming.api.operators.StreamOperatorFactory;
import org.apache.flink.streaming.api.transformations.KeyedMultipleInputTransformation;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.Row;
import org.apache.flink.util.InstantiationUtil;

/**
 * A keyed test harness around the operator that Flink's planner makes for a process table function
 * call: the query is planned (not run), the operator factory and key selector are taken from the
 * planned transformation, and rows are fed as the planner's internal {@link RowData}. The harness
 * runs in a given mock environment, so that the function's metrics can be read back.
 */
final class PtfHarness extends AbstractStreamOperatorTestHarness<RowData> {

    /** A planned PTF call: its operator factory, key selector and input row type. */
    record Plan(
            StreamOperatorFactory<RowData> factory,
            KeySelector<RowData, RowData> keySelector,
            TypeInformation<RowData> keyType,
            RowType inputType,
            TypeInformation<RowData> outputType) {

        /** The position of an input column. */
        int column(String name) {
            int i = inputType.getFieldNames().indexOf(name);
            if (i < 0) {
                throw new IllegalArgumentException(
                        String.format(Locale.ROOT, "no column %s in %s", name, inputType));
            }
            return i;
        }
    }

    private final Plan plan;

    /**
     * A harness of its own copy of the planned operator (as each task of a job deserializes its
     * own): the planned factory holds the function instance, which tasks must not share.
     */
    PtfHarness(Plan plan, MockEnvironment environment) throws Exception {
        super(
                InstantiationUtil.clone(plan.factory(), PtfHarness.class.getClassLoader()),
                environment);
        this.plan = plan;
        config.setStatePartitioner(0, plan.keySelector());
        config.setStateKeySerializer(
                plan.keyType().createSerializer(executionConfig.getSerializerConfig()));
        config.serializeAllConfigs();
    }

    /** Sets the output serializer (the harness copies each output record with it). */
    void setupOutput() {
        setup(plan.outputType().createSerializer(executionConfig.getSerializerConfig()));
    }

    /**
     * Plans {@code query} over the view {@code events} that {@code view} registers on a stream of
     * {@code source}, and returns the process table function's operator.
     */
    @SuppressWarnings("unchecked")
    static Plan plan(
            java.util.function.BiConsumer<StreamExecutionEnvironment, StreamTableEnvironment> view,
            String query) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        StreamTableEnvironment t = SqlTesting.tableEnv(env);
        view.accept(env, t);
        DataStream<?> out = t.toDataStream(t.sqlQuery(query));
        List<Transformation<?>> todo = new ArrayList<>(List.of(out.getTransformation()));
        while (!todo.isEmpty()) {
            Transformation<?> tr = todo.remove(todo.size() - 1);
            if (tr instanceof KeyedMultipleInputTransformation<?> keyed) {
                InternalTypeInfo<RowData> input =
                        (InternalTypeInfo<RowData>) keyed.getInputs().get(0).getOutputType();
                return new Plan(
                        (StreamOperatorFactory<RowData>) keyed.getOperatorFactory(),
                        (KeySelector<RowData, RowData>) keyed.getStateKeySelectors().get(0),
                        (TypeInformation<RowData>) keyed.getStateKeyType(),
                        (RowType) input.toLogicalType(),
                        (TypeInformation<RowData>) keyed.getOutputType());
            }
            todo.addAll(tr.getInputs());
        }
        throw new IllegalStateException("no keyed multiple-input transformation in the plan");
    }

    /**
     * Plans {@code query} over a view {@code events} of STRING columns {@code k} and {@code id}, a
     * BIGINT {@code seq} if {@code withSeq}, and, if {@code withTime}, an event-time column {@code
     * ts} (TIMESTAMP_LTZ(3), the source's watermark): the input most harness tests use.
     */
    static Plan planOverEvents(boolean withSeq, boolean withTime, String query) {
        List<String> names = new ArrayList<>(List.of("k", "id"));
        List<TypeInformation<?>> types = new ArrayList<>(List.of(Types.STRING, Types.STRING));
        List<Object> sample = new ArrayList<>(List.of("k", "i"));
        Schema.Builder schema =
                Schema.newBuilder()
                        .column("k", DataTypes.STRING())
                        .column("id", DataTypes.STRING());
        if (withSeq) {
            names.add("seq");
            types.add(Types.LONG);
            sample.add(0L);
            schema.column("seq", DataTypes.BIGINT());
        }
        if (withTime) {
            names.add("ts");
            types.add(Types.INSTANT);
            sample.add(Instant.EPOCH);
            schema.column("ts", DataTypes.TIMESTAMP_LTZ(3)).watermark("ts", "SOURCE_WATERMARK()");
        }
        return plan(
                (env, t) ->
                        t.createTemporaryView(
                                "events",
                                t.fromDataStream(
                                        env.fromData(Row.of(sample.toArray()))
                                                .returns(
                                                        Types.ROW_NAMED(
                                                                names.toArray(new String[0]),
                                                                types.toArray(
                                                                        new TypeInformation<?>
                                                                                [0]))),
                                        schema.build())),
                query);
    }

    private Input<RowData> input() {
        @SuppressWarnings("unchecked")
        MultipleInputStreamOperator<RowData> op = (MultipleInputStreamOperator<RowData>) operator;
        @SuppressWarnings("unchecked")
        Input<RowData> in = (Input<RowData>) op.getInputs().get(0);
        return in;
    }

    void processElement(RowData row) throws Exception {
        StreamRecord<RowData> record = new StreamRecord<>(row);
        Input<RowData> in = input();
        in.setKeyContextElement(record);
        in.processElement(record);
    }

    /** The operator's keyed state backend (to look at what the function's state holds). */
    org.apache.flink.runtime.state.KeyedStateBackend<?> keyedStateBackend() {
        return ((org.apache.flink.streaming.api.operators.AbstractStreamOperatorV2<?>) operator)
                .getKeyedStateBackend();
    }

    void processWatermark(long watermark) throws Exception {
        input().processWatermark(new Watermark(watermark));
    }
}
