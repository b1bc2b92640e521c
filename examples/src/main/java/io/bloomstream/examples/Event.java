package io.bloomstream.examples;

/** An event of the examples: a user, an event id and an event time in milliseconds. A POJO. */
public class Event {
    public String user;
    public String id;
    public long time;

    public Event() {}

    public Event(String user, String id, long time) {
        this.user = user;
        this.id = id;
        this.time = time;
    }

    @Override
    public String toString() {
        return user + "/" + id + "@" + time;
    }
}
