// The baseline Huffman decoder JPEG.c's planes decode puts in place of libjpeg-turbo's own
// (JPEGEntropy.c). Private to CWebImageCodecs: it needs libjpeg's internal header.
#ifndef CWI_JPEG_ENTROPY_H
#define CWI_JPEG_ENTROPY_H

#include <stdint.h>
#include <stdio.h>
#include <jpeglib.h>

/// Codes of up to this many bits are decoded by one lookup; an AC coefficient whose code and
/// extra bits together fit, value and all.
#define CWI_HUFFMAN_LOOKAHEAD 11

typedef struct {
    /// By the next CWI_HUFFMAN_LOOKAHEAD bits: the code's length << 8 | its symbol, 0 for a
    /// longer code.
    uint16_t lookup[1 << CWI_HUFFMAN_LOOKAHEAD];
    /// AC only, by the same bits: value << 8 | run << 4 | bits taken, 0 when code and value do
    /// not both fit (or the symbol is EOB or ZRL).
    int16_t fast[1 << CWI_HUFFMAN_LOOKAHEAD];
    /// The largest code of each length (-1 for none), for the codes longer than the lookup.
    int32_t maxcode[18];
    /// A code of each length less the index of its symbol.
    int32_t valoffset[17];
    uint8_t symbols[256];
} cwi_huffman_table;

/// The decoder's state through a scan: the bits read ahead, the DC predictions, the restart
/// interval's count. Must be the first member of the structure libjpeg's client_data points to.
typedef struct {
    uint64_t bits;
    int count;
    /// A marker (or the data's end) was reached: zeros from there on, `padding` bits of them.
    int marker;
    int padding;
    /// A code no table has, or a restart marker missing or out of turn.
    int corrupt;
    /// Bits past a marker or the data's end were decoded.
    int insufficient;
    const uint8_t *next;
    const uint8_t *end;
    int predictions[MAX_COMPS_IN_SCAN];
    unsigned restarts_left;
    int next_restart;
    const cwi_huffman_table *dc[MAX_COMPS_IN_SCAN];
    const cwi_huffman_table *ac[MAX_COMPS_IN_SCAN];
    /// DC tables 0-3, then AC tables 0-3, each built only when a component uses it.
    cwi_huffman_table tables[2 * NUM_HUFF_TBLS];
} cwi_huffman_decoder;

/// Puts the decoder in place of libjpeg's for `cinfo`'s scan, after jpeg_start_decompress and
/// before the first row: a baseline (sequential Huffman, 8-bit) scan of all the components.
/// Returns 0, or -1 (libjpeg's own decoder left in place) for any other scan or a corrupt table.
int cwi_jpeg_entropy_install(j_decompress_ptr cinfo, cwi_huffman_decoder *decoder);

#endif
