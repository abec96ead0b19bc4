// One 8-bit plane (a JPEG's Y, Cb or Cr) resampled with precomputed separable weights: rows
// first into an 8-bit intermediate (rounded, as the RGBA resampler's opaque path and Pillow
// round between passes), then columns. In C so that the inner loops are the compiler's to
// vectorise and unroll: the column pass is a weighted sum of whole rows, and the row pass reads
// the same number of taps at every position (see cwi_resample_rows).
#include "CWebImageCodecs.h"

#include <string.h>

static inline uint8_t cwi_round_sample(float value) {
    // Branch-free: a clamp the compiler makes minss/maxss, not a jump per sample.
    value += 0.5f;
    value = value < 0 ? 0 : value;
    value = value > 255 ? 255 : value;
    return (uint8_t)value;
}

// The row pass with `taps` weights at every position: each position's window moved inside the
// row (its weights moved with it, zeros around them), so that the loop over taps has one
// length the compiler can unroll for the common sizes. Each row is widened to floats first
// and the sums rounded after, both in loops the compiler vectorises, so that the loop per
// position is loads, multiplies and adds only.
#define CWI_ROW_PASS(TAPS)                                                                          \
    for (long y = 0; y < rows; y++) {                                                               \
        const uint8_t *row = source + (first_row + y) * source_stride;                              \
        for (long x = 0; x < width; x++) line[x] = row[x];                                          \
        for (long x = 0; x < count; x++) {                                                          \
            const float *start = line + starts[x];                                                  \
            const float *weights = taps_table + x * (TAPS);                                         \
            float sum = 0;                                                                          \
            for (long tap = 0; tap < (TAPS); tap++) sum += start[tap] * weights[tap];               \
            sums[x] = sum;                                                                          \
        }                                                                                           \
        uint8_t *target = between + y * count;                                                      \
        for (long x = 0; x < count; x++) target[x] = cwi_round_sample(sums[x]);                     \
    }

static void cwi_resample_rows(const uint8_t *source, long source_stride, long width, long first_row, long rows,
                              uint8_t *between, long count, const long *starts, const float *taps_table, long taps,
                              float *line, float *sums) {
    switch (taps) {
    case 1: CWI_ROW_PASS(1) break;
    case 2: CWI_ROW_PASS(2) break;
    case 3: CWI_ROW_PASS(3) break;
    case 4: CWI_ROW_PASS(4) break;
    case 5: CWI_ROW_PASS(5) break;
    case 6: CWI_ROW_PASS(6) break;
    case 7: CWI_ROW_PASS(7) break;
    case 8: CWI_ROW_PASS(8) break;
    default: CWI_ROW_PASS(taps) break;
    }
}

void cwi_resample_plane(const uint8_t *source, long source_stride, uint8_t *output, long output_stride,
                        const cwi_plane_weights *columns, const cwi_plane_weights *rows, cwi_plane_scratch scratch) {
    long count = columns->count;
    long first_row = rows->first_source;
    // The rows pass's result: the source itself (from the first column kept) when the columns
    // are a cut, else the intermediate rows.
    const uint8_t *between = source + first_row * source_stride + columns->first_source;
    long between_stride = source_stride;
    if (!columns->copies) {
        // The most any position reads; never more than the row holds, as every position's
        // samples lie inside it.
        long taps = 1;
        for (long x = 0; x < count; x++) taps = columns->counts[x] > taps ? columns->counts[x] : taps;
        long *starts = scratch.starts;
        float *table = scratch.weights;
        memset(table, 0, sizeof(float) * (size_t)(count * taps));
        for (long x = 0; x < count; x++) {
            long start = columns->starts[x];
            long moved = start + taps > columns->source_count ? columns->source_count - taps : start;
            starts[x] = moved;
            for (long tap = 0; tap < columns->counts[x]; tap++) {
                table[x * taps + (start - moved) + tap] = columns->weights[x * columns->stride + tap];
            }
        }
        cwi_resample_rows(source, source_stride, columns->source_count, first_row, rows->source_count, scratch.between, count,
                          starts, table, taps, scratch.line, scratch.sums);
        between = scratch.between;
        between_stride = count;
    }
    // Then columns: each output row a weighted sum of whole rows, or one row when they are a cut.
    float *sums = scratch.sums;
    for (long y = 0; y < rows->count; y++) {
        uint8_t *target = output + y * output_stride;
        if (rows->copies) {
            memcpy(target, between + y * between_stride, (size_t)count);
            continue;
        }
        const float *weights = rows->weights + y * rows->stride;
        const uint8_t *start = between + (rows->starts[y] - first_row) * between_stride;
        memset(sums, 0, sizeof(float) * (size_t)count);
        for (long tap = 0; tap < rows->counts[y]; tap++) {
            const uint8_t *line = start + tap * between_stride;
            float weight = weights[tap];
            for (long x = 0; x < count; x++) sums[x] += line[x] * weight;
        }
        for (long x = 0; x < count; x++) target[x] = cwi_round_sample(sums[x]);
    }
}
