package io.bloomstream.flink;

import org.apache.flink.annotation.PublicEvolving;

/** Which clock drives an operator's time: retention, emission, windows. */
@PublicEvolving
public enum TimeDomain {
    /** Event timestamps and watermarks. */
    EVENT_TIME,
    /** The wall clock of the task manager. */
    PROCESSING_TIME
}
