package io.bloomstream.flink.internal;

import java.util.Objects;
import org.apache.flink.annotation.Internal;

/**
 * The rule for uids and names of the operators the library adds: every call takes one prefix (by
 * default the operator's {@code DEFAULT_UID}), its main operator has the prefix as uid and name,
 * and any helper operator it adds has the prefix and a suffix. The defaults give the uids of
 * earlier releases, so savepoints taken with them still restore.
 */
@Internal
public final class OperatorUids {

    private OperatorUids() {}

    /**
     * Checks a user's prefix.
     *
     * @throws IllegalArgumentException if it is blank
     */
    public static String checkPrefix(String uidPrefix) {
        Objects.requireNonNull(uidPrefix, "uidPrefix");
        if (uidPrefix.isBlank()) {
            throw new IllegalArgumentException(
                    "uidPrefix must not be blank, was '" + uidPrefix + "'");
        }
        return uidPrefix;
    }
}
