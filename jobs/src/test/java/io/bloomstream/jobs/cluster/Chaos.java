package io.bloomstream.jobs.cluster;

import io.bloomstream.jobs.cluster.ChaosITCase.Kill;
import io.bloomstream.jobs.cluster.ChaosITCase.Recovery;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Kills one process of the cluster at a seeded moment, starts its replacement, and waits until the
 * jobs it hit have recovered: every subtask RUNNING again (deployed after the kill), and a
 * checkpoint triggered after the kill completed. Victims are drawn with the seeded {@link Random}
 * among the TaskManagers that run a subtask, so every kill hits a job.
 */
final class Chaos {

    private final StandaloneCluster cluster;
    private final ClusterRest rest;
    private final Map<String, String> jobs;
    private final Random random;
    private final List<String> notes = new ArrayList<>();

    Chaos(StandaloneCluster cluster, ClusterRest rest, Map<String, String> jobs, Random random) {
        this.cluster = cluster;
        this.rest = rest;
        this.jobs = jobs;
        this.random = random;
    }

    /** What was seen besides the times: the status of checkpoints in flight at a kill. */
    List<String> notes() {
        return notes;
    }

    /** Performs kill number {@code index} of kind {@code kind}; returns a recovery per job hit. */
    List<Recovery> kill(int index, Kill kind) throws Exception {
        TimeUnit.MILLISECONDS.sleep(1000 + random.nextInt(4000)); // the seeded moment
        Map<String, Set<String>> hosts = new LinkedHashMap<>();
        jobs.forEach((name, id) -> hosts.put(name, rest.taskManagersOf(id)));
        String victim;
        long killedAt;
        long inFlight = -1;
        String inFlightJob = null;
        switch (kind) {
            case JOB_MANAGER:
                victim = "jm";
                killedAt = System.currentTimeMillis();
                cluster.killJobManager();
                cluster.startJobManager();
                break;
            case TASK_MANAGER:
                victim =
                        draw(
                                hosts.values().stream()
                                        .flatMap(Set::stream)
                                        .collect(Collectors.toSet()));
                killedAt = System.currentTimeMillis();
                cluster.killTaskManager(victim);
                break;
            case TASK_MANAGER_MID_CHECKPOINT:
                // A TaskManager running a subtask that has not acknowledged the checkpoint in
                // progress: the checkpoint cannot complete, the job restores the one before.
                List<String> names = new ArrayList<>(jobs.keySet());
                inFlightJob = names.get(random.nextInt(names.size()));
                String id = jobs.get(inFlightJob);
                Map<String, String> where = rest.subtaskLocations(id);
                List<String> vertices =
                        where.keySet().stream()
                                .map(k -> k.substring(0, k.indexOf('/')))
                                .distinct()
                                .collect(Collectors.toList());
                Collections.reverse(vertices); // sinks acknowledge last
                long deadline = System.currentTimeMillis() + 60_000;
                String target = null;
                while (target == null) {
                    if (System.currentTimeMillis() > deadline) {
                        throw new AssertionError(
                                "no checkpoint of " + inFlightJob + " caught in progress in 60 s");
                    }
                    inFlight = rest.checkpointInProgress(id);
                    if (inFlight >= 0) {
                        List<String> pending = rest.pendingSubtasks(id, inFlight, vertices);
                        if (!pending.isEmpty()) {
                            target = where.get(pending.get(random.nextInt(pending.size())));
                        }
                    } else {
                        TimeUnit.MILLISECONDS.sleep(5); // polling a condition, with a deadline
                    }
                }
                victim = target;
                killedAt = System.currentTimeMillis();
                cluster.killTaskManager(victim);
                break;
            default:
                throw new IllegalArgumentException("kind: " + kind);
        }
        String replacement = kind == Kill.JOB_MANAGER ? null : cluster.startTaskManager();
        Map<String, String> hit = new LinkedHashMap<>();
        jobs.forEach(
                (name, id) -> {
                    if (kind == Kill.JOB_MANAGER || hosts.get(name).contains(victim)) {
                        hit.put(name, id);
                    }
                });
        System.out.printf(
                "kill %d: %s %s at %d; jobs hit: %s%s%n",
                index,
                kind,
                victim,
                killedAt,
                hit.keySet(),
                inFlight < 0
                        ? ""
                        : "; checkpoint " + inFlight + " of " + inFlightJob + " in progress");
        List<Recovery> recoveries = awaitRecovery(index, kind, victim, killedAt, hit);
        if (replacement != null) {
            ChaosITCase.await(
                    "TaskManager " + replacement + " registered",
                    () -> rest.taskManagerRegistered(replacement));
        }
        if (inFlight >= 0) {
            notes.add(
                    String.format(
                            "kill %d: checkpoint %d of %s, in progress at the kill with a subtask on %s"
                                    + " not acknowledged, ended %s",
                            index,
                            inFlight,
                            inFlightJob,
                            victim,
                            rest.checkpointStatus(jobs.get(inFlightJob), inFlight)));
        }
        return recoveries;
    }

    private String draw(Set<String> candidates) {
        List<String> live =
                cluster.liveTaskManagers().stream()
                        .filter(candidates::contains)
                        .sorted()
                        .collect(Collectors.toList());
        if (live.isEmpty()) {
            throw new IllegalStateException("no live TaskManager among " + candidates);
        }
        return live.get(random.nextInt(live.size()));
    }

    private List<Recovery> awaitRecovery(
            int index, Kill kind, String victim, long killedAt, Map<String, String> hit)
            throws InterruptedException {
        Map<String, Long> running = new LinkedHashMap<>();
        Map<String, Long> checkpointed = new LinkedHashMap<>();
        long deadline = killedAt + ChaosITCase.RECOVERY_TIMEOUT_MS;
        while (checkpointed.size() < hit.size()) {
            if (System.currentTimeMillis() > deadline) {
                throw new AssertionError(
                        "kill "
                                + index
                                + " ("
                                + kind
                                + " "
                                + victim
                                + "): not recovered in "
                                + ChaosITCase.RECOVERY_TIMEOUT_MS
                                + " ms: running "
                                + running
                                + ", checkpointed "
                                + checkpointed
                                + "; logs in "
                                + cluster.dir());
            }
            for (Map.Entry<String, String> job : hit.entrySet()) {
                if (!running.containsKey(job.getKey())
                        && rest.runningSince(job.getValue(), killedAt)) {
                    running.put(job.getKey(), System.currentTimeMillis() - killedAt);
                }
                if (running.containsKey(job.getKey()) && !checkpointed.containsKey(job.getKey())) {
                    long ack = rest.completedCheckpointAckedAfter(job.getValue(), killedAt);
                    if (ack > 0) {
                        checkpointed.put(job.getKey(), ack - killedAt);
                    }
                }
            }
            TimeUnit.MILLISECONDS.sleep(100); // polling a condition, with a deadline
        }
        List<Recovery> out = new ArrayList<>();
        for (String job : hit.keySet()) {
            out.add(
                    new Recovery(
                            index, kind, victim, job, running.get(job), checkpointed.get(job)));
        }
        return out;
    }
}
