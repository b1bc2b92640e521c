package io.bloomstream.filter;

import java.util.Locale;

/**
 * How list entries and screened values are normalized before hashing. A filter file records the
 * normalization it was built with, and a screen refuses a file built with another one: a filter of
 * lowercased addresses probed with raw ones would miss every capitalized address. The ids are part
 * of the binary format and never change.
 */
public enum Normalization {
    /** The value as it is (an empty value is unusable). */
    NONE(1),
    /** Trimmed and lowercased (locale-independent). */
    LOWERCASE(2),
    /**
     * An e-mail address: trimmed, a {@code mailto:} prefix and a {@code "Name <...>"} wrapper
     * removed, lowercased, a trailing dot of the domain dropped. Unusable unless it has a non-empty
     * local part and domain around its last {@code @}.
     */
    EMAIL(3),
    /**
     * The domain of an address: the part after the last {@code @} (or the whole value when it has
     * none, so a list may hold bare domains), trimmed, lowercased, trailing dot dropped.
     */
    DOMAIN(4);

    private final int id;

    Normalization(int id) {
        this.id = id;
    }

    /** The stable id written into the binary format (0 there means "not recorded"). */
    public int id() {
        return id;
    }

    /**
     * The normalization with this id.
     *
     * @throws IllegalArgumentException for an unknown id
     */
    public static Normalization fromId(int id) {
        for (Normalization n : values()) {
            if (n.id == id) {
                return n;
            }
        }
        throw new IllegalArgumentException("unknown normalization id " + id);
    }

    /** The normalization named {@code none}, {@code lowercase}, {@code email} or {@code domain}. */
    public static Normalization parse(String name) {
        for (Normalization n : values()) {
            if (n.name().equalsIgnoreCase(name)) {
                return n;
            }
        }
        throw new IllegalArgumentException(
                "normalization must be none, lowercase, email or domain, was '" + name + "'");
    }

    /** The normalized value, or null when {@code value} is null or unusable under this mode. */
    public String apply(String value) {
        if (value == null) {
            return null;
        }
        String v;
        switch (this) {
            case NONE:
                v = value;
                break;
            case LOWERCASE:
                v = value.trim().toLowerCase(Locale.ROOT);
                break;
            case EMAIL:
                v = email(value);
                break;
            case DOMAIN:
                v = domain(value);
                break;
            default:
                throw new AssertionError(this);
        }
        return v == null || v.isEmpty() ? null : v;
    }

    private static String email(String value) {
        String v = unwrap(value);
        int at = v.lastIndexOf('@');
        if (at <= 0 || at == v.length() - 1) {
            return null;
        }
        String domain = stripDot(v.substring(at + 1));
        return domain.isEmpty() ? null : v.substring(0, at + 1) + domain;
    }

    private static String domain(String value) {
        String v = unwrap(value);
        return stripDot(v.substring(v.lastIndexOf('@') + 1));
    }

    private static String unwrap(String value) {
        String v = value.trim();
        int open = v.lastIndexOf('<');
        int close = v.lastIndexOf('>');
        if (open >= 0 && close > open) {
            v = v.substring(open + 1, close).trim();
        }
        v = v.toLowerCase(Locale.ROOT);
        return v.startsWith("mailto:") ? v.substring("mailto:".length()) : v;
    }

    private static String stripDot(String domain) {
        return domain.endsWith(".") ? domain.substring(0, domain.length() - 1) : domain;
    }

    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
