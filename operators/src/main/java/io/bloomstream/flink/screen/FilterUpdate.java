package io.bloomstream.flink.screen;

import java.util.Objects;
import org.apache.flink.annotation.PublicEvolving;

/**
 * A live update of a screen, sent on the command stream that {@link BloomScreen} broadcasts to all
 * screening instances: add an entry, remove an entry, or load a new version of the filter file. A
 * POJO (Flink serializes it without Kryo); build it with the static factories or {@link #parse}.
 */
@PublicEvolving
public class FilterUpdate {

    /** What a command does. */
    public enum Type {
        /** Flag the entry from now on. */
        ADD,
        /** Stop flagging the entry (and only that entry). */
        REMOVE,
        /** Swap in the filter file at {@link #value} as version {@link #version}. */
        LOAD
    }

    /** What the command does. */
    public Type type;

    /** The entry (ADD, REMOVE), normalized by the screen, or the file path (LOAD). */
    public String value;

    /** The new filter version (LOAD only); it must exceed the version in force. */
    public long version;

    /**
     * The command's place in the one order every screening task applies commands in: 1, 2, 3, ...,
     * set by the screen's single command producer ({@link BloomScreen} adds it before the
     * broadcast); 0 until then. A value set by the sender is replaced; a screen rejects a command
     * without one.
     */
    public long sequence;

    /** For Flink's POJO serializer. */
    public FilterUpdate() {}

    private FilterUpdate(Type type, String value, long version) {
        this.type = type;
        this.value = value;
        this.version = version;
    }

    /** This command numbered {@code sequence} (a copy). */
    FilterUpdate withSequence(long sequence) {
        FilterUpdate c = new FilterUpdate(type, value, version);
        c.sequence = sequence;
        return c;
    }

    /** Flag {@code entry} from now on. */
    public static FilterUpdate add(String entry) {
        return new FilterUpdate(Type.ADD, Objects.requireNonNull(entry, "entry"), 0);
    }

    /** Stop flagging {@code entry}. */
    public static FilterUpdate remove(String entry) {
        return new FilterUpdate(Type.REMOVE, Objects.requireNonNull(entry, "entry"), 0);
    }

    /**
     * Load the filter file at {@code path} (any Flink file system URI) as {@code version}. The new
     * file replaces the old one and the adds and removes applied since, as it is taken to be the
     * whole list.
     */
    public static FilterUpdate load(String path, long version) {
        return new FilterUpdate(Type.LOAD, Objects.requireNonNull(path, "path"), version);
    }

    /**
     * Parses a text command: {@code add ENTRY}, {@code remove ENTRY} or {@code load VERSION PATH}
     * (words separated by one or more spaces; the entry or path is the rest of the line).
     *
     * @throws IllegalArgumentException naming the line when it is not a command
     */
    public static FilterUpdate parse(String line) {
        String[] parts = line == null ? new String[0] : line.trim().split("\\s+", 2);
        if (parts.length == 2) {
            switch (parts[0].toLowerCase(java.util.Locale.ROOT)) {
                case "add":
                    return add(parts[1]);
                case "remove":
                    return remove(parts[1]);
                case "load":
                    String[] rest = parts[1].split("\\s+", 2);
                    if (rest.length == 2) {
                        try {
                            return load(rest[1], Long.parseLong(rest[0]));
                        } catch (NumberFormatException e) {
                            // fall through to the error below
                        }
                    }
                    break;
                default:
                    break;
            }
        }
        throw new IllegalArgumentException(
                "not a screen command (add ENTRY | remove ENTRY | load VERSION PATH): '"
                        + line
                        + "'");
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof FilterUpdate)) {
            return false;
        }
        FilterUpdate c = (FilterUpdate) o;
        return type == c.type
                && Objects.equals(value, c.value)
                && version == c.version
                && sequence == c.sequence;
    }

    @Override
    public int hashCode() {
        return Objects.hash(type, value, version, sequence);
    }

    @Override
    public String toString() {
        String text = type == Type.LOAD ? "load " + version + " " + value : type + " " + value;
        return sequence == 0 ? text : "#" + sequence + " " + text;
    }
}
