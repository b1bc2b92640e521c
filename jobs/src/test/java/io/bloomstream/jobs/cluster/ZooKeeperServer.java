package io.bloomstream.jobs.cluster;

import io.bloomstream.jobs.Cli;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A standalone ZooKeeper server as a child JVM, for Flink's ZooKeeper high-availability services:
 * the {@code ZooKeeperServerMain} that Flink already ships shaded in {@code
 * flink-shaded-zookeeper-3} (a dependency of flink-runtime), so no other artifact is needed. Tick
 * time 500 ms, so that sessions may be as short as 1 s and a killed JobManager's leadership expires
 * quickly. Closing it stops the process.
 */
final class ZooKeeperServer implements AutoCloseable {

    static final String MAIN =
            "org.apache.flink.shaded.zookeeper3.org.apache.zookeeper.server.ZooKeeperServerMain";

    private final int port;
    private final Process process;

    ZooKeeperServer(Path dir) throws Exception {
        this.port = Cli.freePort();
        Path data = Files.createDirectories(dir.resolve("zookeeper"));
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx256m");
        cmd.add("-Dzookeeper.admin.enableServer=false");
        cmd.add("-cp");
        cmd.add(StandaloneCluster.flinkClassPath());
        cmd.add(MAIN);
        cmd.add(Integer.toString(port));
        cmd.add(data.toString());
        cmd.add("500"); // tick time, ms
        process =
                new ProcessBuilder(cmd)
                        .redirectErrorStream(true)
                        .redirectOutput(dir.resolve("zookeeper.log").toFile())
                        .start();
        awaitListening(Duration.ofSeconds(60));
    }

    /** host:port, for {@code high-availability.zookeeper.quorum}. */
    String connectString() {
        return "127.0.0.1:" + port;
    }

    private void awaitListening(Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("ZooKeeper exited with " + process.exitValue());
            }
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 500);
                return;
            } catch (IOException e) {
                // not listening yet
            }
            TimeUnit.MILLISECONDS.sleep(200); // polling a condition, with a deadline
        }
        throw new IllegalStateException("ZooKeeper not listening in " + timeout);
    }

    @Override
    public void close() throws Exception {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }
}
