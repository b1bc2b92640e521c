package io.bloomstream.filter;

import static io.bloomstream.filter.FilterFormat.HEADER_BYTES;
import static io.bloomstream.filter.FilterFormat.MAGIC;
import static io.bloomstream.filter.FilterFormat.TYPE_BLOOM;
import static io.bloomstream.filter.FilterFormat.TYPE_COUNTING_PAGE;
import static io.bloomstream.filter.FilterFormat.VERSION;
import static io.bloomstream.filter.FilterFormat.VERSION_1;
import static io.bloomstream.filter.FilterFormat.checkMagic;

import java.io.DataOutputStream;
import java.io.IOException;

/** The 40-byte header of the filter format ({@link FilterFormat}): its fields, read and written. */
final class FilterHeader {

    int type;
    Hasher hasher;
    long bits;
    int hashes;
    int pageBits;
    long itemsAdded;
    Normalization normalization;

    FilterSpec spec() throws FilterFormatException {
        if (bits < 1 || bits > Sizing.MAX_BITS) {
            throw new FilterFormatException("bits", "out of range: " + bits);
        }
        if (hashes < 1 || hashes > Sizing.MAX_HASHES) {
            throw new FilterFormatException("hashes", "out of range: " + hashes);
        }
        try {
            return FilterSpec.of(bits, hashes, pageBits, hasher);
        } catch (IllegalArgumentException e) {
            throw new FilterFormatException("pageBits", e.getMessage());
        }
    }

    static FilterHeader read(BoundedInput r, Hasher keyedHasher) throws IOException {
        r.require(HEADER_BYTES, "length");
        checkMagic(r.readInt());
        int version = r.readUnsignedByte();
        if (version != VERSION_1) {
            throw new FilterFormatException(
                    "version",
                    "unsupported format version " + version + " (this reads " + VERSION_1 + ")");
        }
        FilterHeader h = new FilterHeader();
        h.type = r.readUnsignedByte();
        if (h.type < TYPE_BLOOM || h.type > TYPE_COUNTING_PAGE) {
            throw new FilterFormatException("type", "unknown filter type " + h.type);
        }
        int strategyId = r.readUnsignedByte();
        HashStrategy strategy;
        try {
            strategy = HashStrategy.fromId(strategyId);
        } catch (IllegalArgumentException e) {
            throw new FilterFormatException("strategy", "unknown hash strategy id " + strategyId);
        }
        int normalization = r.readUnsignedByte();
        if (normalization != 0) {
            try {
                h.normalization = Normalization.fromId(normalization);
            } catch (IllegalArgumentException e) {
                throw new FilterFormatException("normalization", e.getMessage());
            }
        }
        long seed = r.readLong();
        if (strategy.isKeyed()) {
            if (keyedHasher == null || keyedHasher.strategy() != strategy) {
                throw new FilterFormatException(
                        FilterFormatException.KEY,
                        strategy + " is keyed: decode with its keyed Hasher");
            }
            if (keyedHasher.seed() != seed) {
                throw new FilterFormatException(
                        "seed", "the key check value does not match: wrong key");
            }
            h.hasher = keyedHasher;
        } else {
            h.hasher = Hasher.forUnkeyed(strategy, seed);
        }
        h.bits = r.readLong();
        h.hashes = r.readInt();
        h.pageBits = r.readInt();
        h.itemsAdded = r.readLong();
        if (h.itemsAdded < 0) {
            throw new FilterFormatException("itemsAdded", "negative: " + h.itemsAdded);
        }
        return h;
    }

    static void write(
            DataOutputStream out, int type, int normalization, FilterSpec spec, long itemsAdded)
            throws IOException {
        write(
                out,
                type,
                normalization,
                spec.hasher(),
                spec.bits(),
                spec.hashes(),
                spec.pageBits(),
                itemsAdded);
    }

    static void write(
            DataOutputStream out,
            int type,
            int normalization,
            Hasher hasher,
            long bits,
            int hashes,
            int pageBits,
            long itemsAdded)
            throws IOException {
        out.writeInt(MAGIC);
        out.writeByte(VERSION);
        out.writeByte(type);
        out.writeByte(hasher.strategy().id());
        out.writeByte(normalization);
        out.writeLong(hasher.seed());
        out.writeLong(bits);
        out.writeInt(hashes);
        out.writeInt(pageBits);
        out.writeLong(itemsAdded);
    }
}
