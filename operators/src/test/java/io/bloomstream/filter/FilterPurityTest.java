package io.bloomstream.filter;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/** Keeps {@code io.bloomstream.filter} pure Java: no Flink, nothing but the JDK and hash4j. */
class FilterPurityTest {

    private static final JavaClasses CORE =
            new ClassFileImporter()
                    .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                    .importPackages("io.bloomstream.filter");

    @Test
    void filterCoreHasNoFlinkDependency() {
        noClasses()
                .that()
                .resideInAPackage("io.bloomstream.filter..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("org.apache.flink..")
                .check(CORE);
    }

    @Test
    void filterCoreDependsOnlyOnTheJdkAndHash4j() {
        classes()
                .that()
                .resideInAPackage("io.bloomstream.filter..")
                .should()
                .onlyDependOnClassesThat()
                .resideInAnyPackage(
                        "io.bloomstream.filter..", "java..", "com.dynatrace.hash4j.hashing..")
                .check(CORE);
    }
}
