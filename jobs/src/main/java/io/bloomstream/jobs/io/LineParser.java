package io.bloomstream.jobs.io;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.io.Serializable;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * Parses input lines: text (the line is the value) or JSON lines (top-level fields by name, strings
 * or numbers). A line that cannot be parsed, or lacks a required field, raises {@link BadRecord}.
 *
 * <p>A JSON record naming a field it reads (the key or one of the fields) twice is refused with the
 * reason {@code duplicate field 'NAME'}: JSON leaves the meaning of a repeated name open (RFC 8259
 * section 4), so {@code {"from":"listed@x","from":"ok@y"}} would be screened on one value and read
 * downstream on the other. Names are compared decoded ({@code "fr\u006fm"} is {@code from}); a
 * repeated field it does not read is left alone.
 */
public final class LineParser implements Serializable {

    private static final long serialVersionUID = 1L;
    private static final JsonFactory JSON = new JsonFactory();

    /** Input formats. */
    public enum Format {
        /** One value per line. */
        TEXT,
        /** One JSON object per line. */
        JSON
    }

    /** A record that cannot be used, with the reason. */
    public static final class BadRecord extends Exception {
        private static final long serialVersionUID = 1L;

        /** A bad record for {@code reason}. */
        public BadRecord(String reason) {
            super(reason);
        }
    }

    private final Format format;
    private final String keyField;
    private final String[] fields;

    /**
     * A parser of {@code format}; for JSON, {@code fields} name the values to extract (required)
     * and {@code keyField} the key (required when not null).
     */
    public LineParser(Format format, String keyField, List<String> fields) {
        this.format = Objects.requireNonNull(format, "format");
        this.keyField = keyField;
        this.fields = fields.toArray(new String[0]);
        if (format == Format.JSON && this.fields.length == 0) {
            throw new IllegalArgumentException("JSON input needs the field(s) to read");
        }
        if (this.fields.length > Long.SIZE) {
            // the fields seen in a record are one long's bits
            throw new IllegalArgumentException(
                    "at most " + Long.SIZE + " fields, not " + this.fields.length);
        }
    }

    /** Turns a line into a record or says why it cannot. */
    @FunctionalInterface
    public interface RecordParser extends Serializable {
        /** The record of {@code line}. */
        Parsed parse(String line) throws BadRecord;
    }

    /**
     * Parses a line knowing the record's timestamp as the source assigned it ({@code
     * Long.MIN_VALUE} or null: none).
     */
    public interface TimedRecordParser extends Serializable {
        /** The record of {@code line}, whose assigned timestamp is {@code timestamp}. */
        Parsed parse(String line, Long timestamp) throws BadRecord;
    }

    /** Parses one line. */
    public Parsed parse(String line) throws BadRecord {
        if (line == null) {
            throw new BadRecord("null record");
        }
        if (Utf8Lines.unreadable(line)) {
            throw new BadRecord(Utf8Lines.reason(line));
        }
        if (format == Format.TEXT) {
            if (line.isBlank()) {
                throw new BadRecord("empty line");
            }
            return new Parsed(line, null, new String[] {line});
        }
        String[] values = new String[fields.length];
        long seen = 0; // bit i: fields[i] was named
        boolean keySeen = false;
        String key = null;
        try (JsonParser p = JSON.createParser(line)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new BadRecord("not a JSON object");
            }
            for (JsonToken t = p.nextToken(); t == JsonToken.FIELD_NAME; t = p.nextToken()) {
                String name = p.currentName();
                JsonToken v = p.nextToken();
                String text = v.isScalarValue() && v != JsonToken.VALUE_NULL ? p.getText() : null;
                if (!v.isScalarValue()) {
                    p.skipChildren();
                }
                if (name.equals(keyField)) {
                    if (keySeen) {
                        throw duplicate(name);
                    }
                    keySeen = true;
                    key = text;
                }
                for (int i = 0; i < fields.length; i++) {
                    if (name.equals(fields[i])) {
                        if ((seen & (1L << i)) != 0) {
                            throw duplicate(name);
                        }
                        seen |= 1L << i;
                        values[i] = text;
                    }
                }
            }
            if (p.currentToken() != JsonToken.END_OBJECT || p.nextToken() != null) {
                throw new BadRecord("not a single JSON object");
            }
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new BadRecord("not JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new BadRecord("not JSON: " + e.getMessage());
        }
        if (keyField != null && (key == null || key.isEmpty())) {
            throw new BadRecord("missing key field '" + keyField + "'");
        }
        return new Parsed(line, key, values);
    }

    private static BadRecord duplicate(String name) {
        return new BadRecord("duplicate field '" + name + "'");
    }

    /** Requires every value to be present. */
    public Parsed parseComplete(String line) throws BadRecord {
        Parsed p = parse(line);
        for (int i = 0; i < p.values.length; i++) {
            if (p.values[i] == null || p.values[i].isEmpty()) {
                throw new BadRecord(
                        "missing field '" + (i < fields.length ? fields[i] : "line") + "'");
            }
        }
        return p;
    }

    @Override
    public String toString() {
        return format
                + " "
                + Arrays.toString(fields)
                + (keyField == null ? "" : " key " + keyField);
    }
}
