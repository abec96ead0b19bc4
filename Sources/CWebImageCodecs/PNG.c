// Classic libpng reports errors by longjmp, which Swift cannot call or survive:
// these wrappers own the setjmp so a bad file returns an error code instead of exiting.
#include "CWebImageCodecs.h"

#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <png.h>

#include "PNGRows.h"

#define CWI_LITTLE_ENDIAN (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)

typedef struct {
    const uint8_t *data;
    size_t size;
    size_t offset;
    /// The data ran out (as opposed to being wrong).
    int ended;
} cwi_png_source;

static void cwi_png_read(png_structp png, png_bytep out, size_t length) {
    cwi_png_source *source = (cwi_png_source *)png_get_io_ptr(png);
    if (source->size - source->offset < length) {
        source->ended = 1;
        png_error(png, "unexpected end of data");
    }
    memcpy(out, source->data + source->offset, length);
    source->offset += length;
}

static void cwi_png_error(png_structp png, png_const_charp message) {
    char *target = (char *)png_get_error_ptr(png);
    snprintf(target, 200, "%s", message);
    png_longjmp(png, 1);
}

static void cwi_png_warning(png_structp png, png_const_charp message) { (void)png; (void)message; }

int cwi_png_read_header(const uint8_t *data, size_t size, cwi_header_info *info) {
    memset(info, 0, sizeof(*info));
    if (size < 8 || png_sig_cmp(data, 0, 8) != 0) {
        snprintf(info->message, sizeof(info->message), "not a PNG signature");
        return -1;
    }
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, info->message,
                                             cwi_png_error, cwi_png_warning);
    if (png == NULL) {
        snprintf(info->message, sizeof(info->message), "out of memory");
        return -1;
    }
    png_infop png_info = png_create_info_struct(png);
    cwi_png_source source = {data, size, 0, 0};
    if (png_info == NULL || setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &png_info, NULL);
        return -1;
    }
    png_set_read_fn(png, &source, cwi_png_read);
    png_read_info(png, png_info);
    info->width = png_get_image_width(png, png_info);
    info->height = png_get_image_height(png, png_info);
    info->components = png_get_channels(png, png_info);
    info->bit_depth = png_get_bit_depth(png, png_info);
    info->progressive = png_get_interlace_type(png, png_info) == PNG_INTERLACE_ADAM7 ? 1 : 0;
    png_destroy_read_struct(&png, &png_info, NULL);
    return 0;
}

static void cwi_png_decode_error(png_structp png, png_const_charp message) {
    cwi_png_outcome *outcome = (cwi_png_outcome *)png_get_error_ptr(png);
    snprintf(outcome->message, sizeof(outcome->message), "%s", message);
    png_longjmp(png, 1);
}

static void cwi_png_decode_warning(png_structp png, png_const_charp message) {
    cwi_png_outcome *outcome = (cwi_png_outcome *)png_get_error_ptr(png);
    size_t used = strlen(outcome->warnings);
    if (used + 3 < sizeof(outcome->warnings)) {
        snprintf(outcome->warnings + used, sizeof(outcome->warnings) - used, "%s%s", used > 0 ? "; " : "", message);
    }
}

/// Every row of `whole` (`width` x `height` straight RGBA) averaged by blocks into `out`.
static void cwi_png_reduce_whole(const uint8_t *whole, uint32_t width, uint32_t height, uint32_t reduction, uint64_t *sums,
                                 uint8_t *out) {
    for (uint32_t y = 0; y < height; y++) {
        cwi_png_accumulate(whole + (size_t)y * width * 4, width, reduction, sums);
        cwi_png_finish_band(sums, y, width, height, reduction, out);
    }
}

int cwi_png_decode_rgba(const uint8_t *data, size_t size, uint8_t *out, size_t out_size,
                        uint32_t width, uint32_t height, uint32_t reduction, int32_t accept_truncated,
                        int32_t allow_direct, int32_t sample_bits, cwi_png_outcome *outcome) {
    memset(outcome, 0, sizeof(*outcome));
    uint32_t out_width = reduction == 0 ? 0 : (width + reduction - 1) / reduction;
    uint32_t out_height = reduction == 0 ? 0 : (height + reduction - 1) / reduction;
    size_t pixel_bytes = sample_bits == 16 ? 8 : 4;
    int layout_ok = (sample_bits == 8 || sample_bits == 16) && out_size == (size_t)out_width * out_height * pixel_bytes;
    if (size < 8 || png_sig_cmp(data, 0, 8) != 0 || reduction == 0 || !layout_ok) {
        snprintf(outcome->message, sizeof(outcome->message), "not a PNG, or the buffer does not fit it");
        return -1;
    }
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, outcome, cwi_png_decode_error, cwi_png_decode_warning);
    if (png == NULL) {
        snprintf(outcome->message, sizeof(outcome->message), "libpng could not start");
        return -1;
    }
    png_infop png_info = png_create_info_struct(png);
    cwi_png_source source = {data, size, 0, 0};
    // volatile: the error path after longjmp must see the values as last set.
    volatile uint32_t rows_read = 0;
    volatile int passes = 1;
    uint8_t *volatile row = NULL;
    uint64_t *volatile sums = NULL;
    // An interlaced file reduced: the whole image, decoded before it is reduced.
    uint8_t *volatile whole = NULL;
    if (png_info == NULL || setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &png_info, NULL);
        // The data ran out inside the image: what was decoded is an image, if it was asked for.
        int truncated = source.ended || strstr(outcome->message, "Not enough image data") != NULL;
        int partial = accept_truncated && truncated && (rows_read > 0 || passes > 1);
        if (partial && whole != NULL && sums != NULL) {
            cwi_png_reduce_whole(whole, width, height, reduction, sums, out);
        }
        free(row);
        free(sums);
        free(whole);
        if (partial) {
            outcome->partial = 1;
            return 0;
        }
        return -1;
    }
    png_set_read_fn(png, &source, cwi_png_read);
    // As browsers do: a damaged ancillary chunk (text, colour profile, ...) is dropped with a
    // warning, a damaged critical one (IHDR, PLTE, IDAT) is an error; libpng's "benign" errors
    // (an iCCP it cannot read) are warnings.
    png_set_crc_action(png, PNG_CRC_DEFAULT, PNG_CRC_WARN_DISCARD);
    png_set_benign_errors(png, 1);
    png_read_info(png, png_info);
    if (png_get_image_width(png, png_info) != width || png_get_image_height(png, png_info) != height) {
        png_error(png, "the size changed since the header was read");
    }
    int color_type = png_get_color_type(png, png_info);
    outcome->has_alpha = (color_type & PNG_COLOR_MASK_ALPHA) != 0 || png_get_valid(png, png_info, PNG_INFO_tRNS) != 0;
    // libpng has read every chunk before the image data and stopped after the first IDAT's
    // length and type. A file it had nothing to say about so far may take the direct path.
    if (allow_direct && outcome->warnings[0] == 0 && source.offset >= 8 &&
        cwi_png_direct_rows(png, png_info, data + source.offset - 8, size - (source.offset - 8), out, width, height, reduction,
                            sample_bits) == 0) {
        outcome->direct = 1;
        png_destroy_read_struct(&png, &png_info, NULL);
        return 0;
    }
    // Palette, low bit depths and tRNS become 8-bit RGBA; 16-bit samples are scaled with
    // rounding (value x 255 / 65535), not cut to their high byte as Pillow does; no gamma is
    // applied (the simplified API would treat 16-bit data as linear light and brighten it).
    // Asked for 16 bits, every depth is widened to 16-bit RGBA in the machine's byte order.
    png_set_expand(png);
    if (sample_bits == 16) {
        png_set_expand_16(png);
    } else {
        png_set_scale_16(png);
    }
    png_set_gray_to_rgb(png);
    png_set_add_alpha(png, sample_bits == 16 ? 0xFFFF : 0xFF, PNG_FILLER_AFTER);
    if (sample_bits == 16 && CWI_LITTLE_ENDIAN) {
        png_set_swap(png);
    }
    int pass_count = png_set_interlace_handling(png);
    png_read_update_info(png, png_info);
    if (png_get_rowbytes(png, png_info) != (size_t)width * pixel_bytes) {
        png_error(png, "unexpected row layout after expansion");
    }
    if (reduction > 1 && pass_count > 1 && sample_bits == 16) {
        png_error(png, "an interlaced file is not reduced at 16 bits");
    } else if (reduction > 1 && pass_count > 1) {
        // Adam7 revisits every row on each pass, so an interlaced file is decoded whole, then
        // reduced by the same block averages (one resampling after it, not a full-size one).
        whole = calloc((size_t)width * height, 4);
        sums = calloc((size_t)out_width * 4, sizeof(uint64_t));
        if (whole == NULL || sums == NULL) {
            png_error(png, "out of memory for the image");
        }
        for (int pass = 0; pass < pass_count; pass++) {
            passes = pass + 1;
            for (uint32_t y = 0; y < height; y++) {
                png_read_row(png, whole + (size_t)y * width * 4, NULL);
                if (pass == 0) {
                    rows_read = y + 1;
                }
            }
        }
        cwi_png_reduce_whole(whole, width, height, reduction, sums, out);
        free(whole);
        free(sums);
        whole = NULL;
        sums = NULL;
    } else if (reduction > 1) {
        // Reduced: each band of `reduction` rows is averaged into one output row as it arrives,
        // so only a row and the band's sums are held, never the whole image.
        row = malloc((size_t)width * pixel_bytes);
        sums = calloc((size_t)out_width * 4, sizeof(uint64_t));
        if (row == NULL || sums == NULL) {
            png_error(png, "out of memory for a row");
        }
        for (uint32_t y = 0; y < height; y++) {
            png_read_row(png, row, NULL);
            rows_read = y + 1;
            if (sample_bits == 16) {
                cwi_png_accumulate16((const uint16_t *)row, width, reduction, sums);
                cwi_png_finish_band16(sums, y, width, height, reduction, (uint16_t *)out);
            } else {
                cwi_png_accumulate(row, width, reduction, sums);
                cwi_png_finish_band(sums, y, width, height, reduction, out);
            }
        }
        free(row);
        free(sums);
        row = NULL;
        sums = NULL;
    } else {
        // Row by row, not png_read_image, so that a file cut short knows how far it got.
        for (int pass = 0; pass < pass_count; pass++) {
            passes = pass + 1;
            for (uint32_t y = 0; y < height; y++) {
                png_read_row(png, out + (size_t)y * width * pixel_bytes, NULL);
                if (pass == 0) {
                    rows_read = y + 1;
                }
            }
        }
    }
    png_destroy_read_struct(&png, &png_info, NULL);
    return 0;
}

struct cwi_png_stream {
    png_structp png;
    png_infop info;
    char message[200];
    cwi_png_image image;
    int interlaced;
    int failed;
};

static void cwi_png_stream_info(png_structp png, png_infop png_info) {
    cwi_png_stream *stream = (cwi_png_stream *)png_get_progressive_ptr(png);
    if (png_get_image_width(png, png_info) != stream->image.width || png_get_image_height(png, png_info) != stream->image.height) {
        png_error(png, "the size changed since the header was read");
    }
    png_set_expand(png);
    png_set_scale_16(png);
    png_set_gray_to_rgb(png);
    png_set_add_alpha(png, 0xFF, PNG_FILLER_AFTER);
    stream->interlaced = png_set_interlace_handling(png) > 1;
    png_read_update_info(png, png_info);
    if (png_get_rowbytes(png, png_info) != (size_t)stream->image.width * 4) {
        png_error(png, "unexpected row layout after expansion");
    }
}

static void cwi_png_stream_row(png_structp png, png_bytep row, png_uint_32 number, int pass) {
    cwi_png_stream *stream = (cwi_png_stream *)png_get_progressive_ptr(png);
    if (row == NULL || number >= stream->image.height) {
        return;
    }
    png_progressive_combine_row(png, stream->image.pixels + (size_t)number * stream->image.width * 4, row);
    if (stream->interlaced) {
        // A pass is complete when its last row has arrived.
        if (pass + 1 > stream->image.passes && number + 1 >= stream->image.height) {
            stream->image.passes = pass + 1;
        }
    } else if (number + 1 > stream->image.rows) {
        stream->image.rows = number + 1;
    }
}

static void cwi_png_stream_end(png_structp png, png_infop png_info) { (void)png; (void)png_info; }

cwi_png_stream *cwi_png_stream_create(uint32_t width, uint32_t height) {
    cwi_png_stream *stream = calloc(1, sizeof(cwi_png_stream));
    if (stream == NULL) {
        return NULL;
    }
    stream->image.width = width;
    stream->image.height = height;
    stream->image.pixels = calloc((size_t)width * height, 4);
    stream->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, stream->message, cwi_png_error, cwi_png_warning);
    stream->info = stream->png == NULL ? NULL : png_create_info_struct(stream->png);
    if (stream->image.pixels == NULL || stream->info == NULL) {
        cwi_png_stream_destroy(stream);
        return NULL;
    }
    png_set_progressive_read_fn(stream->png, stream, cwi_png_stream_info, cwi_png_stream_row, cwi_png_stream_end);
    return stream;
}

void cwi_png_stream_destroy(cwi_png_stream *stream) {
    if (stream == NULL) {
        return;
    }
    png_destroy_read_struct(&stream->png, &stream->info, NULL);
    free(stream->image.pixels);
    free(stream);
}

int cwi_png_stream_feed(cwi_png_stream *stream, const uint8_t *data, size_t size) {
    if (stream->failed) {
        return -1;
    }
    uint32_t rows = stream->image.rows;
    int32_t passes = stream->image.passes;
    if (setjmp(png_jmpbuf(stream->png))) {
        stream->failed = 1;
        return -1;
    }
    png_process_data(stream->png, stream->info, (png_bytep)data, size);
    return stream->image.rows > rows || stream->image.passes > passes;
}

const cwi_png_image *cwi_png_stream_image(const cwi_png_stream *stream) { return &stream->image; }
