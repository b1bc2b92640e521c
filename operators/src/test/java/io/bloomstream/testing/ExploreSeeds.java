package io.bloomstream.testing;

import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.Method;
import java.security.SecureRandom;
import java.util.Optional;
import net.jqwik.api.AfterFailureMode;
import net.jqwik.api.EdgeCasesMode;
import net.jqwik.api.lifecycle.AroundPropertyHook;
import net.jqwik.api.lifecycle.PropagationMode;
import net.jqwik.api.lifecycle.PropertyExecutionResult;
import net.jqwik.api.lifecycle.PropertyExecutor;
import net.jqwik.api.lifecycle.PropertyLifecycleContext;

/**
 * The seeds of every jqwik property in the build (registered for all of them through {@code
 * META-INF/services/net.jqwik.api.lifecycle.LifecycleHook}).
 *
 * <ul>
 *   <li>By default a property keeps the seed it pins ({@code @Property(seed = ...)}), so CI replays
 *       the same scenarios every run.
 *   <li>{@code -Dbloomstream.modelSeed=S} replaces every pinned seed by S.
 *   <li>{@code -Dbloomstream.explore=true} (the {@code explore} Maven profile) gives each property
 *       a fresh seed (or S, to replay a finding), turns edge cases on ({@link EdgeCasesMode#MIXIN},
 *       which CI's model tests leave off) and prints the seed of each property before it runs, so a
 *       failure found by exploring can be replayed and kept as a fixed regression case.
 * </ul>
 *
 * <p>The number of tries is each test's own business ({@code -Dbloomstream.modelTries}, scaled by
 * the model tests' own hooks).
 */
public final class ExploreSeeds implements AroundPropertyHook {

    /** System property: a seed for every property. */
    public static final String SEED_PROPERTY = "bloomstream.modelSeed";

    /** System property: {@code true} for fresh seeds and edge cases. */
    public static final String EXPLORE_PROPERTY = "bloomstream.explore";

    private static final SecureRandom FRESH = new SecureRandom();

    @Override
    public boolean appliesTo(Optional<AnnotatedElement> element) {
        return element.filter(e -> e instanceof Method).isPresent();
    }

    @Override
    public PropagationMode propagateTo() {
        return PropagationMode.ALL_DESCENDANTS;
    }

    @Override
    public PropertyExecutionResult aroundProperty(
            PropertyLifecycleContext context, PropertyExecutor property) {
        String given = System.getProperty(SEED_PROPERTY, "").trim();
        boolean explore = Boolean.getBoolean(EXPLORE_PROPERTY);
        if (explore) {
            String seed = given.isEmpty() ? Long.toString(FRESH.nextLong()) : given;
            context.attributes().setSeed(seed);
            context.attributes().setEdgeCases(EdgeCasesMode.MIXIN);
            context.attributes().setAfterFailure(AfterFailureMode.RANDOM_SEED);
            System.out.printf(
                    "explore: %s#%s seed=%s tries=%s edgeCases=MIXIN"
                            + " (replay: -Dbloomstream.explore=true -D%s=%s)%n",
                    context.containerClass().getSimpleName(),
                    context.targetMethod().getName(),
                    seed,
                    context.attributes().tries().map(String::valueOf).orElse("default"),
                    SEED_PROPERTY,
                    seed);
        } else if (!given.isEmpty()) {
            context.attributes().setSeed(given);
        }
        return property.execute();
    }

    @Override
    public int aroundPropertyProximity() {
        // Inside the tests' own hooks (proximity 0), which scale the tries: they run first, so the
        // line printed names the scaled count.
        return 10;
    }
}
