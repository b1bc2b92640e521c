package io.bloomstream.jobs.stream;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.jobs.Cli;
import io.bloomstream.jobs.Main;
import io.bloomstream.jobs.console.LocalMetrics;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Tests for {@code --web-ui}: a local dedup job with the web UI, whose job and bloomstream metrics
 * are read through Flink's REST API while it runs, then stopped through it. The test builds the
 * command's job from its parsed flags with a map between the source and {@link
 * DedupCommand#pipeline} that lets a known number of lines through and holds the rest, so the job
 * runs as long as the test needs and the counters have known values.
 */
class WebUiITCase {

    private static final Duration DEADLINE = Duration.ofSeconds(90);

    @TempDir Path tmp;

    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void servesTheRunningJobAndItsBloomMetricsThroughRestAndStopsOnCancel() throws Exception {
        Hold.SEEN.set(0);
        Cli cli = new Cli();
        CommandLine cl = Main.commandLine();
        cl.setOut(new PrintWriter(cli.out, true));
        cl.setErr(new PrintWriter(cli.err, true));
        CommandLine dedupLine = cl.getSubcommands().get("dedup");
        DedupCommand dedup =
                (DedupCommand)
                        cl.parseArgs(
                                        "dedup",
                                        "--input",
                                        Cli.testdata().resolve("dedup/ids.txt").toString(),
                                        "--output",
                                        tmp.resolve("out").toString(),
                                        "--web-ui",
                                        "--quiet")
                                .subcommand()
                                .commandSpec()
                                .userObject();
        // The command's job with the hold between its source and the pipeline.
        StreamExecutionEnvironment env =
                dedup.io.environment(LocalMetrics.configuration(dedup.io.runId));
        DedupCommand.Settings settings = dedup.settings();
        Outputs out =
                DedupCommand.pipeline(
                        dedup.io.source(env, "input").map(new Hold()).returns(Types.STRING),
                        settings);
        dedup.io.writeOutput(out.records());
        dedup.io.writeRejected(out.rejected());
        CompletableFuture<Integer> status =
                CompletableFuture.supplyAsync(
                        () -> {
                            try {
                                dedup.console.execute(
                                        dedupLine.getCommandSpec(),
                                        dedup.io,
                                        env,
                                        "bloomstream dedup");
                                return 0;
                            } catch (Exception e) {
                                return handle(cl, dedupLine, e);
                            }
                        });
        String base = "http://localhost:" + port(cli);
        String jobId = runningJob(base);
        Map<String, Object> job = get(base + "/jobs/" + jobId);
        assertThat(job.get("name")).isEqualTo("bloomstream dedup");
        String vertex = vertexNamed(job, "bloom-dedup");
        // The operator's counters, summed over its subtasks, reach the records let through:
        // the first 1,000 lines of ids.txt, of which 571 are first occurrences.
        long firsts =
                Files.readAllLines(Cli.testdata().resolve("dedup/ids.txt")).stream()
                        .limit(Hold.LIMIT)
                        .distinct()
                        .count();
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        double recordsIn = 0;
        double passed = 0;
        while (System.nanoTime() < deadline && (recordsIn < Hold.LIMIT || passed < firsts)) {
            recordsIn = sum(base, jobId, vertex, "bloom-dedup.bloomRecordsIn");
            passed = sum(base, jobId, vertex, "bloom-dedup.bloomPassed");
        }
        assertThat(recordsIn).isEqualTo(Hold.LIMIT);
        // at most 1% of first occurrences lost as false positives (none expected at this fill)
        assertThat(passed).isBetween(0.99 * firsts, (double) firsts);
        assertThat(sum(base, jobId, vertex, "bloom-dedup.bloomDuplicates"))
                .isEqualTo(Hold.LIMIT - passed);

        // Stop it.
        HttpResponse<String> cancel =
                http.send(
                        HttpRequest.newBuilder(URI.create(base + "/jobs/" + jobId + "?mode=cancel"))
                                .method("PATCH", HttpRequest.BodyPublishers.noBody())
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertThat(cancel.statusCode()).isEqualTo(202);
        assertThat(status.get(DEADLINE.toSeconds(), TimeUnit.SECONDS)).isEqualTo(1);
        assertThat(cli.err.toString()).contains("error: job failed: JobCancellationException");
    }

    /** The exit status and message of a failed run, as the command line makes them. */
    private static int handle(CommandLine cl, CommandLine dedupLine, Exception e) {
        try {
            return cl.getExecutionExceptionHandler().handleExecutionException(e, dedupLine, null);
        } catch (Exception unexpected) {
            throw new IllegalStateException(unexpected);
        }
    }

    /** Lets the first {@link #LIMIT} lines through, then holds the rest until cancelled. */
    static final class Hold implements MapFunction<String, String> {
        private static final long serialVersionUID = 1L;
        static final long LIMIT = 1000;
        static final java.util.concurrent.atomic.AtomicLong SEEN =
                new java.util.concurrent.atomic.AtomicLong();
        private static final java.util.concurrent.CountDownLatch NEVER =
                new java.util.concurrent.CountDownLatch(1);

        @Override
        public String map(String line) throws InterruptedException {
            if (SEEN.incrementAndGet() > LIMIT) {
                NEVER.await(); // until the cancellation interrupts the task
            }
            return line;
        }
    }

    /** The port the command printed. */
    private static int port(Cli cli) throws InterruptedException {
        Pattern url = Pattern.compile("Flink's web UI: http://localhost:(\\d+)");
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (System.nanoTime() < deadline) {
            Matcher m = url.matcher(cli.err.toString());
            if (m.find()) {
                return Integer.parseInt(m.group(1));
            }
            Thread.sleep(50); // polling the output, not waiting for time to pass
        }
        throw new AssertionError("no web UI address printed: " + cli.err);
    }

    @SuppressWarnings("unchecked")
    private String runningJob(String base) throws Exception {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (System.nanoTime() < deadline) {
            List<Object> jobs = (List<Object>) get(base + "/jobs/overview").get("jobs");
            for (Object o : jobs) {
                Map<String, Object> j = (Map<String, Object>) o;
                if ("RUNNING".equals(j.get("state"))) {
                    return (String) j.get("jid");
                }
            }
            Thread.sleep(50);
        }
        throw new AssertionError("no running job");
    }

    @SuppressWarnings("unchecked")
    private static String vertexNamed(Map<String, Object> job, String prefix) {
        for (Object o : (List<Object>) job.get("vertices")) {
            Map<String, Object> v = (Map<String, Object>) o;
            if (((String) v.get("name")).startsWith(prefix)) {
                return (String) v.get("id");
            }
        }
        throw new AssertionError("no vertex " + prefix + " in " + job);
    }

    /** A metric of a vertex summed over its subtasks (0 while the dashboard has none yet). */
    @SuppressWarnings("unchecked")
    private double sum(String base, String job, String vertex, String metric) throws Exception {
        HttpResponse<String> r =
                http.send(
                        HttpRequest.newBuilder(
                                        URI.create(
                                                base
                                                        + "/jobs/"
                                                        + job
                                                        + "/vertices/"
                                                        + vertex
                                                        + "/subtasks/metrics?get="
                                                        + metric
                                                        + "&agg=sum"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        String body = r.body().trim();
        if (body.equals("[]")) {
            Thread.sleep(100);
            return 0;
        }
        Map<String, Object> m = Cli.json(body.substring(1, body.length() - 1));
        return ((Number) m.get("sum")).doubleValue();
    }

    private Map<String, Object> get(String url) throws Exception {
        HttpResponse<String> r =
                http.send(
                        HttpRequest.newBuilder(URI.create(url)).build(),
                        HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(url + ": " + r.body()).isEqualTo(200);
        return Cli.json(r.body());
    }
}
