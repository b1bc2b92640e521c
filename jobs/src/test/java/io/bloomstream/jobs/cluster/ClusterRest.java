package io.bloomstream.jobs.cluster;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The few calls of the JobManager's REST API that the chaos test needs, over plain HTTP (JSON read
 * with Flink's own shaded Jackson). Every read returns empty while the JobManager is down or does
 * not know the job yet, so callers poll conditions with deadlines.
 */
final class ClusterRest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final String base;

    ClusterRest(String restAddress) {
        this.base = "http://" + restAddress;
    }

    /** GET {@code path}; empty on a connection error or a status other than 200. */
    Optional<JsonNode> get(String path) {
        try {
            HttpURLConnection c = open(path);
            if (c.getResponseCode() != 200) {
                c.getErrorStream().close();
                return Optional.empty();
            }
            try (InputStream in = c.getInputStream()) {
                return Optional.of(JSON.readTree(in));
            }
        } catch (IOException e) {
            return Optional.empty(); // JobManager down or restarting
        }
    }

    /** POST {@code body} (JSON) to {@code path}; the answer, or an exception naming the status. */
    JsonNode post(String path, String body) throws IOException {
        HttpURLConnection c = open(path);
        c.setRequestMethod("POST");
        c.setDoOutput(true);
        c.setRequestProperty("Content-Type", "application/json");
        try (OutputStream out = c.getOutputStream()) {
            out.write(body.getBytes(StandardCharsets.UTF_8));
        }
        int status = c.getResponseCode();
        if (status / 100 != 2) {
            throw new IOException(
                    "POST "
                            + path
                            + ": "
                            + status
                            + " "
                            + new String(
                                    c.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
        }
        try (InputStream in = c.getInputStream()) {
            return JSON.readTree(in);
        }
    }

    private HttpURLConnection open(String path) throws IOException {
        HttpURLConnection c = (HttpURLConnection) URI.create(base + path).toURL().openConnection();
        c.setConnectTimeout(2000);
        c.setReadTimeout(10000);
        return c;
    }

    /**
     * Whether the job is RUNNING with every subtask of every unfinished vertex RUNNING, deployed
     * after {@code sinceMillis} (epoch ms; 0 for any time): that is, recovered after something that
     * happened then.
     */
    boolean runningSince(String jobId, long sinceMillis) {
        Optional<JsonNode> job = get("/jobs/" + jobId);
        if (job.isEmpty() || !"RUNNING".equals(job.get().path("state").asText())) {
            return false;
        }
        for (JsonNode v : job.get().path("vertices")) {
            if ("FINISHED".equals(v.path("status").asText())) {
                continue; // a bounded source that ended (the screen's absent command stream)
            }
            if (!"RUNNING".equals(v.path("status").asText())
                    || v.path("tasks").path("RUNNING").asInt() != v.path("parallelism").asInt()
                    || v.path("start-time").asLong() <= sinceMillis) {
                return false;
            }
        }
        return true;
    }

    /** The TaskManagers (resource ids) that run a subtask of the job now. */
    Set<String> taskManagersOf(String jobId) {
        Set<String> tms = new HashSet<>();
        get("/jobs/" + jobId)
                .ifPresent(
                        job -> {
                            for (JsonNode v : job.path("vertices")) {
                                get("/jobs/" + jobId + "/vertices/" + v.path("id").asText())
                                        .ifPresent(
                                                d -> {
                                                    for (JsonNode s : d.path("subtasks")) {
                                                        tms.add(s.path("taskmanager-id").asText());
                                                    }
                                                });
                            }
                        });
        return tms;
    }

    /**
     * The subtasks of the job now, as "vertexId/index" to the TaskManager (resource id) running it,
     * in the job graph's order (sources first).
     */
    Map<String, String> subtaskLocations(String jobId) {
        Map<String, String> where = new LinkedHashMap<>();
        get("/jobs/" + jobId)
                .ifPresent(
                        job -> {
                            for (JsonNode v : job.path("vertices")) {
                                String vertex = v.path("id").asText();
                                get("/jobs/" + jobId + "/vertices/" + vertex)
                                        .ifPresent(
                                                d -> {
                                                    for (JsonNode s : d.path("subtasks")) {
                                                        where.put(
                                                                vertex
                                                                        + "/"
                                                                        + s.path("subtask").asInt(),
                                                                s.path("taskmanager-id").asText());
                                                    }
                                                });
                            }
                        });
        return where;
    }

    /**
     * The subtasks ("vertexId/index") of {@code vertices} that have not acknowledged checkpoint
     * {@code id} yet, looking at the vertices in the order given.
     */
    List<String> pendingSubtasks(String jobId, long id, List<String> vertices) {
        List<String> pending = new ArrayList<>();
        for (String vertex : vertices) {
            get("/jobs/" + jobId + "/checkpoints/details/" + id + "/subtasks/" + vertex)
                    .ifPresent(
                            d -> {
                                for (JsonNode s : d.path("subtasks")) {
                                    if (!"completed".equals(s.path("status").asText())) {
                                        pending.add(vertex + "/" + s.path("index").asInt());
                                    }
                                }
                            });
            if (!pending.isEmpty()) {
                return pending;
            }
        }
        return pending;
    }

    /** The job's checkpoint statistics (/jobs/:id/checkpoints). */
    Optional<JsonNode> checkpoints(String jobId) {
        return get("/jobs/" + jobId + "/checkpoints");
    }

    /** The id of a checkpoint in progress now, or -1. */
    long checkpointInProgress(String jobId) {
        return checkpoints(jobId)
                .map(
                        c -> {
                            for (JsonNode h : c.path("history")) {
                                if ("IN_PROGRESS".equals(h.path("status").asText())) {
                                    return h.path("id").asLong();
                                }
                            }
                            return -1L;
                        })
                .orElse(-1L);
    }

    /**
     * The latest completed checkpoint's last acknowledgement (epoch ms) if it was triggered after
     * {@code sinceMillis}, else -1.
     */
    long completedCheckpointAckedAfter(String jobId, long sinceMillis) {
        return checkpoints(jobId)
                .map(c -> c.path("latest").path("completed"))
                .filter(c -> c.path("trigger_timestamp").asLong() > sinceMillis)
                .map(c -> c.path("latest_ack_timestamp").asLong())
                .orElse(-1L);
    }

    /** The status of checkpoint {@code id} (COMPLETED, FAILED, ...), or "unknown". */
    String checkpointStatus(String jobId, long id) {
        return get("/jobs/" + jobId + "/checkpoints/details/" + id)
                .map(d -> d.path("status").asText())
                .orElse("unknown");
    }

    /** Whether TaskManager {@code resourceId} is registered with the ResourceManager. */
    boolean taskManagerRegistered(String resourceId) {
        return get("/taskmanagers")
                .map(
                        t -> {
                            for (JsonNode tm : t.path("taskmanagers")) {
                                if (resourceId.equals(tm.path("id").asText())) {
                                    return true;
                                }
                            }
                            return false;
                        })
                .orElse(false);
    }

    /** Stops the job with a savepoint in {@code dir} and waits until it is FINISHED. */
    void stopWithSavepoint(String jobId, URI dir, long timeoutMillis) throws Exception {
        stopWithSavepoint(jobId, dir, timeoutMillis, "CANONICAL");
    }

    /**
     * Stops the job with a savepoint of {@code format} (CANONICAL or NATIVE: the state backend's
     * own files, what an incremental RocksDB checkpoint writes) and waits until it is FINISHED.
     */
    void stopWithSavepoint(String jobId, URI dir, long timeoutMillis, String format)
            throws Exception {
        String request =
                post(
                                "/jobs/" + jobId + "/stop",
                                "{\"targetDirectory\":\""
                                        + dir
                                        + "\",\"drain\":false,\"formatType\":\""
                                        + format
                                        + "\"}")
                        .path("request-id")
                        .asText();
        long deadline = System.currentTimeMillis() + timeoutMillis;
        JsonNode last = null;
        while (System.currentTimeMillis() < deadline) {
            last = get("/jobs/" + jobId + "/savepoints/" + request).orElse(null);
            if (last != null && "COMPLETED".equals(last.path("status").path("id").asText())) {
                if (last.path("operation").has("failure-cause")) {
                    throw new IllegalStateException("stop with savepoint failed: " + last);
                }
                break;
            }
            TimeUnit.MILLISECONDS.sleep(200); // polling a condition, with a deadline
        }
        while (System.currentTimeMillis() < deadline) {
            if (get("/jobs/" + jobId)
                    .map(j -> "FINISHED".equals(j.path("state").asText()))
                    .orElse(false)) {
                return;
            }
            TimeUnit.MILLISECONDS.sleep(200); // polling a condition, with a deadline
        }
        throw new IllegalStateException("job " + jobId + " not stopped with a savepoint: " + last);
    }
}
