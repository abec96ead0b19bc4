// One 8-bit plane (a JPEG's Y, Cb or Cr) resampled with precomputed separable weights: rows
// first into an 8-bit intermediate (rounded, as the RGBA resampler's opaque path and Pillow
// round between passes), then columns. In C so that the column pass, the bulk of the work,
// is vectorised across each row by the compiler.
#include "CWebImageCodecs.h"

#include <math.h>

static inline uint8_t cwi_round_sample(float value) {
    value += 0.5f;
    if (value <= 0) return 0;
    if (value >= 255) return 255;
    return (uint8_t)value;
}

void cwi_resample_plane(const uint8_t *source, long source_stride, uint8_t *output, long output_stride,
                        const cwi_plane_weights *columns, const cwi_plane_weights *rows, uint8_t *between,
                        float *sums) {
    // Rows first, over the source rows the column weights read: `between` holds them, each as
    // wide as the output.
    long first_row = rows->first_source;
    for (long y = 0; y < rows->source_count; y++) {
        const uint8_t *line = source + (first_row + y) * source_stride;
        uint8_t *target = between + y * columns->count;
        for (long x = 0; x < columns->count; x++) {
            const uint8_t *start = line + columns->starts[x];
            const float *taps = columns->weights + x * columns->stride;
            float sum = 0;
            for (long tap = 0; tap < columns->counts[x]; tap++) sum += start[tap] * taps[tap];
            target[x] = cwi_round_sample(sum);
        }
    }
    // Then columns: each output row is a weighted sum of whole intermediate rows.
    long width = columns->count;
    for (long y = 0; y < rows->count; y++) {
        const float *taps = rows->weights + y * rows->stride;
        const uint8_t *start = between + (rows->starts[y] - first_row) * width;
        for (long x = 0; x < width; x++) sums[x] = 0;
        for (long tap = 0; tap < rows->counts[y]; tap++) {
            const uint8_t *line = start + tap * width;
            float weight = taps[tap];
            for (long x = 0; x < width; x++) sums[x] += line[x] * weight;
        }
        uint8_t *target = output + y * output_stride;
        for (long x = 0; x < width; x++) target[x] = cwi_round_sample(sums[x]);
    }
}
