package io.bloomstream.jobs.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomstream.jobs.Cli;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Submits the slim job jar with {@code flink run} to a real standalone session cluster (a
 * JobManager and two TaskManagers as separate JVMs) and checks the job's output.
 */
class FlinkClusterITCase {

    @Test
    void dedupJobRunsOnAStandaloneClusterFromTheSlimJar(@TempDir Path tmp) throws Exception {
        Path jar =
                Path.of(
                        System.getProperty(
                                "bloomstream.jobJar", "target/bloomstream-flink-job.jar"));
        assertThat(jar).as("the slim job jar (built by package)").exists();
        Path testdata = Cli.testdata();
        Path out = tmp.resolve("out");
        List<Long> pids;
        try (StandaloneCluster cluster = new StandaloneCluster(tmp)) {
            cluster.start(2);
            pids = cluster.pids();
            assertThat(pids).hasSize(3);
            Path log = tmp.resolve("flink-run.log");
            int status =
                    cluster.flinkRun(
                            log,
                            jar.toAbsolutePath().toString(),
                            "dedup",
                            "--input",
                            testdata.resolve("dedup/ids.txt").toAbsolutePath().toString(),
                            "--output",
                            out.toString(),
                            "--expected-items",
                            "20000");
            assertThat(status)
                    .as("flink run exit status; log:\n%s", Files.readString(log))
                    .isZero();
            assertThat(Files.readString(log)).contains("Job has been submitted with JobID");
        }
        for (long pid : pids) {
            assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false))
                    .as("process %d stopped", pid)
                    .isFalse();
        }
        List<String> written = new ArrayList<>();
        try (Stream<Path> files = Files.list(out)) {
            for (Path f :
                    (Iterable<Path>)
                            files.filter(p -> p.getFileName().toString().startsWith("part-"))
                                    ::iterator) {
                written.addAll(Files.readAllLines(f));
            }
        }
        Set<String> distinct = new HashSet<>(Files.readAllLines(testdata.resolve("dedup/ids.txt")));
        assertThat(new HashSet<>(written)).hasSize(written.size());
        assertThat(distinct).containsAll(written);
        // 1% rate, binomial bound at 4.5 sigma, as in JobCommandsTest
        double bound = distinct.size() * 0.01 + 4.5 * Math.sqrt(distinct.size() * 0.01);
        assertThat((double) (distinct.size() - written.size())).isBetween(0.0, bound);
    }
}
