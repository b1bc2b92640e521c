package io.bloomstream.jobs;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;
import org.apache.flink.runtime.util.EnvironmentInformation;
import picocli.CommandLine;

/**
 * What {@code --version} prints: the version of the build (the pom's {@code project.version}, put
 * into {@code version.properties} by resource filtering, never a typed string), the Flink it was
 * built against and the Flink it runs on, the Java and its max heap (see {@code DefaultHeap}).
 */
public final class BuildVersion implements CommandLine.IVersionProvider {

    private static final String RESOURCE = "version.properties";

    /** The pom's version of this build, such as {@code 0.5.0-SNAPSHOT}. */
    public static String version() {
        return properties().getProperty("version");
    }

    /** The Flink version this build compiled and was tested against. */
    public static String builtAgainstFlink() {
        return properties().getProperty("flink.version");
    }

    @Override
    public String[] getVersion() {
        return new String[] {
            "bloomstream " + version(),
            "built against Flink "
                    + builtAgainstFlink()
                    + ", running on Flink "
                    + EnvironmentInformation.getVersion(),
            "Java "
                    + Runtime.version()
                    + ", max heap "
                    + Runtime.getRuntime().maxMemory() / (1024 * 1024)
                    + " MiB"
        };
    }

    private static Properties properties() {
        Properties p = new Properties();
        try (InputStream in = BuildVersion.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("no " + RESOURCE + " beside " + BuildVersion.class);
            }
            p.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return p;
    }
}
