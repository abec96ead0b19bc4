// The sample reader: decoded strips and tiles (libtiff decompresses and byte-swaps them), each
// sample turned into 8 bits and placed in an RGBA pixel, then the pixel's colour model applied.
// Used where libtiff's RGBA interface refuses a page (12- and 32-bit samples, floats, 16-bit
// CMYK) and where it would premultiply an unassociated alpha in 8 bits.
#include "TIFFSamples.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// A strip's row or a tile's decoded data larger than this is refused rather than allocated.
#define CWI_TIFF_MAX_BLOCK ((tmsize_t)256 * 1024 * 1024)

int cwi_tiff_sample_layout(TIFF *tif, cwi_tiff_layout *layout) {
    uint16_t bits = 1, format = SAMPLEFORMAT_UINT, samples = 1, planar = PLANARCONFIG_CONTIG, compression = COMPRESSION_NONE;
    uint16_t extras = 0, inkset = INKSET_CMYK, photometric = 0;
    uint16_t *kinds = NULL;
    TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &bits);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &format);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &samples);
    TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &planar);
    TIFFGetFieldDefaulted(tif, TIFFTAG_COMPRESSION, &compression);
    TIFFGetFieldDefaulted(tif, TIFFTAG_EXTRASAMPLES, &extras, &kinds);
    TIFFGetFieldDefaulted(tif, TIFFTAG_INKSET, &inkset);
    if (!TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &photometric)) {
        // Without the tag (a required one), what Pillow and libtiff's tools assume.
        photometric = samples >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK;
    }
    uint16_t colors;
    switch (photometric) {
    case PHOTOMETRIC_MINISBLACK:
    case PHOTOMETRIC_MINISWHITE: colors = 1; break;
    case PHOTOMETRIC_RGB: colors = 3; break;
    case PHOTOMETRIC_SEPARATED: colors = inkset == INKSET_CMYK ? 4 : 0; break;
    default: colors = 0;
    }
    int supported_bits = (format == SAMPLEFORMAT_UINT && ((bits >= 1 && bits <= 16) || bits == 32)) ||
                         (format == SAMPLEFORMAT_INT && (bits == 8 || bits == 16 || bits == 32)) ||
                         (format == SAMPLEFORMAT_IEEEFP && (bits == 16 || bits == 32 || bits == 64));
    if (colors == 0 || !supported_bits || samples < colors || compression == COMPRESSION_OJPEG) return 0;
    if (planar != PLANARCONFIG_CONTIG && planar != PLANARCONFIG_SEPARATE) return 0;
    int alpha = samples > colors && extras > 0 && kinds != NULL &&
                (kinds[0] == EXTRASAMPLE_ASSOCALPHA || kinds[0] == EXTRASAMPLE_UNASSALPHA);
    if (alpha && colors == 4) return 0;  // CMYK and alpha do not fit four channels
    layout->bits = bits;
    layout->format = format;
    layout->samples = samples;
    layout->photometric = photometric;
    layout->planar = planar;
    layout->colors = colors;
    layout->has_alpha = (uint16_t)alpha;
    layout->associated = (uint16_t)(alpha && kinds[0] == EXTRASAMPLE_ASSOCALPHA);
    return 1;
}

static uint8_t cwi_clip(double value) {
    if (!(value > 0)) return 0;  // NaN too
    if (value >= 255) return 255;
    return (uint8_t)value;  // truncated, as Pillow and libvips cast
}

// IEEE 754 binary16 (a half float: sign, 5-bit exponent biased by 15, 10-bit fraction) as a
// float; subnormals, infinities and NaN as they are.
static float cwi_half(uint16_t half) {
    int exponent = (half >> 10) & 0x1F;
    float fraction = (float)(half & 0x3FF), value;
    if (exponent == 0) {
        value = ldexpf(fraction, -24);
    } else if (exponent == 31) {
        value = fraction != 0 ? NAN : INFINITY;
    } else {
        value = ldexpf(fraction + 1024, exponent - 25);
    }
    return half & 0x8000 ? -value : value;
}

// Sample `index` of a byte-aligned run of packed samples, in 8 bits.
static uint8_t cwi_sample(const uint8_t *run, size_t index, const cwi_tiff_layout *layout) {
    switch (layout->bits) {
    case 8:
        return layout->format == SAMPLEFORMAT_INT ? cwi_clip(((const int8_t *)run)[index]) : run[index];
    case 16: {
        uint16_t value;
        memcpy(&value, run + index * 2, 2);
        if (layout->format == SAMPLEFORMAT_INT) return cwi_clip((int16_t)value);
        if (layout->format == SAMPLEFORMAT_IEEEFP) return cwi_clip(cwi_half(value));
        return (uint8_t)(((uint32_t)value * 255 + 32767) / 65535);
    }
    case 32: {
        uint32_t value;
        memcpy(&value, run + index * 4, 4);
        if (layout->format == SAMPLEFORMAT_IEEEFP) {
            float real;
            memcpy(&real, &value, 4);
            return cwi_clip(real);
        }
        return layout->format == SAMPLEFORMAT_INT ? cwi_clip((int32_t)value) : cwi_clip(value);
    }
    case 64: {
        double real;
        memcpy(&real, run + index * 8, 8);
        return cwi_clip(real);
    }
    default: {
        // 1-15 bits, packed most significant bit first.
        size_t bit = index * layout->bits;
        uint32_t value = 0;
        for (uint16_t taken = 0; taken < layout->bits; taken++, bit++) {
            value = (value << 1) | ((run[bit >> 3] >> (7 - (bit & 7))) & 1);
        }
        uint32_t full = (1u << layout->bits) - 1;
        return (uint8_t)((value * 255 + full / 2) / full);
    }
    }
}

// Sample `index` in 16 bits: unsigned integers of up to 16 bits from their full range, every
// other kind on the 8-bit scale (cwi_sample) times 257.
static uint16_t cwi_sample16(const uint8_t *run, size_t index, const cwi_tiff_layout *layout) {
    if (layout->format != SAMPLEFORMAT_UINT || layout->bits > 16) return (uint16_t)(cwi_sample(run, index, layout) * 257u);
    if (layout->bits == 16) {
        uint16_t value;
        memcpy(&value, run + index * 2, 2);
        return value;
    }
    if (layout->bits == 8) return (uint16_t)(run[index] * 257u);
    size_t bit = index * layout->bits;
    uint32_t value = 0;
    for (uint16_t taken = 0; taken < layout->bits; taken++, bit++) {
        value = (value << 1) | ((run[bit >> 3] >> (7 - (bit & 7))) & 1);
    }
    uint32_t full = (1u << layout->bits) - 1;
    return (uint16_t)((value * 65535u + full / 2) / full);
}

// The RGBA channel a sample goes to: colour samples to 0-3, alpha to 3; -1 for one not kept.
static int cwi_channel(const cwi_tiff_layout *layout, uint16_t sample) {
    if (sample < layout->colors) return sample;
    if (sample == layout->colors && layout->has_alpha) return 3;
    return -1;
}

// Places the samples of `count` pixels of one row, starting at column `x`, from a run that
// holds `per_pixel` samples per pixel (all of them, or one plane's) beginning with `first`.
// With `wide`, `row` holds 16-bit samples.
static void cwi_place(const uint8_t *run, uint32_t count, uint32_t x, uint8_t *row, uint16_t first, uint16_t per_pixel,
                      const cwi_tiff_layout *layout, int wide) {
    for (uint16_t offset = 0; offset < per_pixel; offset++) {
        int channel = cwi_channel(layout, (uint16_t)(first + offset));
        if (channel < 0) continue;
        for (uint32_t pixel = 0; pixel < count; pixel++) {
            size_t target = (size_t)(x + pixel) * 4 + (size_t)channel, index = (size_t)pixel * per_pixel + offset;
            if (wide) {
                ((uint16_t *)row)[target] = cwi_sample16(run, index, layout);
            } else {
                row[target] = cwi_sample(run, index, layout);
            }
        }
    }
}

// Bytes of one row of `columns` pixels with `per_pixel` samples, rows starting on a byte.
static size_t cwi_row_bytes(uint32_t columns, uint16_t per_pixel, uint16_t bits) {
    return ((size_t)columns * per_pixel * bits + 7) / 8;
}

static int cwi_read_strips(TIFF *tif, const cwi_tiff_layout *layout, uint32_t width, uint32_t height, int wide, uint8_t *out) {
    int separate = layout->planar == PLANARCONFIG_SEPARATE;
    uint16_t planes = separate ? layout->samples : 1, per_pixel = separate ? 1 : layout->samples;
    tmsize_t size = TIFFScanlineSize(tif);
    if (size <= 0 || size > CWI_TIFF_MAX_BLOCK || (size_t)size < cwi_row_bytes(width, per_pixel, layout->bits)) return -1;
    uint8_t *line = malloc((size_t)size);
    if (line == NULL) return -1;
    int status = 0;
    // Plane by plane, each from its first row: libtiff decodes a strip's rows in order only.
    for (uint16_t plane = 0; plane < planes && status == 0; plane++) {
        if (separate && cwi_channel(layout, plane) < 0) continue;
        for (uint32_t y = 0; y < height; y++) {
            if (TIFFReadScanline(tif, line, y, plane) < 0) {
                status = -1;
                break;
            }
            cwi_place(line, width, 0, out + (size_t)y * width * (wide ? 8 : 4), plane, per_pixel, layout, wide);
        }
    }
    free(line);
    return status;
}

static int cwi_read_tiles(TIFF *tif, const cwi_tiff_layout *layout, uint32_t width, uint32_t height, int wide, uint8_t *out) {
    uint32_t tile_width = 0, tile_height = 0;
    TIFFGetField(tif, TIFFTAG_TILEWIDTH, &tile_width);
    TIFFGetField(tif, TIFFTAG_TILELENGTH, &tile_height);
    int separate = layout->planar == PLANARCONFIG_SEPARATE;
    uint16_t planes = separate ? layout->samples : 1, per_pixel = separate ? 1 : layout->samples;
    tmsize_t size = TIFFTileSize(tif);
    size_t row_bytes = cwi_row_bytes(tile_width, per_pixel, layout->bits);
    if (tile_width == 0 || tile_height == 0 || size <= 0 || size > CWI_TIFF_MAX_BLOCK || (size_t)size < row_bytes * tile_height) {
        return -1;
    }
    uint8_t *tile = malloc((size_t)size);
    if (tile == NULL) return -1;
    int status = 0;
    for (uint16_t plane = 0; plane < planes && status == 0; plane++) {
        if (separate && cwi_channel(layout, plane) < 0) continue;
        for (uint32_t top = 0; top < height && status == 0; top += tile_height) {
            for (uint32_t left = 0; left < width; left += tile_width) {
                if (TIFFReadEncodedTile(tif, TIFFComputeTile(tif, left, top, 0, plane), tile, size) < 0) {
                    status = -1;
                    break;
                }
                uint32_t columns = width - left < tile_width ? width - left : tile_width;
                uint32_t rows = height - top < tile_height ? height - top : tile_height;
                for (uint32_t y = 0; y < rows; y++) {
                    cwi_place(tile + y * row_bytes, columns, left, out + (size_t)(top + y) * width * (wide ? 8 : 4), plane, per_pixel,
                              layout, wide);
                }
            }
        }
    }
    free(tile);
    return status;
}

// The colour model applied: grey spread to RGB (inverted for min-is-white), CMYK to RGB as
// libtiff's RGBA interface converts it, alpha opaque where there is none; one definition for
// each sample type, `MAX` its largest value (the product of two fits in 32 bits).
#define CWI_DEFINE_FINISH(NAME, TYPE, MAX)                                                                                     \
    static void NAME(const cwi_tiff_layout *layout, size_t pixels, TYPE *out) {                                                \
        for (size_t pixel = 0; pixel < pixels; pixel++) {                                                                      \
            TYPE *p = out + pixel * 4;                                                                                         \
            if (layout->colors == 1) {                                                                                         \
                TYPE grey = layout->photometric == PHOTOMETRIC_MINISWHITE ? (TYPE)(MAX - p[0]) : p[0];                         \
                p[0] = p[1] = p[2] = grey;                                                                                     \
            } else if (layout->colors == 4) {                                                                                  \
                uint32_t k = MAX - p[3];                                                                                       \
                p[0] = (TYPE)((MAX - p[0]) * k / MAX);                                                                         \
                p[1] = (TYPE)((MAX - p[1]) * k / MAX);                                                                         \
                p[2] = (TYPE)((MAX - p[2]) * k / MAX);                                                                         \
                p[3] = (TYPE)MAX;                                                                                              \
                continue;                                                                                                      \
            }                                                                                                                  \
            if (!layout->has_alpha) p[3] = (TYPE)MAX;                                                                          \
        }                                                                                                                      \
    }

CWI_DEFINE_FINISH(cwi_finish, uint8_t, 255u)
CWI_DEFINE_FINISH(cwi_finish16, uint16_t, 65535u)

int cwi_tiff_read_samples(TIFF *tif, const cwi_tiff_layout *layout, uint32_t width, uint32_t height, int wide, uint8_t *out,
                          char *message, size_t message_size) {
    int status = TIFFIsTiled(tif) ? cwi_read_tiles(tif, layout, width, height, wide, out)
                                  : cwi_read_strips(tif, layout, width, height, wide, out);
    if (status != 0) {
        snprintf(message, message_size, "the %u-bit samples could not be read", layout->bits);
        return -1;
    }
    if (wide) {
        cwi_finish16(layout, (size_t)width * height, (uint16_t *)out);
    } else {
        cwi_finish(layout, (size_t)width * height, out);
    }
    return 0;
}
