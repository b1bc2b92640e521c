package io.bloomstream.table;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.filter.BloomFilter;
import io.bloomstream.filter.Estimate;
import io.bloomstream.filter.FilterSpec;
import io.bloomstream.filter.Hash128;
import io.bloomstream.table.internal.SqlArguments;
import io.bloomstream.testing.Backend;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;

/**
 * Changelogs for the counting form of {@code BLOOM_COUNT_DISTINCT}: a generator of legal changelogs
 * of rows {@code (id, user, page)} keyed by {@code id} with its exact model, the table environments
 * they run in (mini-batch off, on in one phase, on in two phases) and the oracle a result is
 * checked against.
 */
final class RetractChangelogs {

    private RetractChangelogs() {}

    /** How the planner aggregates: one operator, or mini-batch in one or two phases. */
    enum Aggregation {
        NO_MINI_BATCH,
        MINI_BATCH_ONE_PHASE,
        MINI_BATCH_TWO_PHASE
    }

    /** The rows' type: {@code id BIGINT, user STRING, page STRING}. */
    static final TypeInformation<Row> ROW_TYPE =
            Types.ROW_NAMED(
                    new String[] {"id", "user", "page"}, Types.LONG, Types.STRING, Types.STRING);

    /** A job's stream environment and the table environment over it. */
    record Envs(StreamExecutionEnvironment stream, StreamTableEnvironment table) {}

    /**
     * A streaming table environment at parallelism 2 on {@code backend}, aggregating as {@code
     * aggregation} says; mini-batch bundles hold at most {@code bundle} rows, so that a small one
     * splits a row's addition and its retraction into two bundles.
     */
    static Envs envs(Backend backend, Aggregation aggregation, int bundle) {
        StreamExecutionEnvironment env =
                StreamExecutionEnvironment.getExecutionEnvironment(backend.jobConfig());
        env.setParallelism(2);
        StreamTableEnvironment t = SqlTesting.tableEnv(env);
        if (aggregation != Aggregation.NO_MINI_BATCH) {
            t.getConfig().set("table.exec.mini-batch.enabled", "true");
            t.getConfig().set("table.exec.mini-batch.allow-latency", "100 ms");
            t.getConfig().set("table.exec.mini-batch.size", Integer.toString(bundle));
            t.getConfig()
                    .set(
                            "table.optimizer.agg-phase-strategy",
                            aggregation == Aggregation.MINI_BATCH_ONE_PHASE
                                    ? "ONE_PHASE"
                                    : "TWO_PHASE");
        }
        return new Envs(env, t);
    }

    /**
     * Declares the temporary view {@code name} over {@code rows} (their kinds set), read at
     * parallelism 1 so that each id's changes keep their order. In upsert mode {@code id} is the
     * primary key and the rows {@code -U} are left out (the planner then normalizes the changelog).
     */
    static void createView(Envs envs, String name, List<Row> rows, ChangelogMode mode) {
        boolean upsert =
                mode.contains(RowKind.UPDATE_AFTER) && !mode.contains(RowKind.UPDATE_BEFORE);
        Row[] data =
                rows.stream()
                        .filter(r -> !upsert || r.getKind() != RowKind.UPDATE_BEFORE)
                        .toArray(Row[]::new);
        DataStream<Row> stream = envs.stream().fromData(ROW_TYPE, data).setParallelism(1);
        Schema.Builder schema =
                Schema.newBuilder()
                        .column("id", DataTypes.BIGINT().notNull())
                        .column("user", DataTypes.STRING())
                        .column("page", DataTypes.STRING());
        if (upsert) {
            schema.primaryKey("id");
        }
        envs.table()
                .createTemporaryView(
                        name, envs.table().fromChangelogStream(stream, schema.build(), mode));
    }

    /**
     * Checks a group's result against the exact count and the library: with no counter stuck at its
     * maximum (the counters here stay far below 65,535), the counters above zero of the counting
     * form are the bits of a plain filter of the same shape holding the users present, hashed as
     * the SQL function hashes them, so {@code bloom} equals that filter's rounded estimate exactly;
     * and that estimate is within 3 standard errors (+ 0.5 for the rounding) of the exact count.
     */
    static void check(String what, FilterSpec spec, Long bloom, Long exact, Set<String> users) {
        double se = checkExact(what, spec, bloom, exact, users);
        assertThat((double) Math.abs(bloom - users.size()))
                .as(what + ": within 3 standard errors (%.2f) of %d", se, users.size())
                .isLessThanOrEqualTo(3 * se + 0.5);
    }

    /**
     * The exact part of {@link #check}: {@code COUNT(DISTINCT)} is the model's count and {@code
     * bloom} the rounded estimate of a plain filter of the users present; returns that estimate's
     * standard error.
     */
    static double checkExact(
            String what, FilterSpec spec, Long bloom, Long exact, Set<String> users) {
        assertThat(exact).as(what + ": COUNT(DISTINCT)").isEqualTo(users.size());
        BloomFilter library = BloomFilter.create(spec);
        for (String u : users) {
            Hash128 h = SqlArguments.hash(spec.hasher(), u);
            library.add(h.h1(), h.h2());
        }
        Estimate e = library.estimate();
        assertThat(bloom)
                .as(what + ": the estimate of a plain filter of the users present")
                .isEqualTo(Math.round(e.estimate()));
        return e.standardError();
    }

    /** The shape of the groups and the mix of changes of a generated changelog. */
    record Shape(
            List<String> pages,
            double[] pageWeights,
            int[] userPools,
            int steps,
            double inserts,
            double updates,
            double deletes) {}

    /**
     * A legal changelog keyed by a row id and its model, id -> (user, page). Each step is one of:
     * {@code +I} of a new id; {@code -U} of an id's row immediately followed by {@code +U} of its
     * new row (user, page, both or neither changed); {@code -D} of an id; {@code +I} again of a
     * deleted id (a re-insert, with new values). Users of a page come from a pool of that page's
     * size, so one user may hold several ids of a page.
     */
    static final class Generator {
        private final Random random;
        private final Shape shape;
        private final Map<Long, String[]> live = new LinkedHashMap<>();
        private final List<Long> liveIds = new ArrayList<>();
        private final Map<Long, Integer> liveIndex = new HashMap<>();
        private final List<Long> deleted = new ArrayList<>();
        private final List<Row> rows = new ArrayList<>();
        private final long firstId;
        private long nextId;

        Generator(long seed, Shape shape, long firstId) {
            this.random = new Random(seed);
            this.shape = shape;
            this.firstId = firstId;
            this.nextId = firstId;
        }

        /** The rows so far. */
        List<Row> rows() {
            return rows;
        }

        /** Runs the shape's steps. */
        Generator run() {
            return run(shape.steps());
        }

        /** Runs {@code steps} random steps. */
        Generator run(int steps) {
            for (int i = 0; i < steps; i++) {
                step();
            }
            return this;
        }

        /** One random step. */
        void step() {
            double r = random.nextDouble();
            if (liveIds.isEmpty() || r < shape.inserts()) {
                if (!deleted.isEmpty() && random.nextInt(4) == 0) {
                    long id = deleted.remove(random.nextInt(deleted.size()));
                    insert(id, randomRow());
                } else {
                    insert(nextId++, randomRow());
                }
            } else if (r < shape.inserts() + shape.updates()) {
                update(randomLiveId());
            } else {
                delete(randomLiveId());
            }
        }

        /** Deletes every row of {@code page}: its group empties. */
        void empty(String page) {
            for (Long id : new ArrayList<>(liveIds)) {
                if (live.get(id)[1].equals(page)) {
                    delete(id);
                }
            }
        }

        private long randomLiveId() {
            return liveIds.get(random.nextInt(liveIds.size()));
        }

        private int randomPage() {
            double w = random.nextDouble() * sum(shape.pageWeights());
            for (int p = 0; p < shape.pages().size() - 1; p++) {
                w -= shape.pageWeights()[p];
                if (w < 0) {
                    return p;
                }
            }
            return shape.pages().size() - 1;
        }

        private String randomUser(int page) {
            return "g" + firstId + "-" + page + "-u" + random.nextInt(shape.userPools()[page]);
        }

        private String[] randomRow() {
            int p = randomPage();
            return new String[] {randomUser(p), shape.pages().get(p)};
        }

        private void insert(long id, String[] row) {
            live.put(id, row);
            liveIndex.put(id, liveIds.size());
            liveIds.add(id);
            rows.add(Row.ofKind(RowKind.INSERT, id, row[0], row[1]));
        }

        private void update(long id) {
            String[] old = live.get(id);
            int page = shape.pages().indexOf(old[1]);
            String[] now;
            switch (random.nextInt(6)) {
                case 0, 1 -> now = new String[] {randomUser(page), old[1]};
                case 2, 3 -> {
                    int p = randomPage();
                    now = new String[] {old[0], shape.pages().get(p)};
                }
                case 4 -> now = randomRow();
                default -> now = old;
            }
            live.put(id, now);
            rows.add(Row.ofKind(RowKind.UPDATE_BEFORE, id, old[0], old[1]));
            rows.add(Row.ofKind(RowKind.UPDATE_AFTER, id, now[0], now[1]));
        }

        private void delete(long id) {
            String[] old = live.remove(id);
            int i = liveIndex.remove(id);
            long last = liveIds.remove(liveIds.size() - 1);
            if (last != id) {
                liveIds.set(i, last);
                liveIndex.put(last, i);
            }
            deleted.add(id);
            rows.add(Row.ofKind(RowKind.DELETE, id, old[0], old[1]));
        }

        /** The model: the distinct users present per page (pages with no row left are absent). */
        Map<String, Set<String>> usersPerPage() {
            Map<String, Set<String>> out = new HashMap<>();
            for (String[] row : live.values()) {
                out.computeIfAbsent(row[1], k -> new HashSet<>()).add(row[0]);
            }
            return out;
        }

        private static double sum(double[] weights) {
            double s = 0;
            for (double w : weights) {
                s += w;
            }
            return s;
        }
    }
}
