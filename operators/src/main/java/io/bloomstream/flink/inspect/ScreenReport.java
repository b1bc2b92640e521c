package io.bloomstream.flink.inspect;

import java.util.Map;
import org.apache.flink.annotation.PublicEvolving;

/**
 * What a screen operator holds in a savepoint, from {@link BloomInspect#screen}: not a filter (the
 * filter is a file, loaded at start and on update) but which file is in force and the live overlay
 * of entries added and removed since.
 *
 * @param uid the operator's uid
 * @param filter the file in force: {@code path}, {@code version}, {@code checksum}, {@code
 *     sequence} (the last command processed), as recorded
 * @param overlayAdded entries added live (listed although not in the file)
 * @param overlayRemoved entries removed live (not listed although in the file)
 * @param stateBytes the operator's whole state in the savepoint, or -1 if not known
 */
@PublicEvolving
public record ScreenReport(
        String uid,
        Map<String, String> filter,
        long overlayAdded,
        long overlayRemoved,
        long stateBytes) {}
