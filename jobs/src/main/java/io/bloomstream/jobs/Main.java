package io.bloomstream.jobs;

import io.bloomstream.jobs.console.FileErrors;
import io.bloomstream.jobs.console.JobFailedException;
import io.bloomstream.jobs.console.JsonObjects;
import io.bloomstream.jobs.console.Progress;
import io.bloomstream.jobs.console.RunOptions;
import io.bloomstream.jobs.sql.SqlCommand;
import io.bloomstream.jobs.stream.BootstrapCommand;
import io.bloomstream.jobs.stream.CountCommand;
import io.bloomstream.jobs.stream.DedupCommand;
import io.bloomstream.jobs.stream.FrontierCommand;
import io.bloomstream.jobs.stream.ScreenCommand;
import io.bloomstream.jobs.testdata.GenerateTestDataCommand;
import io.bloomstream.jobs.tools.BuildFilterCommand;
import io.bloomstream.jobs.tools.InspectCommand;
import io.bloomstream.jobs.tools.PlanCommand;
import io.bloomstream.jobs.tools.QueryCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** Entry point of {@code bloomstream.jar}: dispatches to the subcommands. */
@Command(
        name = "bloomstream",
        mixinStandardHelpOptions = true,
        versionProvider = BuildVersion.class,
        description = "Bloom filter tools and Flink jobs.",
        subcommands = {
            PlanCommand.class,
            BuildFilterCommand.class,
            DedupCommand.class,
            BootstrapCommand.class,
            ScreenCommand.class,
            FrontierCommand.class,
            CountCommand.class,
            QueryCommand.class,
            SqlCommand.class,
            InspectCommand.class,
            GenerateTestDataCommand.class
        })
public final class Main implements Runnable, RunOptions.TerminalAware {

    private static final String LOG4J_CONTEXT_SELECTOR = "log4j2.contextSelector";

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    private final boolean stderrTerminal;

    private Main(boolean stderrTerminal) {
        this.stderrTerminal = stderrTerminal;
    }

    /**
     * Runs the command line and exits with its status; in a child JVM with the default heap if this
     * one was started without a heap size ({@link DefaultHeap}).
     */
    public static void main(String[] args) {
        java.util.OptionalInt child = DefaultHeap.relaunchIfNeeded(args, System.err);
        if (child.isPresent()) {
            System.exit(child.getAsInt());
        }
        // One log4j context for the whole process. By default log4j gives each class loader its
        // own, and Flink loads its RPC system (PekkoRpcActor) in a class loader of its own: that
        // context read the jar's log4j2.properties and printed Flink's internal errors on the
        // console, past the file that Logs.configure sends Flink's log to.
        if (System.getProperty(LOG4J_CONTEXT_SELECTOR) == null) {
            System.setProperty(
                    LOG4J_CONTEXT_SELECTOR,
                    "org.apache.logging.log4j.core.selector.BasicContextSelector");
        }
        Thread.setDefaultUncaughtExceptionHandler((thread, e) -> uncaught(thread, e, System.err));
        System.exit(commandLine(Progress.stderrIsTerminal()).execute(args));
    }

    /**
     * What the process does with an exception no thread caught: prints it as the JVM would, except
     * in Flink's shutdown hooks. A local job's mini-cluster closes asynchronously after the job's
     * result is in (Flink's {@code MiniClusterJobClient} does not wait for it), and when the
     * process exits meanwhile, Pekko's shutdown hook can fail to load a class from the RPC class
     * loader being closed ({@code NoClassDefFoundError}). The run's result is already out; the
     * error goes to Flink's log, not the console.
     */
    static void uncaught(Thread thread, Throwable e, java.io.PrintStream err) {
        if (thread.getName().startsWith("flink-shutdown-hook")) {
            org.slf4j.LoggerFactory.getLogger(Main.class)
                    .info("Ignored at exit, in {}: {}", thread.getName(), e.toString());
            return;
        }
        err.print("Exception in thread \"" + thread.getName() + "\" ");
        e.printStackTrace(err);
    }

    /** Runs the command line and returns its exit status (0 ok, 2 bad usage, 1 failure). */
    public static int run(String... args) {
        return commandLine().execute(args);
    }

    /**
     * The command line, with its exception handling: bad input is a message, not a trace. Run
     * in-process, its stderr is not taken for a terminal.
     */
    public static CommandLine commandLine() {
        return commandLine(false);
    }

    private static CommandLine commandLine(boolean stderrTerminal) {
        CommandLine cl = new CommandLine(new Main(stderrTerminal));
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        cl.setExecutionExceptionHandler(
                (e, commandLine, parseResult) -> {
                    String error = flagNames(FileErrors.describe(e), commandLine);
                    commandLine.getErr().println("error: " + error);
                    java.nio.file.Path log = null;
                    if (e instanceof JobFailedException) {
                        // the root cause in one line; the stack traces are in Flink's log
                        log = ((JobFailedException) e).logFile;
                        if (log != null) {
                            commandLine.getErr().println("Flink's log: " + log);
                        }
                    } else if (!(e instanceof java.io.IOException)
                            && !(e instanceof IllegalArgumentException)) {
                        e.printStackTrace(commandLine.getErr());
                    }
                    commandLine.getErr().flush();
                    if (wantsJson(parseResult)) {
                        JsonObjects.failure(
                                commandLine.getOut(), commandLine.getCommandName(), error, log, 1);
                    }
                    return 1;
                });
        cl.setParameterExceptionHandler(
                (e, args) -> {
                    CommandLine bad = e.getCommandLine();
                    String error = usageError(e);
                    bad.getErr().println("error: " + error);
                    bad.getErr().println(helpLine(bad));
                    bad.getErr().flush();
                    int status = bad.getCommandSpec().exitCodeOnInvalidInput();
                    if (java.util.Arrays.asList(args).contains("--json")) {
                        JsonObjects.failure(
                                bad.getOut(), bad.getCommandName(), error, null, status);
                    }
                    return status;
                });
        cl.setExecutionStrategy(
                parseResult -> {
                    warnHighRates(parseResult);
                    return new CommandLine.RunLast().execute(parseResult);
                });
        return cl;
    }

    /**
     * A usage error in one line: its message with flags named as flags, and for an unknown flag the
     * nearest ones. The whole usage is not printed: it scrolled the error out of sight.
     */
    static String usageError(CommandLine.ParameterException e) {
        // picocli starts some messages with its own "Error: "; ours says "error: " once
        String message =
                e.getMessage().startsWith("Error: ") ? e.getMessage().substring(7) : e.getMessage();
        String error = flagNames(message, e.getCommandLine());
        if (e instanceof CommandLine.UnmatchedArgumentException u) {
            java.util.List<String> near = u.getSuggestions();
            if (!near.isEmpty()) {
                error += ": did you mean " + String.join(" or ", near) + "?";
            }
        }
        return error;
    }

    /** The line after a usage error: where the flags are described. */
    static String helpLine(CommandLine commandLine) {
        String name = commandLine.getCommandSpec().qualifiedName();
        return commandLine.getParent() == null
                ? "See '" + name + " --help' for the commands."
                : "See '" + name + " --help' for every flag.";
    }

    /**
     * {@code message} with the argument names of the library's builders that are the command's
     * flags written as flags: "expectedItems must be >= 1" becomes "--expected-items must be >= 1".
     */
    static String flagNames(String message, CommandLine commandLine) {
        if (message == null) {
            return null;
        }
        java.util.regex.Matcher m =
                java.util.regex.Pattern.compile("(?<![-\\w])([a-z][A-Za-z]*)(?= must )")
                        .matcher(message);
        StringBuilder s = new StringBuilder();
        while (m.find()) {
            String flag =
                    "--"
                            + m.group(1)
                                    .replaceAll("([A-Z])", "-$1")
                                    .toLowerCase(java.util.Locale.ROOT);
            boolean known = commandLine.getCommandSpec().findOption(flag) != null;
            m.appendReplacement(
                    s, java.util.regex.Matcher.quoteReplacement(known ? flag : m.group(1)));
        }
        m.appendTail(s);
        return s.toString();
    }

    /**
     * Warns, on the command's stderr, of each rate option ({@code --fpp}) at a high value; with
     * {@code --exact}, where no answer is wrong, notes what the rate costs instead.
     */
    private static void warnHighRates(CommandLine.ParseResult parseResult) {
        CommandLine.ParseResult p = parseResult;
        while (p.hasSubcommand()) {
            p = p.subcommand();
        }
        boolean exact = Boolean.TRUE.equals(p.matchedOptionValue("--exact", Boolean.FALSE));
        for (CommandLine.Model.OptionSpec o : p.matchedOptions()) {
            if (o.longestName().equals("--fpp") && o.getValue() instanceof Double rate) {
                String warning =
                        exact
                                ? io.bloomstream.jobs.io.Rates.exactNote(o.longestName(), rate)
                                : io.bloomstream.jobs.io.Rates.warning(o.longestName(), rate);
                if (warning != null) {
                    p.commandSpec()
                            .commandLine()
                            .getErr()
                            .println((exact ? "note: " : "warning: ") + warning);
                    p.commandSpec().commandLine().getErr().flush();
                }
            }
        }
    }

    /** Whether the command that ran (the deepest subcommand) was given {@code --json}. */
    private static boolean wantsJson(CommandLine.ParseResult parseResult) {
        CommandLine.ParseResult p = parseResult;
        while (p != null && p.hasSubcommand()) {
            p = p.subcommand();
        }
        return p != null && p.hasMatchedOption("--json");
    }

    /** Whether stderr is a terminal: only under {@link #main}, if it is one. */
    @Override
    public boolean stderrIsTerminal() {
        return stderrTerminal;
    }

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing command");
    }
}
