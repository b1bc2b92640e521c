package io.bloomstream.jobs.stream;

import java.io.Serializable;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;

/**
 * Normalizes crawl URLs so that spellings of one resource compare equal (RFC 3986 section 6):
 *
 * <ul>
 *   <li>scheme and host lowercased; only http and https with a host are accepted;
 *   <li>a trailing dot of the host removed, the default port (80, 443) dropped;
 *   <li>the fragment dropped;
 *   <li>dot segments resolved ({@code /a/./b/../c} is {@code /a/c}), an empty path is {@code /};
 *   <li>percent-escapes of unreserved characters decoded ({@code %7E} is {@code ~}), other escapes'
 *       hex digits uppercased;
 *   <li>an empty query ({@code ?} alone) dropped.
 * </ul>
 *
 * <p>Not changed: the case of path and query, the order of query parameters, trailing slashes, and
 * {@code www.} prefixes, since servers may treat each as a different resource.
 */
final class UrlNormalizer implements Serializable {

    private static final long serialVersionUID = 1L;

    /** A URL that cannot be normalized, with the reason. */
    static final class MalformedUrl extends Exception {
        private static final long serialVersionUID = 1L;

        MalformedUrl(String reason) {
            super(reason);
        }
    }

    /** The normalized URL. */
    static String normalize(String raw) throws MalformedUrl {
        String s = raw == null ? "" : raw.trim();
        if (s.isEmpty()) {
            throw new MalformedUrl("empty line");
        }
        URI uri;
        try {
            uri = new URI(s);
        } catch (URISyntaxException e) {
            throw new MalformedUrl("not a URL: " + e.getReason());
        }
        String scheme = uri.getScheme() == null ? null : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!"http".equals(scheme) && !"https".equals(scheme)) {
            throw new MalformedUrl("not http or https");
        }
        String host = uri.getHost();
        if (host == null || host.isEmpty()) {
            throw new MalformedUrl("no host");
        }
        host = host.toLowerCase(Locale.ROOT);
        if (host.endsWith(".")) {
            host = host.substring(0, host.length() - 1);
        }
        int port = uri.getPort();
        if ((port == 80 && scheme.equals("http")) || (port == 443 && scheme.equals("https"))) {
            port = -1;
        }
        String path =
                uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
        path = removeDotSegments(percent(path));
        String query = uri.getRawQuery();
        StringBuilder out = new StringBuilder(s.length()).append(scheme).append("://");
        if (uri.getRawUserInfo() != null) {
            out.append(uri.getRawUserInfo()).append('@');
        }
        out.append(host);
        if (port != -1) {
            out.append(':').append(port);
        }
        out.append(path);
        if (query != null && !query.isEmpty()) {
            out.append('?').append(percent(query));
        }
        return out.toString();
    }

    /** The host of a normalized URL. */
    static String host(String normalized) {
        int start = normalized.indexOf("://") + 3;
        int at = normalized.indexOf('@', start);
        int slash = normalized.indexOf('/', start);
        if (at >= 0 && at < slash) {
            start = at + 1;
        }
        int end = slash;
        int colon = normalized.lastIndexOf(':', end);
        if (colon > start && normalized.charAt(start) != '[') {
            end = colon;
        }
        return normalized.substring(start, end);
    }

    private static String percent(String s) {
        if (s.indexOf('%') < 0) {
            return s;
        }
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '%' && i + 2 < s.length() && hex(s.charAt(i + 1)) && hex(s.charAt(i + 2))) {
                int v = Integer.parseInt(s.substring(i + 1, i + 3), 16);
                if (unreserved((char) v)) {
                    b.append((char) v);
                } else {
                    b.append('%').append(s.substring(i + 1, i + 3).toUpperCase(Locale.ROOT));
                }
                i += 2;
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    private static boolean hex(char c) {
        return Character.digit(c, 16) >= 0;
    }

    private static boolean unreserved(char c) {
        return (c >= 'a' && c <= 'z')
                || (c >= 'A' && c <= 'Z')
                || (c >= '0' && c <= '9')
                || c == '-'
                || c == '.'
                || c == '_'
                || c == '~';
    }

    /**
     * RFC 3986 section 5.2.4, in linear time: the RFC's loop, reading the input with an index
     * instead of removing from the front of a buffer (which made a 160 KB path cost 6 s), and
     * writing to an output whose last segment is removed from its end. Each input character is read
     * a bounded number of times and appended at most once, so removing a segment costs what
     * appending it did: O(length) in all.
     */
    static String removeDotSegments(String path) {
        if (!path.startsWith(".") && !path.contains("/.")) {
            return path; // no dot segment: the common case, nothing to do
        }
        int n = path.length();
        StringBuilder out = new StringBuilder(n);
        int i = 0;
        while (i < n) {
            int rest = n - i;
            if (path.startsWith("../", i)) { // A
                i += 3;
            } else if (path.startsWith("./", i) || path.startsWith("/./", i)) { // A, B
                i += 2;
            } else if (rest == 2 && path.startsWith("/.", i)) { // B: "/." becomes "/"
                out.append('/');
                i = n;
            } else if (path.startsWith("/../", i)) { // C
                i += 3;
                trimLastSegment(out);
            } else if (rest == 3 && path.startsWith("/..", i)) { // C: "/.." becomes "/"
                trimLastSegment(out);
                out.append('/');
                i = n;
            } else if ((rest == 1 && path.charAt(i) == '.')
                    || (rest == 2 && path.startsWith("..", i))) { // D
                i = n;
            } else { // E: the first segment, with its leading slash, moves to the output
                int next = path.indexOf('/', path.charAt(i) == '/' ? i + 1 : i);
                int end = next < 0 ? n : next;
                out.append(path, i, end);
                i = end;
            }
        }
        return out.length() == 0 ? "/" : out.toString();
    }

    /** Removes the last segment and its slash from {@code out} (RFC 3986 section 5.2.4 C). */
    private static void trimLastSegment(StringBuilder out) {
        int slash = out.lastIndexOf("/");
        out.setLength(Math.max(slash, 0));
    }
}
