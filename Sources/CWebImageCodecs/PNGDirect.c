// A PNG whose data is sound decoded without libpng's row machinery: libpng inflates with zlib a
// piece at a time and unfilters and expands each row through generic transforms, which took two
// thirds of a large PNG's decode; libdeflate inflates the whole stream at once about twice as fast
// as zlib, and the loops below unfilter and expand in one pass. Anything odd declines to libpng,
// which stays the reference for every such file.
#include "CWebImageCodecs.h"
#include "PNGRows.h"

#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>

/// The most inflated image data held at once, beside the output (libpng's streamed read holds a
/// row): 64 MiB, a 4096x4096 RGBA image; a larger one goes to libpng, so the direct path adds at
/// most this to a decode's peak memory.
static const size_t inflate_limit = 64u << 20;

// The block averages, for rows of 8-bit samples and of 16-bit ones (`SAMPLE`): the same code.
#define CWI_ACCUMULATE(NAME, SAMPLE)                                                                  \
    void NAME(const SAMPLE *row, uint32_t width, uint32_t reduction, uint64_t *sums) {                \
        /* Block by block rather than dividing each pixel's x by the reduction: the division cost \
           more than the sums. */                                                                     \
        for (uint32_t start = 0; start < width; start += reduction, sums += 4) {                       \
            uint32_t end = width - start > reduction ? start + reduction : width;                       \
            uint64_t red = 0, green = 0, blue = 0, alphas = 0;                                          \
            for (const SAMPLE *pixel = row + (size_t)start * 4; pixel < row + (size_t)end * 4; pixel += 4) { \
                uint64_t alpha = pixel[3];                                                              \
                red += pixel[0] * alpha;                                                                \
                green += pixel[1] * alpha;                                                              \
                blue += pixel[2] * alpha;                                                               \
                alphas += alpha;                                                                        \
            }                                                                                           \
            sums[0] += red;                                                                             \
            sums[1] += green;                                                                           \
            sums[2] += blue;                                                                            \
            sums[3] += alphas;                                                                          \
        }                                                                                               \
    }

/// n / d rounded down (d at least 1) from d's inverse: a multiplication, then a correction of at
/// most one. A division instruction for each channel of each output pixel was three quarters of
/// a thumbnail band's time. Below 2^48 the estimate is within an eighth of n / d, so the
/// corrected quotient is exact; a larger n (16-bit sums of huge blocks) is divided.
static inline uint64_t quotient(uint64_t n, uint64_t d, double inverse) {
    if (n >= (UINT64_C(1) << 48)) return n / d;
    uint64_t estimate = (uint64_t)((double)n * inverse);
    if (estimate * d > n) return estimate - 1;
    return n - estimate * d >= d ? estimate + 1 : estimate;
}

// Every block of a band but the last column's counts the same pixels, and the blocks of an opaque
// band have the same alpha sum: each divisor's inverse is worked out when it changes.
#define CWI_FINISH_BAND(NAME, SAMPLE)                                                                           \
    void NAME(uint64_t *sums, uint32_t y, uint32_t width, uint32_t height, uint32_t reduction, SAMPLE *out) {   \
        if ((y + 1) % reduction != 0 && y + 1 != height) return;                                                \
        uint32_t band = y / reduction, band_rows = y + 1 - band * reduction;                                    \
        uint32_t out_width = (width + reduction - 1) / reduction;                                               \
        SAMPLE *out_row = out + (size_t)band * out_width * 4;                                                   \
        uint64_t count = (uint64_t)reduction * band_rows, alphas = 0;                                           \
        double count_inverse = 1.0 / (double)count, alphas_inverse = 0;                                         \
        for (uint32_t ox = 0; ox < out_width; ox++) {                                                           \
            uint64_t *sum = sums + (size_t)ox * 4;                                                              \
            uint64_t last = ox + 1 == out_width ? (uint64_t)(width - ox * reduction) * band_rows : count;         \
            if (last != count) {                                                                                \
                count = last;                                                                                   \
                count_inverse = 1.0 / (double)count;                                                            \
            }                                                                                                   \
            SAMPLE *pixel = out_row + (size_t)ox * 4;                                                           \
            pixel[3] = (SAMPLE)quotient(sum[3] + count / 2, count, count_inverse);                              \
            if (sum[3] != alphas) {                                                                             \
                alphas = sum[3];                                                                                \
                alphas_inverse = alphas == 0 ? 0 : 1.0 / (double)alphas;                                        \
            }                                                                                                   \
            for (int channel = 0; channel < 3; channel++) {                                                     \
                pixel[channel] = pixel[3] == 0 ? 0 : (SAMPLE)quotient(sum[channel] + alphas / 2, alphas, alphas_inverse); \
            }                                                                                                   \
            memset(sum, 0, 4 * sizeof(uint64_t));                                                               \
        }                                                                                                       \
    }

CWI_ACCUMULATE(cwi_png_accumulate, uint8_t)
CWI_ACCUMULATE(cwi_png_accumulate16, uint16_t)
CWI_FINISH_BAND(cwi_png_finish_band, uint8_t)
CWI_FINISH_BAND(cwi_png_finish_band16, uint16_t)

#if defined(__x86_64__)
#include <immintrin.h>

/// accumulate_opaque_rgb's blocks of four pixels (a quarter-size thumbnail, the common case) with
/// SSE and AVX2: a block's twelve bytes sorted into red, green and blue, summed four at a time,
/// times 255, added to its four sums. Returns how many blocks it did: each one's 16-byte load
/// stays inside the row, so the last block or two are left to the caller.
__attribute__((target("avx2"))) static uint32_t accumulate_opaque_rgb_by_four(const uint8_t *row, uint32_t width, uint64_t *sums) {
    uint32_t blocks = width / 4;
    while (blocks > 0 && (size_t)blocks * 12 + 4 > (size_t)width * 3) blocks--;
    const __m128i order = _mm_setr_epi8(0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11, -1, -1, -1, -1);
    const __m128i ones = _mm_set1_epi8(1), pairs_of_ones = _mm_set1_epi16(1), four_pixels = _mm_setr_epi32(0, 0, 0, 4);
    for (uint32_t block = 0; block < blocks; block++, sums += 4) {
        __m128i channels = _mm_shuffle_epi8(_mm_loadu_si128((const void *)(row + (size_t)block * 12)), order);
        __m128i totals = _mm_madd_epi16(_mm_maddubs_epi16(channels, ones), pairs_of_ones);
        totals = _mm_mullo_epi32(_mm_add_epi32(totals, four_pixels), _mm_set1_epi32(255));
        _mm256_storeu_si256((void *)sums, _mm256_add_epi64(_mm256_loadu_si256((const void *)sums), _mm256_cvtepu32_epi64(totals)));
    }
    return blocks;
}
#endif

/// cwi_png_accumulate for an opaque RGB row, read where it lies: every alpha is 255, so each
/// block's plain sums times 255 are the weighted sums, the same numbers without an RGBA copy.
static void accumulate_opaque_rgb(const uint8_t *row, uint32_t width, uint32_t reduction, uint64_t *sums) {
    uint32_t first = 0;
#if defined(__x86_64__)
    if (reduction == 4 && __builtin_cpu_supports("avx2")) {
        uint32_t blocks = accumulate_opaque_rgb_by_four(row, width, sums);
        first = blocks * 4;
        sums += (size_t)blocks * 4;
    }
#endif
    for (uint32_t start = first; start < width; start += reduction, sums += 4) {
        uint32_t end = width - start > reduction ? start + reduction : width;
        uint64_t red = 0, green = 0, blue = 0;
        for (const uint8_t *pixel = row + (size_t)start * 3; pixel < row + (size_t)end * 3; pixel += 3) {
            red += pixel[0];
            green += pixel[1];
            blue += pixel[2];
        }
        sums[0] += red * 255;
        sums[1] += green * 255;
        sums[2] += blue * 255;
        sums[3] += (uint64_t)(end - start) * 255;
    }
}

/// cwi_png_accumulate for an opaque RGB row of big-endian 16-bit samples made 8-bit as
/// png_set_scale_16 does (v x 255 / 65535, rounded), read where it lies: the same sums as
/// widening the row to RGBA, narrowing it and weighting each sample by an alpha of 255, which
/// took a fifth of a 16-bit photograph's thumbnail.
static void accumulate_opaque_rgb16_narrowed(const uint8_t *row, uint32_t width, uint32_t reduction, uint64_t *sums) {
    for (uint32_t start = 0; start < width; start += reduction, sums += 4) {
        uint32_t end = width - start > reduction ? start + reduction : width;
        uint64_t red = 0, green = 0, blue = 0;
        for (const uint8_t *pixel = row + (size_t)start * 6; pixel < row + (size_t)end * 6; pixel += 6) {
            red += ((uint32_t)(pixel[0] << 8 | pixel[1]) * 255u + 32895u) >> 16;
            green += ((uint32_t)(pixel[2] << 8 | pixel[3]) * 255u + 32895u) >> 16;
            blue += ((uint32_t)(pixel[4] << 8 | pixel[5]) * 255u + 32895u) >> 16;
        }
        sums[0] += red * 255;
        sums[1] += green * 255;
        sums[2] += blue * 255;
        sums[3] += (uint64_t)(end - start) * 255;
    }
}

static uint32_t big_endian(const uint8_t *bytes) {
    return (uint32_t)bytes[0] << 24 | (uint32_t)bytes[1] << 16 | (uint32_t)bytes[2] << 8 | bytes[3];
}

/// The image data: the run of IDAT chunks from `idat`, each CRC checked, in one piece (the
/// chunk's own bytes when there is one, else a copy in `*copy`). NULL when a chunk is cut short
/// or damaged.
static const uint8_t *gather_idat(const uint8_t *idat, size_t available, size_t *length, uint8_t **copy) {
    size_t offset = 0, total = 0, chunks = 0;
    while (available - offset >= 12 && memcmp(idat + offset + 4, "IDAT", 4) == 0) {
        uint32_t size = big_endian(idat + offset);
        if (size > available - offset - 12) {
            return NULL;
        }
        uint32_t crc = (uint32_t)libdeflate_crc32(0, idat + offset + 4, (size_t)size + 4);
        if (crc != big_endian(idat + offset + 8 + size)) {
            return NULL;
        }
        total += size;
        chunks += 1;
        offset += (size_t)size + 12;
    }
    if (chunks == 0) {
        return NULL;
    }
    *length = total;
    if (chunks == 1) {
        return idat + 8;
    }
    uint8_t *joined = malloc(total == 0 ? 1 : total);
    if (joined == NULL) {
        return NULL;
    }
    size_t written = 0;
    for (size_t at = 0; at < offset;) {
        uint32_t size = big_endian(idat + at);
        memcpy(joined + written, idat + at + 8, size);
        written += size;
        at += (size_t)size + 12;
    }
    *copy = joined;
    return joined;
}

/// Reverses Paeth on a row with a row above, one function per pixel size. The left and
/// upper-left samples are carried in registers rather than read back from the row just written,
/// which keeps each channel's chain of dependent steps short (photographs are mostly Paeth rows:
/// this is most of a decode). A pixel-at-a-time SSE2 version (libpng's approach) was slower here:
/// its chain per pixel is longer than three channels' chains side by side. Each byte of a pixel is
/// a channel of its own, so 16-bit RGB and RGBA (six- and eight-byte pixels) take the same code,
/// about 1.4 times as fast as the general loop below. The channels are named variables, not an
/// array: clang kept an array's in registers too, but 10 to 30% slower at three and six bytes.
#define CWI_CHANNELS_3(X) X(0) X(1) X(2)
#define CWI_CHANNELS_4(X) CWI_CHANNELS_3(X) X(3)
#define CWI_CHANNELS_6(X) CWI_CHANNELS_4(X) X(4) X(5)
#define CWI_CHANNELS_8(X) CWI_CHANNELS_6(X) X(6) X(7)
#define CWI_DECLARE_CHANNEL(k) int left##k = 0, upper_left##k = 0;
#define CWI_UNPAETH_CHANNEL(k)                                                      \
    {                                                                               \
        int above = prior[i + k];                                                   \
        left##k = (uint8_t)(row[i + k] + cwi_paeth(left##k, above, upper_left##k)); \
        row[i + k] = (uint8_t)left##k;                                              \
        upper_left##k = above;                                                      \
    }
#define CWI_UNPAETH_ROW(BPP)                                                      \
    static void unpaeth##BPP(uint8_t *row, const uint8_t *prior, size_t length) { \
        CWI_CHANNELS_##BPP(CWI_DECLARE_CHANNEL)                                   \
        for (size_t i = 0; i + BPP <= length; i += BPP) {                         \
            CWI_CHANNELS_##BPP(CWI_UNPAETH_CHANNEL)                               \
        }                                                                         \
    }

CWI_UNPAETH_ROW(3)
CWI_UNPAETH_ROW(4)
CWI_UNPAETH_ROW(6)
CWI_UNPAETH_ROW(8)

/// Paeth for one- and two-byte pixels (grey, grey with alpha, palette indexes) and 16-bit grey.
static void unpaeth(uint8_t *row, const uint8_t *prior, size_t length, size_t bpp) {
    for (size_t i = 0; i < bpp; i++) row[i] = (uint8_t)(row[i] + prior[i]);
    for (size_t i = bpp; i < length; i++) row[i] = (uint8_t)(row[i] + cwi_paeth(row[i - bpp], prior[i], prior[i - bpp]));
}

/// Up: the row above added. The rows never overlap; saying so (`restrict`) lets the compiler add
/// them a vector at a time, which it did not do for the plain loop (a byte at a time was most of a
/// screenshot's decode).
static void unup(uint8_t *restrict row, const uint8_t *restrict prior, size_t length) {
    for (size_t i = 0; i < length; i++) row[i] = (uint8_t)(row[i] + prior[i]);
}

/// Reverses one row's filter in place; `prior` is the row above, unfiltered, or NULL for the first.
static void unfilter(uint8_t *row, const uint8_t *prior, size_t length, size_t bpp, uint8_t filter) {
    switch (filter) {
    case 1:
        if (cwi_png_unsub(row, length, (uint32_t)bpp)) break;
        for (size_t i = bpp; i < length; i++) row[i] = (uint8_t)(row[i] + row[i - bpp]);
        break;
    case 2:
        if (prior != NULL) unup(row, prior, length);
        break;
    case 3:
        if (prior == NULL) {
            for (size_t i = bpp; i < length; i++) row[i] = (uint8_t)(row[i] + (row[i - bpp] >> 1));
        } else {
            for (size_t i = 0; i < bpp; i++) row[i] = (uint8_t)(row[i] + (prior[i] >> 1));
            for (size_t i = bpp; i < length; i++) row[i] = (uint8_t)(row[i] + ((row[i - bpp] + prior[i]) >> 1));
        }
        break;
    case 4:
        if (prior == NULL) {
            unfilter(row, NULL, length, bpp, 1);  // Paeth with no row above is Sub
        } else if (bpp == 3) {
            unpaeth3(row, prior, length);
        } else if (bpp == 4) {
            unpaeth4(row, prior, length);
        } else if (bpp == 6) {
            unpaeth6(row, prior, length);
        } else if (bpp == 8) {
            unpaeth8(row, prior, length);
        } else {
            unpaeth(row, prior, length, bpp);
        }
        break;
    default:
        break;
    }
}

/// How many rows from `row` (each behind its filter byte, `stride` apart) the sixteen-lane
/// wavefront unfilters at once (cwi_png_unfilter_band): a run of nine to sixteen Paeth or Average
/// rows, else 0 and the row goes alone. A band costs its width in steps whatever rows it holds,
/// about eight Paeth rows' worth of the row-by-row loop (measured: 100 us for sixteen 2048-pixel
/// RGB rows, 13 us for one row alone); an Up row alone is a vector add (0.15 us) and a Sub row
/// alone no slower than its lane, so screenshots' and grainy files' Up and Sub rows go alone.
static uint32_t wavefront_run(const uint8_t *row, size_t stride, uint32_t rows_left) {
    uint32_t run = 0;
    while (run < 16 && run < rows_left && (row[(size_t)run * stride] == 3 || row[(size_t)run * stride] == 4)) run++;
    return run >= 9 ? run : 0;
}

/// How a file's samples become RGBA: its colour type and depth, the table for grey and palette
/// samples, and the tRNS key of RGB and 16-bit grey.
typedef struct {
    int color_type, depth;
    size_t channels;
    /// A grey or palette sample (1 to 8 bits) as RGBA: the palette entry with tRNS's alpha, or the
    /// grey widened to 8 bits as png_set_expand_gray_1_2_4_to_8 does (bits repeated), transparent
    /// where it is the key.
    uint8_t table[256][4];
    int has_key;
    uint16_t key[3];
} expansion;

/// A row of 1-, 2- or 4-bit samples, first sample in the high bits, one byte each in `samples`.
static void unpack(const uint8_t *row, uint32_t width, int depth, uint8_t *samples) {
    uint32_t per_byte = 8u / (uint32_t)depth, mask = (1u << depth) - 1;
    for (uint32_t x = 0; x < width; row++) {
        uint32_t byte = *row;
        for (uint32_t k = 0; k < per_byte && x < width; k++, x++) samples[x] = (uint8_t)(byte >> (8u - (uint32_t)depth * (k + 1)) & mask);
    }
}

/// A row of 8-bit samples (grey and palette ones one byte each, unpacked) as RGBA.
static void expand(const expansion *how, const uint8_t *row, uint32_t width, uint8_t *rgba) {
    switch (how->color_type) {
    case PNG_COLOR_TYPE_RGB_ALPHA:
        memcpy(rgba, row, (size_t)width * 4);
        break;
    case PNG_COLOR_TYPE_RGB:
        for (uint32_t x = 0; x < width; x++, row += 3, rgba += 4) {
            rgba[0] = row[0];
            rgba[1] = row[1];
            rgba[2] = row[2];
            rgba[3] = how->has_key && row[0] == how->key[0] && row[1] == how->key[1] && row[2] == how->key[2] ? 0 : 255;
        }
        break;
    case PNG_COLOR_TYPE_GRAY_ALPHA:
        for (uint32_t x = 0; x < width; x++, row += 2, rgba += 4) {
            rgba[0] = rgba[1] = rgba[2] = row[0];
            rgba[3] = row[1];
        }
        break;
    default:
        for (uint32_t x = 0; x < width; x++, rgba += 4) memcpy(rgba, how->table[row[x]], 4);
        break;
    }
}

/// A row of big-endian 16-bit samples (any colour type but palette) as native 16-bit RGBA: grey
/// repeated, alpha 65535 where there is none or 0 at the key (what libpng's png_set_expand,
/// png_set_gray_to_rgb, png_set_add_alpha and png_set_swap make).
static void expand16(const expansion *how, const uint8_t *row, uint32_t width, uint16_t *rgba) {
    size_t channels = how->channels;
    if (channels >= 3 && !how->has_key) {
        // RGB and RGBA without a key, the common files: a loop the compiler can unroll.
        for (uint32_t x = 0; x < width; x++, row += channels * 2, rgba += 4) {
            for (size_t channel = 0; channel < channels; channel++) rgba[channel] = (uint16_t)(row[channel * 2] << 8 | row[channel * 2 + 1]);
            if (channels == 3) rgba[3] = 65535;
        }
        return;
    }
    for (uint32_t x = 0; x < width; x++, row += channels * 2, rgba += 4) {
        uint16_t samples[4];
        for (size_t channel = 0; channel < channels; channel++) samples[channel] = (uint16_t)(row[channel * 2] << 8 | row[channel * 2 + 1]);
        if (channels <= 2) {
            rgba[0] = rgba[1] = rgba[2] = samples[0];
            rgba[3] = channels == 2 ? samples[1] : how->has_key && samples[0] == how->key[0] ? 0 : 65535;
        } else {
            memcpy(rgba, samples, 3 * sizeof(uint16_t));
            int keyed = how->has_key && samples[0] == how->key[0] && samples[1] == how->key[1] && samples[2] == how->key[2];
            rgba[3] = channels == 4 ? samples[3] : keyed ? 0 : 65535;
        }
    }
}

/// The palette as png_set_expand makes it: entries past PLTE's are black (libpng keeps 256,
/// zeroed), alpha past tRNS's entries opaque.
static int describe_palette(png_structp png, png_infop info, expansion *how, const png_bytep alphas, int alpha_count) {
    png_colorp colors = NULL;
    int color_count = 0;
    if (png_get_PLTE(png, info, &colors, &color_count) == 0 || color_count > 256) return -1;
    for (int index = 0; index < 256; index++) {
        if (index < color_count) {
            how->table[index][0] = colors[index].red;
            how->table[index][1] = colors[index].green;
            how->table[index][2] = colors[index].blue;
        }
        how->table[index][3] = alphas != NULL && index < alpha_count ? alphas[index] : 255;
    }
    return 0;
}

/// The expansion libpng's transforms would make from what it read; -1 for what the direct path
/// leaves to libpng (a key outside the samples' range, which libpng would mask).
static int describe(png_structp png, png_infop info, expansion *how) {
    memset(how, 0, sizeof(*how));
    how->color_type = png_get_color_type(png, info);
    how->depth = png_get_bit_depth(png, info);
    how->channels = png_get_channels(png, info);
    png_bytep alphas = NULL;
    int alpha_count = 0;
    png_color_16p key = NULL;
    int has_trns = png_get_tRNS(png, info, &alphas, &alpha_count, &key) != 0;
    if (how->color_type == PNG_COLOR_TYPE_PALETTE) return describe_palette(png, info, how, has_trns ? alphas : NULL, alpha_count);
    uint32_t largest = (1u << how->depth) - 1;
    how->has_key = has_trns && key != NULL && (how->color_type == PNG_COLOR_TYPE_RGB || how->color_type == PNG_COLOR_TYPE_GRAY);
    if (how->has_key && how->color_type == PNG_COLOR_TYPE_RGB) {
        if (key->red > largest || key->green > largest || key->blue > largest) return -1;
        how->key[0] = key->red;
        how->key[1] = key->green;
        how->key[2] = key->blue;
    } else if (how->has_key) {
        if (key->gray > largest) return -1;
        how->key[0] = key->gray;
    }
    if (how->color_type == PNG_COLOR_TYPE_GRAY && how->depth <= 8) {
        for (uint32_t value = 0; value <= largest; value++) {
            uint8_t grey = (uint8_t)(value * (255 / largest));
            how->table[value][0] = how->table[value][1] = how->table[value][2] = grey;
            how->table[value][3] = how->has_key && value == how->key[0] ? 0 : 255;
        }
    }
    return 0;
}

/// Where the rows go: a decode's output, or its reduction's band sums, with a row of scratch.
typedef struct {
    const expansion *how;
    /// The file's samples are 16 bits; the output's are (`wide`).
    int sixteen, wide;
    uint32_t width, height, reduction;
    uint8_t *out;
    /// width x 13 bytes: a 16-bit RGBA row, an 8-bit one, and a row of unpacked samples.
    uint8_t *scratch;
    uint64_t *sums;
} row_sink;

/// One unfiltered row, its low-depth samples unpacked, into the output: expanded to RGBA (16-bit
/// samples kept, or scaled to 8 bits as png_set_scale_16 does: v x 255 / 65535 rounded), at its
/// place, or into its band.
static void emit_row(const row_sink *sink, const uint8_t *row, uint32_t y) {
    uint32_t width = sink->width, reduction = sink->reduction;
    if (sink->sixteen && !sink->wide && reduction > 1 && sink->how->color_type == PNG_COLOR_TYPE_RGB && !sink->how->has_key) {
        accumulate_opaque_rgb16_narrowed(row, width, reduction, sink->sums);
        cwi_png_finish_band(sink->sums, y, width, sink->height, reduction, sink->out);
        return;
    }
    if (sink->sixteen) {
        uint16_t *wide = reduction == 1 && sink->wide ? (uint16_t *)sink->out + (size_t)y * width * 4 : (uint16_t *)sink->scratch;
        expand16(sink->how, row, width, wide);
        if (sink->wide) {
            if (reduction > 1) {
                cwi_png_accumulate16(wide, width, reduction, sink->sums);
                cwi_png_finish_band16(sink->sums, y, width, sink->height, reduction, (uint16_t *)sink->out);
            }
            return;
        }
        uint8_t *narrow = reduction == 1 ? sink->out + (size_t)y * width * 4 : sink->scratch + (size_t)width * 8;
        for (size_t index = 0; index < (size_t)width * 4; index++) narrow[index] = (uint8_t)((wide[index] * 255u + 32895u) >> 16);
        if (reduction > 1) {
            cwi_png_accumulate(narrow, width, reduction, sink->sums);
            cwi_png_finish_band(sink->sums, y, width, sink->height, reduction, sink->out);
        }
        return;
    }
    if (reduction == 1) {
        expand(sink->how, row, width, sink->out + (size_t)y * width * 4);
        return;
    }
    if (sink->how->color_type == PNG_COLOR_TYPE_RGB && !sink->how->has_key) {
        accumulate_opaque_rgb(row, width, reduction, sink->sums);
    } else {
        expand(sink->how, row, width, sink->scratch);
        cwi_png_accumulate(sink->scratch, width, reduction, sink->sums);
    }
    cwi_png_finish_band(sink->sums, y, width, sink->height, reduction, sink->out);
}

/// The rows of one image as filtered in the file: the whole image, or one of Adam7's passes.
typedef struct {
    uint32_t width, height;
    /// Bytes of samples a row (after its filter byte).
    size_t row_bytes;
    /// Where the pass's pixels sit in the image: first column and row, and the steps between.
    uint32_t x0, y0, dx, dy;
} pass_shape;

/// Adam7's seven passes (PNG specification, 8.2): first column and row, column and row steps.
static const uint8_t adam7[7][4] = {{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4}, {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}};

/// The shape of pass `pass` of an image (-1: the image without interlacing); a pass with no
/// column or no row has no bytes at all in the file, not even filter bytes.
static pass_shape shape_of(uint32_t width, uint32_t height, size_t pixel_bits, int pass) {
    pass_shape shape = {width, height, 0, 0, 0, 1, 1};
    if (pass >= 0) {
        shape.x0 = adam7[pass][0], shape.y0 = adam7[pass][1], shape.dx = adam7[pass][2], shape.dy = adam7[pass][3];
        shape.width = width > shape.x0 ? (width - shape.x0 + shape.dx - 1) / shape.dx : 0;
        shape.height = height > shape.y0 ? (height - shape.y0 + shape.dy - 1) / shape.dy : 0;
    }
    if (shape.width == 0) shape.height = 0;
    shape.row_bytes = ((size_t)shape.width * pixel_bits + 7) / 8;
    return shape;
}

/// The file's image data inflated at once into `filtered` (`filtered_size` bytes, one more
/// allocated); 0, or 1 when the stream does not fill the rows exactly and end with the data
/// (anything else is libpng's to judge and to warn about) or a row's filter type is unknown.
static int inflate_rows(const uint8_t *idat, size_t available, uint8_t *filtered, size_t filtered_size, const pass_shape *passes,
                        int pass_count) {
    uint8_t *copy = NULL;
    size_t compressed_size = 0;
    const uint8_t *compressed = gather_idat(idat, available, &compressed_size, &copy);
    struct libdeflate_decompressor *inflater = compressed == NULL ? NULL : libdeflate_alloc_decompressor();
    int declined = inflater == NULL;
    if (!declined) {
        size_t used = 0, produced = 0;
        enum libdeflate_result result =
            libdeflate_zlib_decompress_ex(inflater, compressed, compressed_size, filtered, filtered_size, &used, &produced);
        declined = result != LIBDEFLATE_SUCCESS || used != compressed_size || produced != filtered_size;
        libdeflate_free_decompressor(inflater);
        filtered[filtered_size] = 0;
    }
    free(copy);
    // An unknown filter type is an error libpng reports: check them all before writing any pixel.
    const uint8_t *row = filtered;
    for (int pass = 0; !declined && pass < pass_count; pass++) {
        for (uint32_t y = 0; !declined && y < passes[pass].height; y++, row += passes[pass].row_bytes + 1) declined = *row > 4;
    }
    return declined;
}

/// What is done with each row once it is unfiltered: `row` holds its samples (after the filter
/// byte), `y` its number within the pass.
typedef void (*row_handler)(void *context, const uint8_t *row, uint32_t y);

/// The channels the sixteen-lane wavefront unfilters for this file's rows: 8-bit samples' (it
/// takes RGB and RGBA), else 0.
static uint32_t wavefront_channels(const expansion *how) { return how->depth == 8 ? (uint32_t)how->channels : 0; }

/// Unfilters the rows of one image or pass in order, in place, handing each to `handle` (if any)
/// as soon as it is done: a run of Paeth and Average rows at once where the CPU can (8-bit RGB and
/// RGBA, `channels` 3 or 4), else row by row. Returns the byte after the last row.
static uint8_t *unfilter_rows(uint8_t *rows, pass_shape shape, size_t bpp, uint32_t channels, row_handler handle, void *context) {
    size_t stride = shape.row_bytes + 1;
    const uint8_t *prior = NULL;
    uint32_t unfiltered = 0;
    for (uint32_t y = 0; y < shape.height; y++) {
        uint8_t *row = rows + (size_t)y * stride;
        if (y == unfiltered) {
            uint32_t run = bpp == channels ? wavefront_run(row, stride, shape.height - y) : 0;
            uint32_t band = run == 0 ? 0 : cwi_png_unfilter_band(row, stride, run, prior, shape.width, channels);
            if (band == 0) {
                unfilter(row + 1, prior, shape.row_bytes, bpp, row[0]);
                band = 1;
            }
            unfiltered = y + band;
        }
        prior = row + 1;
        if (handle != NULL) handle(context, row + 1, y);
    }
    return rows + (size_t)shape.height * stride;
}

/// A row of `width` pixels as emit_row takes them: low-depth samples unpacked into the sink's
/// scratch, a byte each; any other row as it is.
static const uint8_t *unpacked(const row_sink *sink, const uint8_t *row, uint32_t width) {
    if (sink->how->depth >= 8) return row;
    uint8_t *samples = sink->scratch + (size_t)sink->width * 12;
    unpack(row, width, sink->how->depth, samples);
    return samples;
}

/// A row of the image (not interlaced) to the sink.
static void emit_file_row(void *context, const uint8_t *row, uint32_t y) {
    const row_sink *sink = context;
    emit_row(sink, unpacked(sink, row, sink->width), y);
}

/// Copies `count` pixels of `pixel_bytes` each from `samples` to every `step`-th pixel of `target`.
/// Each common size is its own loop, so that a pixel is a move or two instead of a call to memcpy
/// (a call a pixel was a quarter of an interlaced photograph's decode).
static void place_pixels(uint8_t *restrict target, const uint8_t *restrict samples, uint32_t count, size_t step, size_t pixel_bytes) {
#define CWI_PLACE(BYTES)                                                                          \
    for (uint32_t i = 0; i < count; i++) {                                                        \
        memcpy(target + (size_t)i * step * (BYTES), samples + (size_t)i * (BYTES), (BYTES));     \
    }                                                                                             \
    return
    switch (pixel_bytes) {
    case 1: CWI_PLACE(1);
    case 2: CWI_PLACE(2);
    case 3: CWI_PLACE(3);
    case 4: CWI_PLACE(4);
    case 6: CWI_PLACE(6);
    default: CWI_PLACE(8);
    }
#undef CWI_PLACE
}

/// The unfiltered row of pass `shape` (its rows from `rows`, each behind its filter byte) that
/// holds pixels of the image's row `y`, or NULL when the pass has none there.
static const uint8_t *pass_row(const uint8_t *rows, const pass_shape *shape, uint32_t y) {
    if (shape->height == 0 || y < shape->y0 || (y - shape->y0) % shape->dy != 0) return NULL;
    return rows + (size_t)((y - shape->y0) / shape->dy) * (shape->row_bytes + 1) + 1;
}

/// An interlaced image: every pass unfiltered in place, then each of the image's rows gathered
/// from the passes that have pixels in it and handed to the sink, as a file's row would be. An
/// odd row is pass 7's alone and goes as it lies. Row by row, rather than each pass scattered into
/// the whole image first (as libpng's reduced decode of an interlaced file does): no image-sized
/// buffer, and each row is gathered while it is in the cache. 1 without memory for a row.
static int deinterlace(uint8_t *filtered, const pass_shape *passes, size_t bpp, const row_sink *sink) {
    size_t pixel_bytes = sink->how->depth < 8 ? 1 : sink->how->channels * (size_t)sink->how->depth / 8;
    uint8_t *assembled = malloc((size_t)sink->width * pixel_bytes);
    if (assembled == NULL) return 1;
    const uint8_t *starts[7];
    for (int pass = 0; pass < 7; pass++) {
        starts[pass] = filtered;
        filtered = unfilter_rows(filtered, passes[pass], bpp, wavefront_channels(sink->how), NULL, NULL);
    }
    for (uint32_t y = 0; y < sink->height; y++) {
        const uint8_t *whole = NULL;
        for (int pass = 0; pass < 7; pass++) {
            const uint8_t *row = pass_row(starts[pass], &passes[pass], y);
            if (row == NULL) continue;
            const uint8_t *samples = unpacked(sink, row, passes[pass].width);
            if (passes[pass].dx == 1) {
                whole = samples;
                break;
            }
            place_pixels(assembled + passes[pass].x0 * pixel_bytes, samples, passes[pass].width, passes[pass].dx, pixel_bytes);
        }
        emit_row(sink, whole != NULL ? whole : assembled, y);
    }
    free(assembled);
    return 0;
}

int cwi_png_direct_rows(png_structp png, png_infop info, const uint8_t *idat, size_t available, uint8_t *out, uint32_t width,
                        uint32_t height, uint32_t reduction, int32_t sample_bits) {
    expansion how;
    if (describe(png, info, &how) != 0 || reduction == 0 || (sample_bits == 16 && how.depth != 16)) return 1;
    int interlaced = png_get_interlace_type(png, info) != PNG_INTERLACE_NONE, pass_count = interlaced ? 7 : 1;
    // libpng refuses to reduce an interlaced file at 16 bits (the caller never asks): so does this.
    if (interlaced && reduction > 1 && sample_bits == 16) return 1;
    size_t pixel_bits = how.channels * (size_t)how.depth, bpp = (pixel_bits + 7) / 8;
    pass_shape passes[7];
    size_t filtered_size = 0;
    for (int pass = 0; pass < pass_count; pass++) {
        passes[pass] = shape_of(width, height, pixel_bits, interlaced ? pass : -1);
        size_t stride = passes[pass].row_bytes + 1;
        if (passes[pass].height > 0 && stride > (inflate_limit - filtered_size) / passes[pass].height) return 1;
        filtered_size += stride * passes[pass].height;
    }
    // One byte more than the rows: cwi_png_unfilter_band reads a whole word at RGB's last pixel.
    uint8_t *filtered = malloc(filtered_size + 1);
    uint32_t out_width = (width + reduction - 1) / reduction;
    row_sink sink = {&how, how.depth == 16, sample_bits == 16, width, height, reduction, out, malloc((size_t)width * 13), NULL};
    if (reduction > 1) sink.sums = calloc((size_t)out_width * 4, sizeof(uint64_t));
    int declined = filtered == NULL || sink.scratch == NULL || (reduction > 1 && sink.sums == NULL) ||
                   inflate_rows(idat, available, filtered, filtered_size, passes, pass_count);
    if (!declined && interlaced) {
        declined = deinterlace(filtered, passes, bpp, &sink);
    } else if (!declined) {
        unfilter_rows(filtered, passes[0], bpp, wavefront_channels(&how), emit_file_row, &sink);
    }
    free(filtered);
    free(sink.scratch);
    free(sink.sums);
    return declined;
}
