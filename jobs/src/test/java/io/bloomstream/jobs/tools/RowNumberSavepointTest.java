package io.bloomstream.jobs.tools;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.api.Test;

/** Tests for {@link RowNumberSavepoint}'s argument checks (reading: RowNumberSavepointITCase). */
class RowNumberSavepointTest {

    @Test
    void refusesAMissingPath() {
        assertThatThrownBy(() -> RowNumberSavepoint.reader(" "))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("savepoint path");
    }

    @Test
    void refusesAUidHashThatIsNot32HexDigits() {
        assertThatThrownBy(() -> RowNumberSavepoint.reader("/sp").uidHash("dedup-events"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("uidHash must be 32 hex digits, was dedup-events");
    }

    @Test
    void refusesANonPositiveStateTtl() {
        assertThatThrownBy(() -> RowNumberSavepoint.reader("/sp").stateTtl(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("stateTtl must be positive, was PT0S");
    }

    @Test
    void refusesKeyTypesThatAreNotCharacterStrings() {
        assertThatThrownBy(
                        () ->
                                RowNumberSavepoint.reader("/sp")
                                        .keyTypes(new VarCharType(10), new IntType()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("keyTypes must be character strings")
                .hasMessageContaining("INT");
    }
}
