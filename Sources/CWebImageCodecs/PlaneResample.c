// One 8-bit plane (a JPEG's Y, Cb or Cr) resampled with precomputed separable weights, one
// output row at a time: the source rows it reads summed down each column into a row of floats,
// then that row resampled along itself and rounded once. Columns first, so that the row pass
// (the costlier: each position a window of its own) runs once per output row rather than once
// per source row, and no 8-bit intermediate rounds twice. In C so that the inner loops are the
// compiler's to vectorise: the column pass is sixteen samples at a time with the sums kept in
// registers, and the row pass reads the same number of taps, four at a time, at every position.
#include "CWebImageCodecs.h"

#include <string.h>

static inline uint8_t cwi_round_sample(float value) {
    // Branch-free: a clamp the compiler makes minss/maxss, not a jump per sample.
    value += 0.5f;
    value = value < 0 ? 0 : value;
    value = value > 255 ? 255 : value;
    return (uint8_t)value;
}

// Vectors loaded from and stored to anywhere: every access below is unaligned.
typedef float cwi_floats __attribute__((vector_size(16), aligned(4)));
typedef float cwi_floats16 __attribute__((vector_size(64), aligned(4)));
typedef uint8_t cwi_bytes16 __attribute__((vector_size(16), aligned(1)));

static inline cwi_floats cwi_load(const float *from) {
    cwi_floats value;
    memcpy(&value, from, sizeof value);
    return value;
}

// Sixteen columns from `first` down `taps` rows `stride` apart, weighted and summed.
static inline cwi_floats16 cwi_column_sums16(const uint8_t *first, long stride, const float *weights, long taps) {
    cwi_floats16 sum = {0};
    for (long tap = 0; tap < taps; tap++) {
        cwi_bytes16 samples;
        memcpy(&samples, first + tap * stride, sizeof samples);
        sum += __builtin_convertvector(samples, cwi_floats16) * weights[tap];
    }
    return sum;
}

static inline float cwi_column_sum(const uint8_t *first, long stride, const float *weights, long taps) {
    float sum = 0;
    for (long tap = 0; tap < taps; tap++) sum += first[tap * stride] * weights[tap];
    return sum;
}

// The column pass into floats: `width` columns from `first` down.
static void cwi_columns_to_floats(const uint8_t *first, long stride, const float *weights, long taps, long width, float *line) {
    long x = 0;
    for (; x + 16 <= width; x += 16) {
        cwi_floats16 sum = cwi_column_sums16(first + x, stride, weights, taps);
        memcpy(line + x, &sum, sizeof sum);
    }
    for (; x < width; x++) line[x] = cwi_column_sum(first + x, stride, weights, taps);
}

// The column pass rounded straight into the output, for rows whose columns are a cut.
static void cwi_columns_to_bytes(const uint8_t *first, long stride, const float *weights, long taps, long width, uint8_t *target) {
    long x = 0;
    for (; x + 16 <= width; x += 16) {
        cwi_floats16 sum = cwi_column_sums16(first + x, stride, weights, taps);
        sum = __builtin_elementwise_min(__builtin_elementwise_max(sum + 0.5f, (cwi_floats16){0}), (cwi_floats16){0} + 255);
        cwi_bytes16 rounded = __builtin_convertvector(sum, cwi_bytes16);
        memcpy(target + x, &rounded, sizeof rounded);
    }
    for (; x < width; x++) target[x] = cwi_round_sample(cwi_column_sum(first + x, stride, weights, taps));
}

// One position's products summed four taps at a time: `taps` is a multiple of four, the
// weights past a position's own are zeros.
static inline cwi_floats cwi_products(const float *samples, const float *weights, long taps) {
    cwi_floats sum = cwi_load(samples) * cwi_load(weights);
    for (long tap = 4; tap < taps; tap += 4) sum += cwi_load(samples + tap) * cwi_load(weights + tap);
    return sum;
}

// The lanes of four positions' products added across, as the four positions' sums: a 4x4
// transpose folded into the adds.
static inline cwi_floats cwi_sum_across(cwi_floats a, cwi_floats b, cwi_floats c, cwi_floats d) {
    cwi_floats ab = __builtin_shufflevector(a, b, 0, 4, 1, 5) + __builtin_shufflevector(a, b, 2, 6, 3, 7);
    cwi_floats cd = __builtin_shufflevector(c, d, 0, 4, 1, 5) + __builtin_shufflevector(c, d, 2, 6, 3, 7);
    return __builtin_shufflevector(ab, cd, 0, 1, 4, 5) + __builtin_shufflevector(ab, cd, 2, 3, 6, 7);
}

// The row pass with `taps` weights at every position, a multiple of four: each position's
// window moved inside the line (its weights moved with it, zeros around them), so that every
// position is the same number of four-wide multiplies and four positions' sums are added across
// at once. (A sum of three or so taps one after the other was a chain of dependent scalar adds
// per position, and the most of this file's time.)
#define CWI_ROW_PASS(TAPS)                                                                                  \
    {                                                                                                       \
        long x = 0;                                                                                         \
        for (; x + 4 <= count; x += 4) {                                                                    \
            const float *weights = table + x * (TAPS);                                                      \
            cwi_floats sum = cwi_sum_across(cwi_products(line + starts[x], weights, (TAPS)),                \
                                            cwi_products(line + starts[x + 1], weights + (TAPS), (TAPS)),   \
                                            cwi_products(line + starts[x + 2], weights + 2 * (TAPS), (TAPS)), \
                                            cwi_products(line + starts[x + 3], weights + 3 * (TAPS), (TAPS))); \
            memcpy(sums + x, &sum, sizeof sum);                                                             \
        }                                                                                                   \
        for (; x < count; x++) {                                                                            \
            cwi_floats sum = cwi_products(line + starts[x], table + x * (TAPS), (TAPS));                    \
            sums[x] = sum[0] + sum[1] + sum[2] + sum[3];                                                    \
        }                                                                                                   \
    }

// Inlined so that it is built into each of cwi_resample_plane's versions.
static inline __attribute__((always_inline)) void cwi_resample_row(const float *line, long count, const long *starts, const float *table, long taps, float *sums,
                             uint8_t *target) {
    switch (taps) {
    case 4: CWI_ROW_PASS(4) break;
    case 8: CWI_ROW_PASS(8) break;
    default: CWI_ROW_PASS(taps) break;
    }
    for (long x = 0; x < count; x++) target[x] = cwi_round_sample(sums[x]);
}

// The row pass's table: every position's weights padded to `taps` (a multiple of four) and its
// window moved inside the line. Returns `taps`.
static long cwi_row_table(const cwi_plane_weights *columns, long *starts, float *table) {
    long count = columns->count;
    // The most any position reads; never more than the line holds, as every position's samples
    // lie inside it.
    long reach = 1;
    for (long x = 0; x < count; x++) reach = columns->counts[x] > reach ? columns->counts[x] : reach;
    long taps = (reach + 3) / 4 * 4;
    memset(table, 0, sizeof(float) * (size_t)(count * taps));
    for (long x = 0; x < count; x++) {
        long start = columns->starts[x];
        long moved = start + reach > columns->source_count ? columns->source_count - reach : start;
        starts[x] = moved;
        for (long tap = 0; tap < columns->counts[x]; tap++) {
            table[x * taps + (start - moved) + tap] = columns->weights[x * columns->stride + tap];
        }
    }
    return taps;
}

// Built twice on x86-64, for the baseline (SSE2) and for AVX2, the loader picking one by the
// processor: the sixteen-wide column sums and conversions take half the instructions in AVX2.
// Not under ThreadSanitizer, whose runtime is not yet up when the loader runs the resolver (the
// test binary died in it before main).
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CWI_NO_CLONES 1
#endif
#endif
#if defined(__x86_64__) && defined(__ELF__) && !defined(CWI_NO_CLONES)
__attribute__((target_clones("avx2", "default")))
#endif
void cwi_resample_plane(const uint8_t *source, long source_stride, uint8_t *output, long output_stride,
                        const cwi_plane_weights *columns, const cwi_plane_weights *rows, cwi_plane_scratch scratch) {
    long count = columns->count;
    long taps = 0;
    // The columns the row pass reads, which are all the column pass need sum (a window cut
    // from the middle of a plane reads only its middle).
    long low = 0, high = 0;
    if (!columns->copies) {
        taps = cwi_row_table(columns, scratch.starts, scratch.weights);
        low = columns->source_count;
        for (long x = 0; x < count; x++) {
            low = scratch.starts[x] < low ? scratch.starts[x] : low;
            high = scratch.starts[x] + taps > high ? scratch.starts[x] + taps : high;
        }
        high = high > columns->source_count ? columns->source_count : high;
        // The last position's four-wide loads reach up to three floats past the line: zeros,
        // which their zero weights keep out of the sums (an uninitialised NaN would not stay out).
        memset(scratch.line + columns->source_count, 0, sizeof(float) * 3);
    }
    const float one = 1;
    for (long y = 0; y < rows->count; y++) {
        uint8_t *target = output + y * output_stride;
        // The source rows this output row sums: one at weight 1 when the rows are a cut.
        const uint8_t *first = source + (rows->copies ? rows->first_source + y : rows->starts[y]) * source_stride;
        const float *weights = rows->copies ? &one : rows->weights + y * rows->stride;
        long row_taps = rows->copies ? 1 : rows->counts[y];
        if (columns->copies) {
            first += columns->first_source;
            if (rows->copies) {
                memcpy(target, first, (size_t)count);
            } else {
                cwi_columns_to_bytes(first, source_stride, weights, row_taps, count, target);
            }
            continue;
        }
        cwi_columns_to_floats(first + low, source_stride, weights, row_taps, high - low, scratch.line + low);
        cwi_resample_row(scratch.line, count, scratch.starts, scratch.weights, taps, scratch.sums, target);
    }
}
