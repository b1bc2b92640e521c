package io.bloomstream.jobs.stream;

import io.bloomstream.jobs.io.LineParser;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/** The input format options of {@code dedup} and {@code count}: text, or JSON with id and key. */
final class RecordFormat {

    @CommandLine.Spec(CommandLine.Spec.Target.MIXEE)
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--format", paramLabel = "FORMAT", description = "text (default) or json.")
    LineParser.Format format = LineParser.Format.TEXT;

    @Option(
            names = "--id-field",
            paramLabel = "F",
            description = "JSON: the id field (for count: the item counted).")
    String idField;

    @Option(names = "--key-field", paramLabel = "F", description = "JSON: the key field.")
    String keyField;

    /** Adds the options to the settings a state directory records ({@code --state-dir}). */
    void record(java.util.Map<String, String> settings) {
        settings.put("--format", format.name().toLowerCase(java.util.Locale.ROOT));
        settings.put("--id-field", idField);
        settings.put("--key-field", keyField);
    }

    /** Whether records have a key (one filter per key). */
    boolean keyed() {
        return keyField != null;
    }

    /** The parser; JSON needs --id-field, text takes no field flags. */
    LineParser parser() {
        return parser(null);
    }

    /** The parser, also reading {@code timeField} (JSON only) as the second value when not null. */
    LineParser parser(String timeField) {
        if (format == LineParser.Format.JSON) {
            if (idField == null) {
                throw new CommandLine.ParameterException(
                        spec.commandLine(), "--format json needs --id-field");
            }
            return new LineParser(
                    format,
                    keyField,
                    timeField == null ? List.of(idField) : List.of(idField, timeField));
        }
        if (timeField != null) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "--time-field needs --format json");
        }
        if (idField != null || keyField != null) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    "--id-field and --key-field need --format json (text input: one value a line)");
        }
        return new LineParser(format, null, List.of());
    }
}
