package io.bloomstream.jobs.testdata;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * Deterministic, realistic-looking test data: e-mail addresses, URLs, event ids and clicks. Every
 * method takes its seed; equal seeds give equal data on every machine and JDK.
 */
public final class TestData {

    private static final String[] FIRST = {
        "james",
        "mary",
        "john",
        "patricia",
        "robert",
        "jennifer",
        "michael",
        "linda",
        "william",
        "elizabeth",
        "david",
        "barbara",
        "richard",
        "susan",
        "joseph",
        "jessica",
        "thomas",
        "sarah",
        "charles",
        "karen",
        "lukas",
        "emma",
        "noah",
        "mia",
        "hiroshi",
        "yuki",
        "wei",
        "li",
        "ahmed",
        "fatima",
        "ivan",
        "olga",
        "carlos",
        "lucia",
        "pierre",
        "camille",
        "giulia",
        "marco",
        "anna",
        "sven"
    };
    private static final String[] LAST = {
        "smith",
        "johnson",
        "williams",
        "brown",
        "jones",
        "garcia",
        "miller",
        "davis",
        "rodriguez",
        "martinez",
        "hernandez",
        "lopez",
        "gonzalez",
        "wilson",
        "anderson",
        "taylor",
        "moore",
        "jackson",
        "martin",
        "lee",
        "mueller",
        "schmidt",
        "tanaka",
        "suzuki",
        "wang",
        "zhang",
        "khan",
        "ivanov",
        "petrova",
        "rossi",
        "dubois",
        "silva",
        "novak",
        "kowalski",
        "jensen",
        "larsen",
        "nagy",
        "popescu",
        "ozturk",
        "kim"
    };
    private static final String[] PROVIDERS = {
        "gmail.com",
        "yahoo.com",
        "outlook.com",
        "hotmail.com",
        "aol.com",
        "icloud.com",
        "proton.me",
        "gmx.de",
        "web.de",
        "mail.ru",
        "yandex.ru",
        "qq.com",
        "orange.fr",
        "libero.it"
    };
    private static final String[] SPAM_WORDS = {
        "cheap", "pills", "casino", "lucky", "winner", "crypto", "loan", "deal", "offer", "promo",
        "bonus", "prize", "free", "discount", "rich", "fast", "secure", "verify", "account", "bank",
        "gift", "reward", "vip", "club", "best", "mega", "super", "smart", "trade", "invest"
    };
    private static final String[] SPAM_TLDS = {
        "com", "net", "biz", "info", "xyz", "top", "click", "online", "site", "ru", "cn", "shop"
    };
    private static final String[] SPAM_LOCAL = {
        "info",
        "sales",
        "support",
        "noreply",
        "promo",
        "offers",
        "news",
        "admin",
        "billing",
        "security",
        "service",
        "contact",
        "winner",
        "alert"
    };

    private TestData() {}

    /** A personal address at a common provider, e.g. {@code mary.lopez84@gmail.com}. */
    public static String personalAddress(SplittableRandom r) {
        String f = pick(r, FIRST);
        String l = pick(r, LAST);
        String local;
        switch (r.nextInt(5)) {
            case 0:
                local = f + "." + l;
                break;
            case 1:
                local = f + l + r.nextInt(100);
                break;
            case 2:
                local = f.charAt(0) + "." + l;
                break;
            case 3:
                local = f + "_" + l + (1950 + r.nextInt(60));
                break;
            default:
                local = l + "." + f + r.nextInt(1000);
                break;
        }
        return local + "@" + pick(r, PROVIDERS);
    }

    /** A spam sender at a made-up domain, e.g. {@code promo7@cheap-bonus-312.xyz}. */
    public static String spamAddress(SplittableRandom r) {
        String domain =
                pick(r, SPAM_WORDS)
                        + "-"
                        + pick(r, SPAM_WORDS)
                        + (r.nextBoolean() ? "-" + r.nextInt(1000) : "")
                        + "."
                        + pick(r, SPAM_TLDS);
        String local =
                r.nextInt(3) == 0 ? pick(r, SPAM_LOCAL) + r.nextInt(100) : pick(r, SPAM_LOCAL);
        return local + "@" + domain;
    }

    /**
     * {@code count} distinct addresses (about 60% spam-like, 40% personal), none of them in {@code
     * exclude}, in generation order.
     */
    public static List<String> addresses(long seed, int count, Set<String> exclude) {
        SplittableRandom r = new SplittableRandom(seed);
        Set<String> out = new LinkedHashSet<>();
        while (out.size() < count) {
            String a = r.nextInt(10) < 6 ? spamAddress(r) : personalAddress(r);
            if (!exclude.contains(a)) {
                out.add(a);
            }
        }
        return new ArrayList<>(out);
    }

    /** Spells an address as a mail client might: other case, a display name, spaces. */
    public static String variant(SplittableRandom r, String address) {
        switch (r.nextInt(4)) {
            case 0:
                return address.toUpperCase(java.util.Locale.ROOT);
            case 1:
                return "\"" + pick(r, FIRST) + "\" <" + address + ">";
            case 2:
                return "  " + address + " ";
            default:
                return address;
        }
    }

    static <T> T pick(SplittableRandom r, T[] values) {
        return values[r.nextInt(values.length)];
    }

    /** A Zipf-like index in [0, n): small indexes much more often (exponent about 1). */
    static int skewed(SplittableRandom r, int n) {
        double u = r.nextDouble();
        return (int) Math.min(n - 1, Math.floor(Math.pow(n + 1, u)) - 1);
    }
}
