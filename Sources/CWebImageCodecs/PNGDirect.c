// The common PNG (8-bit samples, not interlaced, sound data) decoded without libpng's row
// machinery: libpng inflates with zlib a piece at a time and unfilters and expands each row
// through generic transforms, which took two thirds of a large PNG's decode; libdeflate inflates
// the whole stream at once about twice as fast as zlib, and the loops below unfilter and expand in
// one pass. Anything else declines to libpng, which stays the reference for every odd file.
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

#define CWI_FINISH_BAND(NAME, SAMPLE)                                                                           \
    void NAME(uint64_t *sums, uint32_t y, uint32_t width, uint32_t height, uint32_t reduction, SAMPLE *out) {   \
        if ((y + 1) % reduction != 0 && y + 1 != height) return;                                                \
        uint32_t band = y / reduction, band_rows = y + 1 - band * reduction;                                    \
        uint32_t out_width = (width + reduction - 1) / reduction;                                               \
        SAMPLE *out_row = out + (size_t)band * out_width * 4;                                                   \
        for (uint32_t ox = 0; ox < out_width; ox++) {                                                           \
            uint64_t *sum = sums + (size_t)ox * 4;                                                              \
            uint32_t columns = ox + 1 < out_width ? reduction : width - ox * reduction;                         \
            uint64_t count = (uint64_t)columns * band_rows;                                                     \
            SAMPLE *pixel = out_row + (size_t)ox * 4;                                                           \
            pixel[3] = (SAMPLE)((sum[3] + count / 2) / count);                                                  \
            for (int channel = 0; channel < 3; channel++) {                                                     \
                pixel[channel] = pixel[3] == 0 ? 0 : (SAMPLE)((sum[channel] + sum[3] / 2) / sum[3]);            \
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

/// Reverses Paeth on a row with a row above. The left and upper-left samples are carried in
/// registers rather than read back from the row just written, which keeps each channel's chain
/// of dependent steps short (photographs are mostly Paeth rows: this is most of a decode). A
/// pixel-at-a-time SSE2 version (libpng's approach) was slower here: its chain per pixel is
/// longer than three channels' chains side by side.
#define CWI_UNPAETH_CHANNEL(k)                                                                                                   \
    do {                                                                                                                         \
        int above = prior[i + k];                                                                                                \
        left##k = (uint8_t)(row[i + k] + cwi_paeth(left##k, above, upper_left##k));                                              \
        row[i + k] = (uint8_t)left##k;                                                                                           \
        upper_left##k = above;                                                                                                   \
    } while (0)

static void unpaeth3(uint8_t *row, const uint8_t *prior, size_t length) {
    int left0 = 0, left1 = 0, left2 = 0, upper_left0 = 0, upper_left1 = 0, upper_left2 = 0;
    for (size_t i = 0; i + 3 <= length; i += 3) {
        CWI_UNPAETH_CHANNEL(0);
        CWI_UNPAETH_CHANNEL(1);
        CWI_UNPAETH_CHANNEL(2);
    }
}

static void unpaeth4(uint8_t *row, const uint8_t *prior, size_t length) {
    int left0 = 0, left1 = 0, left2 = 0, left3 = 0, upper_left0 = 0, upper_left1 = 0, upper_left2 = 0, upper_left3 = 0;
    for (size_t i = 0; i + 4 <= length; i += 4) {
        CWI_UNPAETH_CHANNEL(0);
        CWI_UNPAETH_CHANNEL(1);
        CWI_UNPAETH_CHANNEL(2);
        CWI_UNPAETH_CHANNEL(3);
    }
}
/// Paeth for one- and two-byte pixels (grey, grey with alpha, palette indexes).
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

/// How one colour type's samples become RGBA: the palette with its alpha, and the tRNS key.
typedef struct {
    int color_type;
    size_t channels;
    uint8_t palette[256][4];
    int has_key;
    uint8_t key[3];
} expansion;

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
    case PNG_COLOR_TYPE_GRAY:
        for (uint32_t x = 0; x < width; x++, row += 1, rgba += 4) {
            rgba[0] = rgba[1] = rgba[2] = row[0];
            rgba[3] = how->has_key && row[0] == how->key[0] ? 0 : 255;
        }
        break;
    case PNG_COLOR_TYPE_GRAY_ALPHA:
        for (uint32_t x = 0; x < width; x++, row += 2, rgba += 4) {
            rgba[0] = rgba[1] = rgba[2] = row[0];
            rgba[3] = row[1];
        }
        break;
    default:
        for (uint32_t x = 0; x < width; x++, rgba += 4) {
            memcpy(rgba, how->palette[row[x]], 4);
        }
        break;
    }
}

/// A row of big-endian 16-bit RGB or RGBA samples as native 16-bit RGBA, alpha 65535 where there
/// is none (what libpng's png_set_expand_16, png_set_add_alpha and png_set_swap make).
static void expand16(const expansion *how, const uint8_t *row, uint32_t width, uint16_t *rgba) {
    size_t channels = how->channels;
    for (uint32_t x = 0; x < width; x++, row += channels * 2, rgba += 4) {
        for (size_t channel = 0; channel < channels; channel++) {
            rgba[channel] = (uint16_t)(row[channel * 2] << 8 | row[channel * 2 + 1]);
        }
        if (channels == 3) rgba[3] = 65535;
    }
}

/// The expansion libpng's png_set_expand would make from what it read: palette entries past
/// PLTE's are black (libpng keeps 256, zeroed), alpha past tRNS's entries opaque.
static int describe(png_structp png, png_infop info, expansion *how) {
    memset(how, 0, sizeof(*how));
    how->color_type = png_get_color_type(png, info);
    how->channels = png_get_channels(png, info);
    png_bytep alphas = NULL;
    int alpha_count = 0;
    png_color_16p key = NULL;
    int has_trns = png_get_tRNS(png, info, &alphas, &alpha_count, &key) != 0;
    if (how->color_type == PNG_COLOR_TYPE_PALETTE) {
        png_colorp colors = NULL;
        int color_count = 0;
        if (png_get_PLTE(png, info, &colors, &color_count) == 0 || color_count > 256) {
            return -1;
        }
        for (int index = 0; index < 256; index++) {
            if (index < color_count) {
                how->palette[index][0] = colors[index].red;
                how->palette[index][1] = colors[index].green;
                how->palette[index][2] = colors[index].blue;
            }
            how->palette[index][3] = has_trns && alphas != NULL && index < alpha_count ? alphas[index] : 255;
        }
    } else if (has_trns && key != NULL) {
        if (how->color_type == PNG_COLOR_TYPE_RGB) {
            if (key->red > 255 || key->green > 255 || key->blue > 255) return -1;
            how->key[0] = (uint8_t)key->red;
            how->key[1] = (uint8_t)key->green;
            how->key[2] = (uint8_t)key->blue;
            how->has_key = 1;
        } else if (how->color_type == PNG_COLOR_TYPE_GRAY) {
            if (key->gray > 255) return -1;
            how->key[0] = (uint8_t)key->gray;
            how->has_key = 1;
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
    /// width x 12 bytes: a 16-bit RGBA row, then an 8-bit one.
    uint8_t *scratch;
    uint64_t *sums;
} row_sink;

/// One unfiltered row into the output: expanded to RGBA (16-bit samples kept, or scaled to 8
/// bits as png_set_scale_16 does: v x 255 / 65535 rounded), at its place, or into its band.
static void emit_row(const row_sink *sink, const uint8_t *row, uint32_t y) {
    uint32_t width = sink->width, reduction = sink->reduction;
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

/// The file's image data inflated at once into `filtered` (`filtered_size` bytes, one more
/// allocated); 0, or 1 when the stream does not fill the rows exactly and end with the data
/// (anything else is libpng's to judge and to warn about) or a row's filter type is unknown.
static int inflate_rows(const uint8_t *idat, size_t available, uint8_t *filtered, size_t filtered_size, size_t row_bytes,
                        uint32_t height) {
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
    for (uint32_t y = 0; !declined && y < height; y++) {
        declined = filtered[(size_t)y * (row_bytes + 1)] > 4;
    }
    return declined;
}

int cwi_png_direct_rows(png_structp png, png_infop info, const uint8_t *idat, size_t available, uint8_t *out, uint32_t width,
                        uint32_t height, uint32_t reduction, int32_t sample_bits) {
    expansion how;
    int depth = png_get_bit_depth(png, info), sixteen = depth == 16, wide = sample_bits == 16;
    if ((depth != 8 && !sixteen) || (wide && !sixteen) || png_get_interlace_type(png, info) != PNG_INTERLACE_NONE ||
        describe(png, info, &how) != 0 || reduction == 0) {
        return 1;
    }
    // 16-bit samples: RGB and RGBA without a tRNS key only; grey and keys go to libpng.
    if (sixteen && (how.has_key || png_get_valid(png, info, PNG_INFO_tRNS) != 0 ||
                    (how.color_type != PNG_COLOR_TYPE_RGB && how.color_type != PNG_COLOR_TYPE_RGB_ALPHA))) {
        return 1;
    }
    size_t bpp = how.channels * (sixteen ? 2 : 1);
    size_t row_bytes = (size_t)width * bpp;
    size_t filtered_size = (row_bytes + 1) * height;
    if (filtered_size / height != row_bytes + 1 || filtered_size > inflate_limit) {
        return 1;
    }
    // One byte more than the rows: cwi_png_unfilter_band reads a whole word at RGB's last pixel.
    uint8_t *filtered = malloc(filtered_size + 1);
    uint32_t out_width = (width + reduction - 1) / reduction;
    row_sink sink = {&how, sixteen, wide, width, height, reduction, out, NULL, NULL};
    if (reduction > 1 || (sixteen && !wide)) sink.scratch = malloc((size_t)width * 12);
    if (reduction > 1) sink.sums = calloc((size_t)out_width * 4, sizeof(uint64_t));
    int declined = filtered == NULL || ((reduction > 1 || (sixteen && !wide)) && sink.scratch == NULL) ||
                   (reduction > 1 && sink.sums == NULL) || inflate_rows(idat, available, filtered, filtered_size, row_bytes, height);
    const uint8_t *prior = NULL;
    uint32_t unfiltered = 0;
    for (uint32_t y = 0; !declined && y < height; y++) {
        uint8_t *row = filtered + (size_t)y * (row_bytes + 1);
        if (y == unfiltered) {
            // A run of Paeth and Average rows at once where the CPU can (8-bit RGB and RGBA), else
            // this row alone.
            uint32_t run = sixteen ? 0 : wavefront_run(row, row_bytes + 1, height - y);
            uint32_t band = run == 0 ? 0 : cwi_png_unfilter_band(row, row_bytes + 1, run, prior, width, (uint32_t)how.channels);
            if (band == 0) {
                unfilter(row + 1, prior, row_bytes, bpp, row[0]);
                band = 1;
            }
            unfiltered = y + band;
        }
        prior = row + 1;
        emit_row(&sink, row + 1, y);
    }
    free(filtered);
    free(sink.scratch);
    free(sink.sums);
    return declined;
}
