// A baseline Huffman decoder for libjpeg's single-scan decompression, put in place of
// libjpeg-turbo's own decode_mcu: the same coefficients in fewer steps. Most of a photograph's
// AC coefficients are small values with short codes; with eleven bits looked ahead, code and value
// together come from one table entry, where libjpeg-turbo looks up eight bits of code, then
// reads the value's bits and extends its sign as two more steps. Its bit reader also takes eight
// bytes at once when none is 0xFF (no stuffing to undo, no marker).
#include "JPEGEntropy.h"

#include <stddef.h>
#include <string.h>
#include <jpegint.h>

// Not instrumented under ThreadSanitizer: every access here is to the decoder's own state and the
// block libjpeg hands it, on one thread, and instrumented, this loop (libjpeg-turbo's own, which
// it replaces, never is: the library is not rebuilt) made every JPEG test of the sanitizer run
// several times slower. AddressSanitizer still checks it.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CWI_UNRACED __attribute__((no_sanitize("thread")))
#endif
#endif
#ifndef CWI_UNRACED
#define CWI_UNRACED
#endif

// Zigzag position to natural position, padded with 16 entries of 63 so that a corrupt run
// past the block's end writes coefficient 63 instead of past the block.
static const int cwi_natural[64 + 16] = {
    0,  1,  8,  16, 9,  2,  3,  10, 17, 24, 32, 25, 18, 11, 4,  5,  12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13,
    6,  7,  14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31,
    39, 46, 53, 60, 61, 54, 47, 55, 62, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63};

// Builds the lookup of a table from its JPEG definition (code counts per length, symbols).
// Returns 0, or -1 when the counts describe more codes than fit (a corrupt table).
static int cwi_huffman_build(cwi_huffman_table *table, const JHUFF_TBL *source, int is_ac) {
    memset(table, 0, sizeof(*table));
    int code = 0, index = 0;
    for (int length = 1; length <= 16; length++) {
        int count = source->bits[length];
        table->valoffset[length] = index - code;
        for (int i = 0; i < count; i++, index++, code++) {
            if (index >= 256) {
                return -1;
            }
            int symbol = source->huffval[index];
            table->symbols[index] = (uint8_t)symbol;
            if (length <= CWI_HUFFMAN_LOOKAHEAD) {
                int shift = CWI_HUFFMAN_LOOKAHEAD - length;
                for (int fill = 0; fill < (1 << shift); fill++) {
                    int entry = (code << shift) | fill;
                    table->lookup[entry] = (uint16_t)((length << 8) | symbol);
                    // A coefficient whose code and extra bits both fit: decoded by one lookup.
                    int size = symbol & 15, run = symbol >> 4;
                    if (is_ac && size != 0 && length + size <= CWI_HUFFMAN_LOOKAHEAD) {
                        int extra = (entry >> (shift - size)) & ((1 << size) - 1);
                        int value = extra < (1 << (size - 1)) ? extra - (1 << size) + 1 : extra;
                        if (value >= -128 && value <= 127) {
                            table->fast[entry] = (int16_t)(((value & 0xFF) << 8) | (run << 4) | (length + size));
                        }
                    }
                }
            }
        }
        if (code > (1 << length)) {
            return -1;
        }
        table->maxcode[length] = count ? code - 1 : -1;
        code <<= 1;
    }
    table->maxcode[17] = 0x7FFFFFFF;
    return 0;
}

// The bit reader's state lives in locals of cwi_decode_mcu (registers): these take them by
// name. At least 57 bits after a refill, the next code's at the top of `bits`.
typedef struct {
    uint64_t bits;
    int count;
    const uint8_t *next;
} cwi_bit_reader;

CWI_UNRACED static inline __attribute__((always_inline)) void cwi_refill(cwi_huffman_decoder *d, cwi_bit_reader *r) {
    // Eight bytes at once when none of them is 0xFF (no stuffing, no marker).
    if (d->end - r->next >= 8) {
        uint64_t word;
        memcpy(&word, r->next, 8);
        uint64_t inverted = ~word;
        if (((inverted - 0x0101010101010101ULL) & ~inverted & 0x8080808080808080ULL) == 0) {
            int bytes = (63 - r->count) >> 3;
            uint64_t big = __builtin_bswap64(word);
            r->bits |= (big >> (64 - bytes * 8)) << (64 - r->count - bytes * 8);
            r->count += bytes * 8;
            r->next += bytes;
            return;
        }
    }
    while (r->count <= 56) {
        uint64_t byte = 0;
        if (!d->marker && r->next < d->end) {
            byte = *r->next;
            if (byte == 0xFF) {
                if (d->end - r->next >= 2 && r->next[1] == 0) {
                    r->next += 2;
                } else {
                    // A marker (or the data's end): zeros from here, counted, as libjpeg does.
                    d->marker = 1;
                    byte = 0;
                    d->padding += 8;
                }
            } else {
                r->next++;
            }
        } else {
            // The data ends without a marker: a truncated file, which libjpeg warns of as soon
            // as it reads ahead past the end, needed or not.
            d->insufficient |= !d->marker;
            d->marker = 1;
            d->padding += 8;
        }
        r->bits |= byte << (56 - r->count);
        r->count += 8;
    }
}

#define CWI_PEEK(r, n) ((int)((r).bits >> (64 - (n))))
#define CWI_DROP(r, n) ((r).bits <<= (n), (r).count -= (n))

// The next symbol of `table`: by the lookahead when its code is short, else length by length.
CWI_UNRACED static inline __attribute__((always_inline)) int cwi_symbol(cwi_huffman_decoder *d, cwi_bit_reader *r,
                                                             const cwi_huffman_table *table) {
    int entry = table->lookup[CWI_PEEK(*r, CWI_HUFFMAN_LOOKAHEAD)];
    if (entry) {
        CWI_DROP(*r, entry >> 8);
        return entry & 0xFF;
    }
    int length = CWI_HUFFMAN_LOOKAHEAD + 1;
    int code = CWI_PEEK(*r, length);
    while (code > table->maxcode[length]) {
        length++;
        code = CWI_PEEK(*r, length);
    }
    if (length > 16) {
        // No such code: corrupt data. libjpeg warns and takes symbol 0.
        d->corrupt = 1;
        CWI_DROP(*r, 16);
        return 0;
    }
    CWI_DROP(*r, length);
    return table->symbols[(table->valoffset[length] + code) & 0xFF];
}

// The `size`-bit value after a symbol, sign extended (JPEG's "EXTEND").
CWI_UNRACED static inline __attribute__((always_inline)) int cwi_value(cwi_bit_reader *r, int size) {
    if (size == 0) {
        return 0;
    }
    int raw = CWI_PEEK(*r, size);
    CWI_DROP(*r, size);
    return raw < (1 << (size - 1)) ? raw - (1 << size) + 1 : raw;
}

// At a restart interval's end: the rest of the byte is padding, then RSTn; the predictions
// start again. Returns 0 when the marker is not the one due.
CWI_UNRACED static int cwi_restart(cwi_huffman_decoder *d, cwi_bit_reader *r, unsigned interval) {
    r->bits = 0;
    r->count = 0;
    if (d->end - r->next < 2 || r->next[0] != 0xFF || r->next[1] != 0xD0 + d->next_restart) {
        d->corrupt = 1;
        return 0;
    }
    r->next += 2;
    d->marker = 0;
    d->padding = 0;
    d->next_restart = (d->next_restart + 1) & 7;
    memset(d->predictions, 0, sizeof(d->predictions));
    d->restarts_left = interval;
    return 1;
}

CWI_UNRACED static boolean cwi_decode_mcu(j_decompress_ptr cinfo, JBLOCKROW *blocks) {
    cwi_huffman_decoder *d = (cwi_huffman_decoder *)cinfo->client_data;
    cwi_bit_reader r = {d->bits, d->count, d->next};
    if (cinfo->restart_interval) {
        if (d->restarts_left == 0 && !cwi_restart(d, &r, cinfo->restart_interval)) {
            return FALSE;
        }
        d->restarts_left--;
    }
    for (int block = 0; block < cinfo->blocks_in_MCU; block++) {
        JCOEF *coefficients = blocks[block][0];
        int component = cinfo->MCU_membership[block];
        const cwi_huffman_table *ac = d->ac[component];
        if (r.count < 32) cwi_refill(d, &r);
        int size = cwi_symbol(d, &r, d->dc[component]);
        if (r.count < 32) cwi_refill(d, &r);
        // Unsigned: a damaged file's DC differences can add past INT_MAX, which libjpeg lets wrap.
        d->predictions[component] = (int)((unsigned)d->predictions[component] + (unsigned)cwi_value(&r, size & 15));
        coefficients[0] = (JCOEF)d->predictions[component];
        for (int k = 1; k < 64; k++) {
            if (r.count < 32) cwi_refill(d, &r);
            int fast = ac->fast[CWI_PEEK(r, CWI_HUFFMAN_LOOKAHEAD)];
            if (fast) {
                k += (fast >> 4) & 15;
                coefficients[cwi_natural[k]] = (JCOEF)(int8_t)(fast >> 8);
                CWI_DROP(r, fast & 15);
                continue;
            }
            int symbol = cwi_symbol(d, &r, ac);
            int run = symbol >> 4;
            size = symbol & 15;
            if (size) {
                k += run;
                if (r.count < 16) cwi_refill(d, &r);
                coefficients[cwi_natural[k]] = (JCOEF)cwi_value(&r, size);
            } else {
                if (run != 15) break;
                k += 15;
            }
        }
    }
    // Bits past a marker or the data's end were taken: the data ended early.
    if (r.count < d->padding) d->insufficient = 1;
    d->bits = r.bits;
    d->count = r.count;
    d->next = r.next;
    return TRUE;
}

int cwi_jpeg_entropy_install(j_decompress_ptr cinfo, cwi_huffman_decoder *d) {
    if (cinfo->progressive_mode || cinfo->arith_code || cinfo->comps_in_scan != cinfo->num_components || cinfo->Ss != 0 ||
        cinfo->Se != 63 || cinfo->Ah != 0 || cinfo->Al != 0 || cinfo->data_precision != 8) {
        return -1;
    }
    memset(d, 0, offsetof(cwi_huffman_decoder, tables));
    int built = 0;
    for (int i = 0; i < cinfo->comps_in_scan; i++) {
        jpeg_component_info *component = cinfo->cur_comp_info[i];
        for (int is_ac = 0; is_ac < 2; is_ac++) {
            int number = is_ac ? component->ac_tbl_no : component->dc_tbl_no;
            JHUFF_TBL *source = is_ac ? cinfo->ac_huff_tbl_ptrs[number] : cinfo->dc_huff_tbl_ptrs[number];
            int slot = is_ac * NUM_HUFF_TBLS + number;
            if (source == NULL) {
                return -1;
            }
            if (!(built & (1 << slot)) && cwi_huffman_build(&d->tables[slot], source, is_ac)) {
                return -1;
            }
            built |= 1 << slot;
            if (is_ac) {
                d->ac[i] = &d->tables[slot];
            } else {
                d->dc[i] = &d->tables[slot];
            }
        }
    }
    d->next = cinfo->src->next_input_byte;
    d->end = d->next + cinfo->src->bytes_in_buffer;
    d->restarts_left = cinfo->restart_interval;
    cinfo->entropy->decode_mcu = cwi_decode_mcu;
    return 0;
}
