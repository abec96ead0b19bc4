// Shared between PNG.c (libpng's reader) and PNGDirect.c (the common case without it): what
// both do with a row of straight RGBA once it is decoded, so that the two give the same bytes.
#ifndef CWI_PNG_ROWS_H
#define CWI_PNG_ROWS_H

#include <stddef.h>
#include <stdint.h>
#include <png.h>
#include <stdlib.h>

/// Paeth's predictor without branches (they mispredict on photographs): the neighbour nearest
/// to left + above - upper_left, ties going to left, then above.
static inline uint8_t cwi_paeth(int left, int above, int upper_left) {
    int to_left = abs(above - upper_left), to_above = abs(left - upper_left), to_upper_left = abs(left + above - 2 * upper_left);
    int nearer = to_left <= to_above ? left : above;
    int nearer_distance = to_left <= to_above ? to_left : to_above;
    return (uint8_t)(nearer_distance <= to_upper_left ? nearer : upper_left);
}

/// Adds one RGBA row to the sums of its band of `reduction` rows: per output pixel, each
/// colour weighted by its alpha, and the alpha.
void cwi_png_accumulate(const uint8_t *row, uint32_t width, uint32_t reduction, uint64_t *sums);

/// After source row `y` was accumulated: when it is the last of its band (or of the image),
/// writes the band's averages as its output row of straight RGBA in `out`, and clears the sums.
void cwi_png_finish_band(uint64_t *sums, uint32_t y, uint32_t width, uint32_t height, uint32_t reduction, uint8_t *out);

/// cwi_png_accumulate and cwi_png_finish_band for rows and output of 16-bit RGBA samples.
void cwi_png_accumulate16(const uint16_t *row, uint32_t width, uint32_t reduction, uint64_t *sums);
void cwi_png_finish_band16(uint64_t *sums, uint32_t y, uint32_t width, uint32_t height, uint32_t reduction, uint16_t *out);

/// Decodes the image data of a PNG of any colour type, bit depth and interlacing, to
/// `sample_bits` 8 (16-bit samples scaled as png_set_scale_16 does) or 16 (a 16-bit file only:
/// native 16-bit RGBA), whose chunks up to its first IDAT libpng has read (`idat` points at that
/// chunk's length field) without libpng: every IDAT's CRC checked, the stream inflated at once by
/// libdeflate, rows unfiltered (Adam7's passes put in place), expanded to RGBA with the palette
/// and tRNS libpng read, written to `out` (or reduced as cwi_png_decode_rgba does).
/// Returns 0 when the image is decoded, 1 when it declines (damaged, truncated or unusual data,
/// or more than 64 MiB of inflated image data): nothing has been written to `out` then, and
/// libpng reads the file, so that every error, warning and partial image comes from libpng.
int cwi_png_direct_rows(png_structp png, png_infop info, const uint8_t *idat, size_t available, uint8_t *out, uint32_t width,
                        uint32_t height, uint32_t reduction, int32_t sample_bits);

#endif
