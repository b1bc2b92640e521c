package io.bloomstream;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import com.tngtech.archunit.library.GeneralCodingRules;
import io.bloomstream.table.BloomFunctions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.annotation.Internal;
import org.apache.flink.annotation.PublicEvolving;
import org.junit.jupiter.api.Test;

/**
 * The rules of the package layout (see {@code io.bloomstream.flink}'s package documentation), so
 * that the house stays as it is laid out: capabilities apart, internals behind {@code @Internal},
 * nothing printed by library code. {@code FilterPurityTest} keeps the filter core free of Flink.
 */
class PackageRulesTest {

    private static final JavaClasses LIBRARY =
            new ClassFileImporter()
                    .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                    .importPackages("io.bloomstream");

    private static final String DEDUP = "io.bloomstream.flink.dedup..";
    private static final String SCREEN = "io.bloomstream.flink.screen..";
    private static final String COUNT = "io.bloomstream.flink.count..";

    /** The bootstrap's classes (and their nested classes): a top-level name with "Bootstrap". */
    private static final String BOOTSTRAP = ".*\\.[A-Za-z0-9]*Bootstrap[A-Za-z0-9]*(\\$.*)?";

    @Test
    void dedupScreenAndCountDoNotDependOnEachOther() {
        noClasses()
                .that()
                .resideInAPackage(DEDUP)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(SCREEN, COUNT)
                .check(LIBRARY);
        noClasses()
                .that()
                .resideInAPackage(SCREEN)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(DEDUP, COUNT)
                .check(LIBRARY);
        noClasses()
                .that()
                .resideInAPackage(COUNT)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(DEDUP, SCREEN)
                .check(LIBRARY);
    }

    @Test
    void sharedFlinkPackagesDependOnNoCapability() {
        noClasses()
                .that()
                .resideInAnyPackage(
                        "io.bloomstream.flink",
                        "io.bloomstream.flink.internal..",
                        "io.bloomstream.flink.state..",
                        "io.bloomstream.flink.typeutils..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(DEDUP, SCREEN, COUNT, "io.bloomstream.table..")
                .check(LIBRARY);
    }

    /**
     * flink-state-processor-api is {@code provided}: a job that does not call the bootstrap ({@code
     * DedupBootstrap}) must not need it. Only the bootstrap's classes use it, and no other class of
     * the library uses them.
     */
    @Test
    void onlyTheBootstrapNeedsTheStateProcessorApi() {
        noClasses()
                .that()
                .resideInAnyPackage(
                        DEDUP,
                        "io.bloomstream.flink.internal..",
                        "io.bloomstream.flink.state..",
                        "io.bloomstream.flink.typeutils..")
                .and()
                .haveNameNotMatching(BOOTSTRAP)
                .should()
                .dependOnClassesThat()
                .resideInAPackage("org.apache.flink.state.api..")
                .check(LIBRARY);
        noClasses()
                .that()
                .haveNameNotMatching(BOOTSTRAP)
                .should()
                .dependOnClassesThat(
                        JavaClass.Predicates.resideInAPackage("io.bloomstream..")
                                .and(
                                        com.tngtech.archunit.core.domain.properties.HasName
                                                .Predicates.nameMatching(BOOTSTRAP)))
                .check(LIBRARY);
    }

    /**
     * The judge and the state backend meet at one narrow bloomstream interface ({@code
     * io.bloomstream.flink.state.FilterStore}), never at Flink's state interfaces: the SQL
     * functions keep their state in {@code MapView}s and give the judge a store over them, and no
     * SQL type makes a {@code MapView} pretend to be a {@code MapState} or {@code ValueState} (an
     * adapter that makes one Flink API pretend to be another is a sign the seam sits in the wrong
     * place).
     */
    @Test
    void noSqlTypeImplementsAFlinkStateInterface() {
        noClasses()
                .that()
                .resideInAPackage("io.bloomstream.table..")
                .should()
                .implement(org.apache.flink.api.common.state.State.class)
                .check(LIBRARY);
    }

    @Test
    void internalPackagesHoldOnlyInternalTypes() {
        classes()
                .that()
                .resideInAnyPackage(
                        "io.bloomstream.flink.internal..",
                        "io.bloomstream.flink.state..",
                        "io.bloomstream.table.internal..")
                .and()
                .arePublic()
                .and()
                .areTopLevelClasses()
                .should()
                .beAnnotatedWith(Internal.class)
                .check(LIBRARY);
    }

    @Test
    void everyPublicFlinkTypeSaysWhetherItIsApi() {
        classes()
                .that()
                .resideInAnyPackage("io.bloomstream.flink..", "io.bloomstream.table..")
                .and()
                .arePublic()
                .and()
                .areTopLevelClasses()
                .should()
                .beAnnotatedWith(Internal.class)
                .orShould()
                .beAnnotatedWith(PublicEvolving.class)
                .check(LIBRARY);
    }

    @Test
    void noPublicSignatureExposesAnInternalType() {
        classes()
                .that()
                .arePublic()
                .and()
                .areNotAnnotatedWith(Internal.class)
                .should(exposeNoInternalType())
                .check(LIBRARY);
    }

    @Test
    void noTwoPublicTypesShareASimpleName() {
        Map<String, List<String>> byName = new TreeMap<>();
        for (JavaClass c : LIBRARY) {
            if (c.getModifiers().contains(JavaModifier.PUBLIC)
                    && c.isTopLevelClass()
                    && !c.isAnnotatedWith(Deprecated.class)) {
                byName.computeIfAbsent(c.getSimpleName(), n -> new ArrayList<>()).add(c.getName());
            }
        }
        byName.values().removeIf(names -> names.size() < 2);
        assertThat(byName).as("public types by simple name (deprecated ones aside)").isEmpty();
    }

    /** PyFlink's {@code create_java_temporary_function} and {@code CREATE FUNCTION} need it. */
    @Test
    @SuppressWarnings("deprecation")
    void everySqlFunctionClassHasAPublicNoArgumentConstructor() throws Exception {
        List<Class<?>> functions = new ArrayList<>(BloomFunctions.all().values());
        functions.addAll(
                List.of(
                        io.bloomstream.table.BloomDedup.class,
                        io.bloomstream.table.BloomShard.class,
                        io.bloomstream.table.BloomCountDistinct.class,
                        io.bloomstream.table.BloomBuild.class,
                        io.bloomstream.table.BloomUnion.class,
                        io.bloomstream.table.BloomEstimate.class,
                        io.bloomstream.table.BloomMightContain.class));
        for (Class<?> f : functions) {
            assertThat(java.lang.reflect.Modifier.isPublic(f.getModifiers()))
                    .as(f.getName())
                    .isTrue();
            assertThat(f.getConstructor().newInstance()).as(f.getName()).isNotNull();
        }
    }

    @Test
    void libraryCodeDoesNotPrint() {
        GeneralCodingRules.NO_CLASSES_SHOULD_ACCESS_STANDARD_STREAMS.check(LIBRARY);
    }

    /**
     * Public and protected members of an API type: no parameter, return or field type (raw) is
     * {@code @Internal}, unless the member itself is {@code @Internal}.
     */
    private static ArchCondition<JavaClass> exposeNoInternalType() {
        return new ArchCondition<>("expose no @Internal type in a public signature") {
            @Override
            public void check(JavaClass type, ConditionEvents events) {
                if (isInternal(type.getEnclosingClass().orElse(null))) {
                    return;
                }
                for (JavaCodeUnit unit : type.getCodeUnits()) {
                    if (!visible(unit.getModifiers()) || unit.isAnnotatedWith(Internal.class)) {
                        continue;
                    }
                    List<JavaClass> used = new ArrayList<>(unit.getRawParameterTypes());
                    used.add(unit.getRawReturnType());
                    for (JavaClass t : used) {
                        report(events, type, unit.getFullName(), t);
                    }
                }
                for (JavaField field : type.getFields()) {
                    if (visible(field.getModifiers()) && !field.isAnnotatedWith(Internal.class)) {
                        report(events, type, field.getFullName(), field.getRawType());
                    }
                }
            }
        };
    }

    private static boolean visible(java.util.Set<JavaModifier> modifiers) {
        return modifiers.contains(JavaModifier.PUBLIC)
                || modifiers.contains(JavaModifier.PROTECTED);
    }

    private static boolean isInternal(JavaClass type) {
        return type != null && type.isAnnotatedWith(Internal.class);
    }

    private static void report(
            ConditionEvents events, JavaClass owner, String member, JavaClass t) {
        JavaClass base = t.isArray() ? t.getBaseComponentType() : t;
        if (isInternal(base)
                || base.getEnclosingClass().map(PackageRulesTest::isInternal).orElse(false)) {
            events.add(
                    SimpleConditionEvent.violated(
                            owner, member + " exposes the @Internal type " + base.getName()));
        }
    }
}
