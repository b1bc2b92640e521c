package io.bloomstream.flink.inspect;

import io.bloomstream.filter.Estimate;
import java.util.List;
import java.util.Map;
import org.apache.flink.annotation.PublicEvolving;

/**
 * What a dedup or count operator holds in a savepoint, from {@link BloomInspect}.
 *
 * <p>The fullest stage's fill and false-positive rate are the figures of the operator's metrics
 * ({@code bloomWorstFillRatio}, {@code bloomEstimatedFpp}) and of the command's run summary: they
 * follow from the items a stage holds, its bits, hashes and page size. The estimate of distinct
 * items is read from the bits the pages actually hold (n = m ln(m/m0) / k per stage, summed over
 * stages and keys), with its standard error; it is independent of the recorded item counts, and a
 * check of them.
 *
 * @param kind "dedup" or "count"
 * @param uid the operator's uid
 * @param shape the operator's shape record ({@code name=value} fields: strategy, seed, shards, fpp,
 *     expected items, exact mode, ...), empty if the savepoint has none (bloomstream 0.1)
 * @param keys the keys holding a filter (shards in global mode)
 * @param pages the pages allocated, over all keys, stages and generations
 * @param pageBytes the pages' bytes (8 per 64-bit word)
 * @param stateBytes the operator's whole state in the savepoint (all its states, as Flink recorded
 *     it), or -1 if not known
 * @param meanFill the mean over keys of each key's fullest stage's fill (set bits / bits)
 * @param fullest the fullest keys, by their fullest stage's fill, most full first (at most {@link
 *     BloomInspect#FULLEST_KEYS})
 * @param itemsAdded the items the filters recorded as added (dedup: the ids passed and still held)
 * @param estimate the estimated distinct items the filters have seen, from the set bits, with its
 *     standard error: it also counts the items dropped as false positives, which {@code itemsAdded}
 *     leaves out (at 10^7 ids and fill 0.36, 7,498,227 &plusmn; 560 against 7,498,941 distinct ids
 *     read and 7,496,488 added)
 * @param fullestStageFill the fill expected of the fullest stage from its items (1 - e^(-kn/m))
 * @param fullestStageFpp the false-positive rate of the fullest stage from its items
 * @param targetFpp the configured false-positive rate (from the shape), or NaN if not recorded
 * @param maxStages the most cascade stages of a key's newest generation
 * @param generations the most generations (slots) of a key
 * @param exactEntries dedup in exact mode: the exact entries held (one per id added); -1 otherwise
 */
@PublicEvolving
public record FilterReport(
        String kind,
        String uid,
        Map<String, String> shape,
        long keys,
        long pages,
        long pageBytes,
        long stateBytes,
        double meanFill,
        List<KeyFill> fullest,
        long itemsAdded,
        Estimate estimate,
        double fullestStageFill,
        double fullestStageFpp,
        double targetFpp,
        int maxStages,
        int generations,
        long exactEntries) {

    /**
     * One key's fill.
     *
     * @param key the key as text (a shard number in global mode)
     * @param fill its fullest stage's set bits over bits
     * @param items the items its stages recorded
     * @param stages its stages, over all generations
     */
    @PublicEvolving
    public record KeyFill(String key, double fill, long items, int stages) {}

    /** Whether the current rate of the fullest stage is above the target. */
    public boolean overTarget() {
        return fullestStageFpp > targetFpp;
    }
}
