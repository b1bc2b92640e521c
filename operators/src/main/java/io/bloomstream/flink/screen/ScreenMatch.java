package io.bloomstream.flink.screen;

import java.util.Objects;
import org.apache.flink.annotation.PublicEvolving;

/**
 * A flagged event on the screen's side output: the event, the field that matched and its normalized
 * value. A POJO; {@link BloomScreen#flaggedTag} gives its type information.
 *
 * @param <T> the event type
 */
@PublicEvolving
public class ScreenMatch<T> {

    /** The flagged event. */
    public T event;

    /** The name of the first field that matched. */
    public String field;

    /** That field's normalized value. */
    public String value;

    /** For Flink's POJO serializer. */
    public ScreenMatch() {}

    /** A match of {@code field} = {@code value} in {@code event}. */
    public ScreenMatch(T event, String field, String value) {
        this.event = event;
        this.field = field;
        this.value = value;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof ScreenMatch)) {
            return false;
        }
        ScreenMatch<?> m = (ScreenMatch<?>) o;
        return Objects.equals(event, m.event)
                && Objects.equals(field, m.field)
                && Objects.equals(value, m.value);
    }

    @Override
    public int hashCode() {
        return Objects.hash(event, field, value);
    }

    @Override
    public String toString() {
        return field + "=" + value + ": " + event;
    }
}
