package io.bloomstream.testing;

import io.bloomstream.flink.IdSelector;

/** The events of the operator tests: {@code "key,id"} strings. */
public final class KeyedEvents {

    private KeyedEvents() {}

    /** The id part of an event, as an {@link IdSelector}. */
    public static IdSelector<String> idSelector() {
        return IdSelector.ofString(KeyedEvents::id);
    }

    /** The part before the first comma. */
    public static String key(String event) {
        return event.substring(0, event.indexOf(','));
    }

    /** The part after the first comma. */
    public static String id(String event) {
        return event.substring(event.indexOf(',') + 1);
    }
}
