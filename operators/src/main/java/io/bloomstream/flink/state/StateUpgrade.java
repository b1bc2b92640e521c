package io.bloomstream.flink.state;

import io.bloomstream.filter.Hasher;
import io.bloomstream.flink.internal.RefusedRestore;
import java.util.List;
import org.apache.flink.annotation.Internal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The upgrade path of dedup state written by bloomstream 0.1, whose metadata recorded neither the
 * time domain, the generation length and phase, nor each stage's page count: they are filled in
 * when a key is first read, and written back at once.
 */
@Internal
final class StateUpgrade {

    private static final Logger LOG = LoggerFactory.getLogger(StateUpgrade.class);

    private StateUpgrade() {}

    /**
     * Checks that a key's state can be read under this config, and fills in what state written by
     * bloomstream 0.1 did not record, writing it back at once (so a later restore with another
     * retention reads it right). 0.1 wrote one slot without retention and G with it, buckets
     * epoch-aligned (phase 0) of the config's generation length, which it did not record: the first
     * restore of 0.1 state with retention must keep the retention (a change of G or of retention on
     * or off is detected and fails).
     *
     * @return whether the metadata was filled in (and must be written back)
     */
    static boolean adopt(
            FilterMeta meta, Hasher hasher, int domain, int generations, long generationMillis) {
        meta.checkHasher(hasher);
        if (meta.domain == FilterMeta.UNRECORDED) {
            int recorded = meta.generations() == 1 ? FilterMeta.DOMAIN_NONE : domain;
            if ((recorded == FilterMeta.DOMAIN_NONE) != (domain == FilterMeta.DOMAIN_NONE)) {
                throw mismatch(
                        "timeDomain",
                        StateLayout.domainName(recorded),
                        StateLayout.domainName(domain));
            }
            if (domain != FilterMeta.DOMAIN_NONE && meta.generations() != generations) {
                throw mismatch(
                        "generations",
                        Integer.toString(meta.generations()),
                        Integer.toString(generations)
                                + " (state of bloomstream 0.1 must first be restored with its"
                                + " own retention and generations)");
            }
            meta.domain = domain;
            meta.generationMillis = generationMillis;
            meta.offset = 0;
            return true;
        } else if (meta.domain != domain) {
            throw mismatch(
                    "timeDomain",
                    StateLayout.domainName(meta.domain),
                    StateLayout.domainName(domain));
        }
        return false;
    }

    /**
     * The key's pages, as recorded in its metadata; state of bloomstream 0.1 did not record them,
     * so they are counted (per stage) once, by one pass over the key's pages, and then recorded.
     */
    static long countPages(FilterMeta meta, FilterStore store) throws Exception {
        long recorded = meta.pages();
        if (recorded != FilterMeta.UNKNOWN_PAGES) {
            return recorded;
        }
        for (List<FilterMeta.Stage> slot : meta.slots) {
            for (FilterMeta.Stage st : slot) {
                st.pages = 0;
            }
        }
        for (Long pageKey : store.pageKeys()) {
            int slot = StateLayout.slotOf(pageKey);
            int stage = StateLayout.stageOf(pageKey);
            if (slot < meta.generations() && stage < meta.slots.get(slot).size()) {
                meta.slots.get(slot).get(stage).pages++;
            } else {
                // Never written by this class; not counted, as freeing uses the recorded counts.
                LOG.warn("page {} has no stage in the key's metadata {}", pageKey, meta);
            }
        }
        return meta.pages();
    }

    private static RuntimeException mismatch(String field, String was, String now) {
        return RefusedRestore.of(
                "cannot restore dedup state: field "
                        + field
                        + " was "
                        + was
                        + " in the savepoint and is "
                        + now
                        + " in the job's config");
    }
}
