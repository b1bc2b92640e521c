package io.bloomstream.filter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Tests for {@link Normalization}. */
class NormalizationTest {

    @Test
    void noneKeepsTheValueAsItIs() {
        assertThat(Normalization.NONE.apply(" Ab@X.com ")).isEqualTo(" Ab@X.com ");
        assertThat(Normalization.NONE.apply("")).isNull();
        assertThat(Normalization.NONE.apply(null)).isNull();
    }

    @Test
    void lowercaseTrimsAndLowercasesWithoutLocale() {
        assertThat(Normalization.LOWERCASE.apply("  TITLE Case\t")).isEqualTo("title case");
        // Locale.ROOT: a Turkish default locale must not turn "I" into a dotless i.
        assertThat(Normalization.LOWERCASE.apply("INFO")).isEqualTo("info");
        assertThat(Normalization.LOWERCASE.apply("   ")).isNull();
    }

    @Test
    void emailUnwrapsAndLowercasesTheAddress() {
        assertThat(Normalization.EMAIL.apply(" Alice.Smith@Example.COM "))
                .isEqualTo("alice.smith@example.com");
        assertThat(Normalization.EMAIL.apply("Alice <Alice@Example.com>"))
                .isEqualTo("alice@example.com");
        assertThat(Normalization.EMAIL.apply("mailto:bob@example.org."))
                .isEqualTo("bob@example.org");
        assertThat(Normalization.EMAIL.apply("\"a@b\"@example.org"))
                .isEqualTo("\"a@b\"@example.org");
    }

    @Test
    void emailWithoutLocalPartOrDomainIsUnusable() {
        assertThat(Normalization.EMAIL.apply("no-at-sign")).isNull();
        assertThat(Normalization.EMAIL.apply("@example.com")).isNull();
        assertThat(Normalization.EMAIL.apply("bob@")).isNull();
        assertThat(Normalization.EMAIL.apply("bob@.")).isNull();
    }

    @Test
    void domainKeepsThePartAfterTheLastAt() {
        assertThat(Normalization.DOMAIN.apply("Bob@Mail.Example.COM"))
                .isEqualTo("mail.example.com");
        assertThat(Normalization.DOMAIN.apply("Spam.Example.")).isEqualTo("spam.example");
        assertThat(Normalization.DOMAIN.apply("Eve <eve@Evil.test>")).isEqualTo("evil.test");
        assertThat(Normalization.DOMAIN.apply("bob@")).isNull();
    }

    @Test
    void parsesNamesAndRejectsOthers() {
        assertThat(Normalization.parse("EMAIL")).isEqualTo(Normalization.EMAIL);
        assertThat(Normalization.parse("domain")).isEqualTo(Normalization.DOMAIN);
        assertThatThrownBy(() -> Normalization.parse("upper"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'upper'");
        assertThatThrownBy(() -> Normalization.fromId(9))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("9");
    }
}
