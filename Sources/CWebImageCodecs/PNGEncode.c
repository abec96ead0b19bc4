// PNG's image data written without libpng: rows filtered here and the whole stream deflated at
// once by libdeflate, which at the same level (6, the peers' default) is about three times as
// fast as zlib and compresses a little better, and at 4 (the default here) writes about zlib 6's
// size in half its own 6's time. libpng's simplified writer spent 60 ms of a 512x341 thumbnail
// in zlib; libdeflate deflates it in 10 ms at 6 and 5 at 4 (peers/png_floor.c). PNGCoder.swift
// puts the chunks around it.
#include "CWebImageCodecs.h"
#include "PNGRows.h"

#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>

/// A growing buffer of filtered rows; `failed` once an allocation failed.
typedef struct {
    uint8_t *bytes;
    size_t length;
    size_t capacity;
    int failed;
} buffer;

static void reserve(buffer *target, size_t more) {
    if (target->failed || target->capacity - target->length >= more) return;
    size_t capacity = target->capacity * 2 > target->length + more ? target->capacity * 2 : target->length + more;
    uint8_t *grown = realloc(target->bytes, capacity);
    if (grown == NULL) {
        target->failed = 1;
        return;
    }
    target->bytes = grown;
    target->capacity = capacity;
}

static void append(buffer *target, const void *bytes, size_t length) {
    if (length == 0) return;
    reserve(target, length);
    if (target->failed) return;
    memcpy(target->bytes + target->length, bytes, length);
    target->length += length;
}

/// libpng's measure of a filtered byte: its value read as signed, made positive.
static inline uint32_t cost(uint8_t value) { return value < 128 ? value : 256u - value; }

/// Filters `count` bytes from `first` on, every byte with all its neighbours present (`left`
/// is `row - bpp`, `upper_left` `prior - bpp`, or rows of zeros), adding each filter's cost.
/// No branch depends on the position, so the compiler vectorises the loop.
static inline __attribute__((always_inline)) void filter_bytes(const uint8_t *row, const uint8_t *left, const uint8_t *prior,
                                                               const uint8_t *upper_left, size_t count, uint8_t *sub, uint8_t *up,
                                                               uint8_t *average, uint8_t *predicted, uint64_t *costs) {
    uint32_t none_cost = 0, sub_cost = 0, up_cost = 0, average_cost = 0, paeth_cost = 0;
    for (size_t i = 0; i < count; i++) {
        int a = left[i], b = prior[i], c = upper_left[i], x = row[i];
        sub[i] = (uint8_t)(x - a);
        up[i] = (uint8_t)(x - b);
        average[i] = (uint8_t)(x - ((a + b) >> 1));
        predicted[i] = (uint8_t)(x - cwi_paeth(a, b, c));
        none_cost += cost((uint8_t)x);
        sub_cost += cost(sub[i]);
        up_cost += cost(up[i]);
        average_cost += cost(average[i]);
        paeth_cost += cost(predicted[i]);
    }
    costs[0] += none_cost;
    costs[1] += sub_cost;
    costs[2] += up_cost;
    costs[3] += average_cost;
    costs[4] += paeth_cost;
}

#if defined(__x86_64__)
/// filter_bytes compiled for AVX2: eight lanes a step instead of SSE2's four.
__attribute__((target("avx2"))) static void filter_bytes_avx2(const uint8_t *row, const uint8_t *left, const uint8_t *prior,
                                                              const uint8_t *upper_left, size_t count, uint8_t *sub, uint8_t *up,
                                                              uint8_t *average, uint8_t *predicted, uint64_t *costs) {
    filter_bytes(row, left, prior, upper_left, count, sub, up, average, predicted, costs);
}
#endif

/// filter_bytes with the widest vectors the processor has.
static void filter_span(const uint8_t *row, const uint8_t *left, const uint8_t *prior, const uint8_t *upper_left, size_t count,
                        uint8_t *sub, uint8_t *up, uint8_t *average, uint8_t *predicted, uint64_t *costs) {
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx2")) {
        filter_bytes_avx2(row, left, prior, upper_left, count, sub, up, average, predicted, costs);
        return;
    }
#endif
    filter_bytes(row, left, prior, upper_left, count, sub, up, average, predicted, costs);
}

/// Appends one row: its filter byte and its filtered bytes, with the filter whose output costs
/// least (libpng's adaptive heuristic; ties to the lower filter type). `candidates` holds
/// 5 x `length` bytes, `zeros` at least `length`: the row above the first, and what lies left of
/// a row's first pixel, as PNG defines.
static void append_row(buffer *target, const uint8_t *row, const uint8_t *prior, size_t length, size_t bpp, int adaptive,
                       uint8_t *candidates, const uint8_t *zeros) {
    uint8_t filter = 0;
    if (adaptive) {
        uint8_t *sub = candidates + length, *up = candidates + 2 * length;
        uint8_t *average = candidates + 3 * length, *predicted = candidates + 4 * length;
        const uint8_t *above = prior != NULL ? prior : zeros;
        size_t edge = bpp < length ? bpp : length;
        uint64_t costs[5] = {0, 0, 0, 0, 0};
        // In 32-bit sums: a span's cost is below 128 x its length, so split the row to stay far
        // from overflow on very wide images.
        for (size_t start = 0; start < length; start += 1u << 22) {
            size_t end = length - start > (1u << 22) ? start + (1u << 22) : length;
            size_t first = start < edge ? edge : start;
            if (start < edge) {
                filter_span(row, zeros, above, zeros, edge, sub, up, average, predicted, costs);
            }
            if (first < end) {
                filter_span(row + first, row + first - bpp, above + first, above + first - bpp, end - first, sub + first, up + first,
                            average + first, predicted + first, costs);
            }
        }
        for (uint8_t candidate = 1; candidate < 5; candidate++) {
            if (costs[candidate] < costs[filter]) filter = candidate;
        }
    }
    append(target, &filter, 1);
    append(target, filter == 0 ? row : candidates + filter * length, length);
}

/// Packs one row of `count` samples taken every `step` pixels from `pixels` (a pixel is
/// `bytes_per_pixel` bytes, already in the file's byte order; palette indexes packed to
/// `bit_depth` bits, high bits first).
static void gather_row(const uint8_t *pixels, size_t count, size_t step, size_t bytes_per_pixel, int bit_depth, uint8_t *row,
                       size_t row_length) {
    if (bit_depth >= 8 && step == 1) {
        // Not interlaced: the row lies in one piece (a copy call a pixel cost a third as much as
        // choosing the filters).
        memcpy(row, pixels, count * bytes_per_pixel);
        return;
    }
    if (bit_depth >= 8) {
        for (size_t x = 0; x < count; x++) memcpy(row + x * bytes_per_pixel, pixels + x * step * bytes_per_pixel, bytes_per_pixel);
        return;
    }
    memset(row, 0, row_length);
    int per_byte = 8 / bit_depth;
    for (size_t x = 0; x < count; x++) {
        int shift = 8 - bit_depth * (int)(x % per_byte + 1);
        row[x / per_byte] |= (uint8_t)((pixels[x * step] & ((1 << bit_depth) - 1)) << shift);
    }
}

/// Adam7's passes: where each starts and how far apart its samples are.
static const int adam7[7][4] = {{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4}, {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}};

/// The filtered image data of every pass (one pass when not interlaced).
static int filtered_data(const uint8_t *pixels, uint32_t width, uint32_t height, size_t bytes_per_pixel, int bit_depth,
                         int adaptive, int interlaced, buffer *target) {
    size_t full_row = ((size_t)width * bytes_per_pixel * bit_depth + 7) / 8;
    uint8_t *rows = malloc(full_row * 2 + 1);
    uint8_t *candidates = adaptive ? malloc(full_row * 5 + 1) : NULL;
    uint8_t *zeros = adaptive ? calloc(full_row + 8, 1) : NULL;
    if (rows == NULL || (adaptive && (candidates == NULL || zeros == NULL))) {
        free(rows);
        free(candidates);
        free(zeros);
        return -1;
    }
    // The filtered rows of a plain file, each with its filter byte, in one allocation.
    if (!interlaced) reserve(target, (full_row + 1) * height);
    size_t bpp = bytes_per_pixel * bit_depth >= 8 ? bytes_per_pixel * bit_depth / 8 : 1;
    // From here a pixel's size in bytes: `channels` samples of 16 bits are twice as many bytes.
    if (bit_depth == 16) bytes_per_pixel *= 2;
    for (int pass = 0; pass < (interlaced ? 7 : 1); pass++) {
        uint32_t x0 = interlaced ? adam7[pass][0] : 0, y0 = interlaced ? adam7[pass][1] : 0;
        uint32_t dx = interlaced ? adam7[pass][2] : 1, dy = interlaced ? adam7[pass][3] : 1;
        if (x0 >= width || y0 >= height) continue;
        size_t count = (width - x0 + dx - 1) / dx;
        size_t length = bit_depth == 16 ? count * bytes_per_pixel : (count * bytes_per_pixel * bit_depth + 7) / 8;
        uint8_t *row = rows, *prior = NULL;
        for (uint32_t y = y0; y < height; y += dy) {
            gather_row(pixels + ((size_t)y * width + x0) * bytes_per_pixel, count, dx, bytes_per_pixel, bit_depth, row, length);
            append_row(target, row, prior, length, bpp, adaptive, candidates, zeros);
            prior = row;
            row = row == rows ? rows + full_row : rows;
        }
    }
    free(rows);
    free(candidates);
    free(zeros);
    return target->failed ? -1 : 0;
}

int cwi_png_compress_image(const uint8_t *pixels, uint32_t width, uint32_t height, int32_t channels, int32_t bit_depth,
                           cwi_png_write_options options, uint8_t **out, size_t *out_size) {
    int valid_depth = options.palette ? channels == 1 && (bit_depth == 1 || bit_depth == 2 || bit_depth == 4 || bit_depth == 8)
                                      : channels >= 1 && channels <= 4 && (bit_depth == 8 || bit_depth == 16);
    if (width == 0 || height == 0 || width > 0x7FFFFFFF || height > 0x7FFFFFFF || options.level < 0 || options.level > 9 || !valid_depth) {
        return -1;
    }
    buffer raw = {0};
    // Palette images are written unfiltered, as libpng advises and libvips and imgproxy do.
    if (filtered_data(pixels, width, height, (size_t)channels, bit_depth, !options.palette, options.interlaced, &raw) != 0) {
        free(raw.bytes);
        return -1;
    }
    struct libdeflate_compressor *compressor = libdeflate_alloc_compressor(options.level);
    size_t bound = compressor == NULL ? 0 : libdeflate_zlib_compress_bound(compressor, raw.length);
    uint8_t *compressed = bound == 0 ? NULL : malloc(bound);
    size_t compressed_size = compressed == NULL ? 0 : libdeflate_zlib_compress(compressor, raw.bytes, raw.length, compressed, bound);
    libdeflate_free_compressor(compressor);
    free(raw.bytes);
    if (compressed_size == 0) {
        free(compressed);
        return -1;
    }
    *out = compressed;
    *out_size = compressed_size;
    return 0;
}

void cwi_png_free(uint8_t *buffer) { free(buffer); }
