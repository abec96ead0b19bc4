// Classic libjpeg reports errors by longjmp, which Swift cannot call or survive:
// these wrappers own the setjmp so a bad file returns an error code instead of exiting.
#include "CWebImageCodecs.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>

typedef struct {
    struct jpeg_error_mgr base;
    jmp_buf jump;
    char *message;
} cwi_jpeg_error;

static void cwi_jpeg_error_exit(j_common_ptr cinfo) {
    cwi_jpeg_error *error = (cwi_jpeg_error *)cinfo->err;
    char buffer[JMSG_LENGTH_MAX];
    cinfo->err->format_message(cinfo, buffer);
    snprintf(error->message, 200, "%s", buffer);
    longjmp(error->jump, 1);
}

// Warnings (corrupt data that libjpeg can work around) are counted by libjpeg, never printed.
static void cwi_jpeg_silent(j_common_ptr cinfo, int level) { (void)cinfo; (void)level; }

int cwi_jpeg_read_header(const uint8_t *data, size_t size, cwi_header_info *info) {
    memset(info, 0, sizeof(*info));
    struct jpeg_decompress_struct cinfo;
    cwi_jpeg_error error;
    cinfo.err = jpeg_std_error(&error.base);
    error.base.error_exit = cwi_jpeg_error_exit;
    error.base.emit_message = cwi_jpeg_silent;
    error.message = info->message;
    if (setjmp(error.jump)) {
        jpeg_destroy_decompress(&cinfo);
        return -1;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, data, (unsigned long)size);
    jpeg_read_header(&cinfo, TRUE);
    info->width = cinfo.image_width;
    info->height = cinfo.image_height;
    info->components = (uint32_t)cinfo.num_components;
    info->progressive = cinfo.progressive_mode ? 1 : 0;
    info->bit_depth = cinfo.data_precision;
    jpeg_destroy_decompress(&cinfo);
    return 0;
}


// A progressive JPEG with thousands of tiny scans would make buffered-image decoding quadratic;
// libjpeg-turbo's own tools stop at the same figure.
#define CWI_JPEG_SCAN_LIMIT 500

struct cwi_jpeg_stream {
    struct jpeg_decompress_struct cinfo;
    cwi_jpeg_error error;
    struct jpeg_source_mgr source;
    struct jpeg_progress_mgr progress;
    char message[200];
    uint8_t *data;
    size_t length;
    size_t capacity;
    /// Bytes libjpeg asked to skip beyond what had arrived.
    size_t pending_skip;
    uint32_t scale_numerator;
    uint32_t scale_denominator;
    enum { CWI_HEADER, CWI_ROWS, CWI_SCANS, CWI_DONE, CWI_FAILED } phase;
    /// Buffered-image mode: jpeg_finish_output waits for the next scan's marker.
    int finish_pending;
    /// Buffered-image mode: an output pass has begun and not all its rows are drawn.
    int drawing;
    int shown_scan;
    cwi_jpeg_image image;
};

static void cwi_jpeg_stream_init_source(j_decompress_ptr cinfo) { (void)cinfo; }
static void cwi_jpeg_stream_term_source(j_decompress_ptr cinfo) { (void)cinfo; }

// No more bytes yet: suspend, and libjpeg resumes from the same place on the next feed.
static boolean cwi_jpeg_stream_fill(j_decompress_ptr cinfo) { (void)cinfo; return FALSE; }

static void cwi_jpeg_stream_skip(j_decompress_ptr cinfo, long count) {
    cwi_jpeg_stream *stream = (cwi_jpeg_stream *)cinfo->client_data;
    if (count <= 0) {
        return;
    }
    if ((size_t)count <= stream->source.bytes_in_buffer) {
        stream->source.next_input_byte += count;
        stream->source.bytes_in_buffer -= (size_t)count;
    } else {
        stream->pending_skip += (size_t)count - stream->source.bytes_in_buffer;
        stream->source.next_input_byte += stream->source.bytes_in_buffer;
        stream->source.bytes_in_buffer = 0;
    }
}

static void cwi_jpeg_stream_limit_scans(j_common_ptr cinfo) {
    j_decompress_ptr decompress = (j_decompress_ptr)cinfo;
    if (decompress->input_scan_number > CWI_JPEG_SCAN_LIMIT) {
        cwi_jpeg_stream *stream = (cwi_jpeg_stream *)decompress->client_data;
        snprintf(stream->message, sizeof(stream->message), "more than %d scans", CWI_JPEG_SCAN_LIMIT);
        longjmp(stream->error.jump, 1);
    }
}

cwi_jpeg_stream *cwi_jpeg_stream_create(uint32_t scale_numerator, uint32_t scale_denominator) {
    cwi_jpeg_stream *stream = calloc(1, sizeof(cwi_jpeg_stream));
    if (stream == NULL) {
        return NULL;
    }
    stream->scale_numerator = scale_numerator;
    stream->scale_denominator = scale_denominator;
    stream->cinfo.err = jpeg_std_error(&stream->error.base);
    stream->error.base.error_exit = cwi_jpeg_error_exit;
    stream->error.base.emit_message = cwi_jpeg_silent;
    stream->error.message = stream->message;
    if (setjmp(stream->error.jump)) {
        jpeg_destroy_decompress(&stream->cinfo);
        free(stream);
        return NULL;
    }
    jpeg_create_decompress(&stream->cinfo);
    stream->cinfo.client_data = stream;
    stream->source.init_source = cwi_jpeg_stream_init_source;
    stream->source.fill_input_buffer = cwi_jpeg_stream_fill;
    stream->source.skip_input_data = cwi_jpeg_stream_skip;
    stream->source.resync_to_restart = jpeg_resync_to_restart;
    stream->source.term_source = cwi_jpeg_stream_term_source;
    stream->cinfo.src = &stream->source;
    stream->progress.progress_monitor = cwi_jpeg_stream_limit_scans;
    stream->cinfo.progress = &stream->progress;
    return stream;
}

void cwi_jpeg_stream_destroy(cwi_jpeg_stream *stream) {
    if (stream == NULL) {
        return;
    }
    jpeg_destroy_decompress(&stream->cinfo);
    free(stream->image.pixels);
    free(stream->data);
    free(stream);
}

// Appends the new bytes, keeping libjpeg's read position (an offset, as the buffer may move).
static int cwi_jpeg_stream_append(cwi_jpeg_stream *stream, const uint8_t *data, size_t size) {
    size_t consumed = stream->length - stream->source.bytes_in_buffer;
    if (stream->length + size > stream->capacity) {
        size_t capacity = stream->capacity * 2 > stream->length + size ? stream->capacity * 2 : stream->length + size;
        uint8_t *grown = realloc(stream->data, capacity);
        if (grown == NULL) {
            return -1;
        }
        stream->data = grown;
        stream->capacity = capacity;
    }
    memcpy(stream->data + stream->length, data, size);
    stream->length += size;
    size_t skip = stream->pending_skip < stream->length - consumed ? stream->pending_skip : stream->length - consumed;
    stream->pending_skip -= skip;
    consumed += skip;
    stream->source.next_input_byte = stream->data + consumed;
    stream->source.bytes_in_buffer = stream->length - consumed;
    return 0;
}

// Header read: choose the output (RGBA, or CMYK for the caller to convert), the DCT scale and,
// for a file with several scans, buffered-image mode so each scan can be shown as it completes.
static void cwi_jpeg_stream_start(cwi_jpeg_stream *stream) {
    j_decompress_ptr cinfo = &stream->cinfo;
    int is_cmyk = cinfo->jpeg_color_space == JCS_CMYK || cinfo->jpeg_color_space == JCS_YCCK;
    cinfo->out_color_space = is_cmyk ? JCS_CMYK : JCS_EXT_RGBA;
    cinfo->scale_num = stream->scale_numerator;
    cinfo->scale_denom = stream->scale_denominator;
    cinfo->buffered_image = jpeg_has_multiple_scans(cinfo);
    jpeg_start_decompress(cinfo);
    size_t size = (size_t)cinfo->output_width * cinfo->output_height * 4;
    stream->image.pixels = calloc(size, 1);
    if (stream->image.pixels == NULL) {
        snprintf(stream->message, sizeof(stream->message), "out of memory for %zu bytes", size);
        longjmp(stream->error.jump, 1);
    }
    stream->image.width = cinfo->output_width;
    stream->image.height = cinfo->output_height;
    stream->image.is_cmyk = is_cmyk;
    stream->phase = cinfo->buffered_image ? CWI_SCANS : CWI_ROWS;
}

// Reads the rows the output pass can give; returns how many the image now has.
static uint32_t cwi_jpeg_stream_read_rows(cwi_jpeg_stream *stream) {
    j_decompress_ptr cinfo = &stream->cinfo;
    while (cinfo->output_scanline < cinfo->output_height) {
        JSAMPROW row = stream->image.pixels + (size_t)cinfo->output_scanline * cinfo->output_width * 4;
        if (jpeg_read_scanlines(cinfo, &row, 1) == 0) {
            break;
        }
    }
    return cinfo->output_scanline;
}

// A single scan: rows appear top to bottom as their data arrives.
static int cwi_jpeg_stream_rows(cwi_jpeg_stream *stream) {
    uint32_t before = stream->image.rows;
    stream->image.rows = cwi_jpeg_stream_read_rows(stream);
    if (stream->image.rows == stream->image.height) {
        stream->phase = CWI_DONE;
    }
    return stream->image.rows > before;
}

// The drawing of stream->shown_scan is complete: show it, and end the output pass.
static int cwi_jpeg_stream_drawn(cwi_jpeg_stream *stream) {
    j_decompress_ptr cinfo = &stream->cinfo;
    stream->drawing = 0;
    stream->image.rows = stream->image.height;
    stream->image.passes = stream->shown_scan;
    if (jpeg_input_complete(cinfo) && stream->shown_scan == cinfo->input_scan_number) {
        jpeg_finish_output(cinfo);
        stream->phase = CWI_DONE;
    } else {
        stream->finish_pending = !jpeg_finish_output(cinfo);
    }
    return 1;
}

// Several scans: absorb what arrived, then draw the newest complete scan. Drawing can itself
// wait for data: block smoothing of an early scan looks two block rows ahead, which for the
// last rows means the start of the next scan.
static int cwi_jpeg_stream_scans(cwi_jpeg_stream *stream) {
    j_decompress_ptr cinfo = &stream->cinfo;
    if (stream->finish_pending) {
        if (!jpeg_finish_output(cinfo)) {
            return 0;
        }
        stream->finish_pending = 0;
    }
    if (stream->drawing) {
        return cwi_jpeg_stream_read_rows(stream) == stream->image.height ? cwi_jpeg_stream_drawn(stream) : 0;
    }
    int complete = stream->shown_scan;
    for (;;) {
        int status = jpeg_consume_input(cinfo);
        if (status == JPEG_SUSPENDED) {
            break;
        }
        if (status == JPEG_SCAN_COMPLETED || status == JPEG_REACHED_EOI) {
            complete = cinfo->input_scan_number;
        }
        if (status == JPEG_REACHED_EOI) {
            break;
        }
    }
    if (complete <= stream->shown_scan) {
        return 0;
    }
    jpeg_start_output(cinfo, complete);
    stream->shown_scan = complete;
    stream->drawing = 1;
    return cwi_jpeg_stream_read_rows(stream) == stream->image.height ? cwi_jpeg_stream_drawn(stream) : 0;
}

int cwi_jpeg_stream_feed(cwi_jpeg_stream *stream, const uint8_t *data, size_t size) {
    if (stream->phase == CWI_FAILED) {
        return -1;
    }
    if (stream->phase == CWI_DONE) {
        return 0;
    }
    if (cwi_jpeg_stream_append(stream, data, size) != 0) {
        snprintf(stream->message, sizeof(stream->message), "out of memory for the data");
        stream->phase = CWI_FAILED;
        return -1;
    }
    if (setjmp(stream->error.jump)) {
        stream->phase = CWI_FAILED;
        return -1;
    }
    if (stream->phase == CWI_HEADER) {
        if (jpeg_read_header(&stream->cinfo, TRUE) == JPEG_SUSPENDED) {
            return 0;
        }
        cwi_jpeg_stream_start(stream);
    }
    return stream->phase == CWI_ROWS ? cwi_jpeg_stream_rows(stream) : cwi_jpeg_stream_scans(stream);
}

const cwi_jpeg_image *cwi_jpeg_stream_image(const cwi_jpeg_stream *stream) { return &stream->image; }

const char *cwi_jpeg_stream_message(const cwi_jpeg_stream *stream) { return stream->message; }

// Planes decoding reaches into libjpeg's decompression master for the columns of blocks to
// inverse-transform: the fields jpeg_crop_scanline sets, which it refuses to set for raw output.
// The header is the installed library's own (libjpeg62-turbo-dev), so its layout is the library's.
#include <jpegint.h>
#include "JPEGEntropy.h"

typedef struct {
    // First: the entropy decoder finds itself at client_data.
    cwi_huffman_decoder huffman;
    cwi_jpeg_error error;
    struct jpeg_progress_mgr progress;
} cwi_jpeg_planes_context;

// Warnings counted (the caller declines a file libjpeg worked around damage in), never printed.
static void cwi_jpeg_planes_count_warnings(j_common_ptr cinfo, int level) {
    if (level < 0) {
        cinfo->err->num_warnings++;
    }
}

static void cwi_jpeg_planes_limit_scans(j_common_ptr cinfo) {
    j_decompress_ptr decompress = (j_decompress_ptr)cinfo;
    if (decompress->input_scan_number > CWI_JPEG_SCAN_LIMIT) {
        cwi_jpeg_planes_context *context = (cwi_jpeg_planes_context *)decompress->client_data;
        snprintf(context->error.message, 200, "more than %d scans", CWI_JPEG_SCAN_LIMIT);
        longjmp(context->error.jump, 1);
    }
}

// Inverse-transforms the window's columns of blocks, or none at all (first past last) for an
// iMCU row the caller only needs read past. A single scan's decode reads only these two (the
// per-component columns jpeg_crop_scanline also sets are a several-scan decode's).
static void cwi_jpeg_planes_columns(j_decompress_ptr cinfo, const cwi_jpeg_window *window, int transform) {
    cinfo->master->first_iMCU_col = transform ? window->first_column : 1;
    cinfo->master->last_iMCU_col = transform ? window->last_column : 0;
}

int cwi_jpeg_decode_planes(const uint8_t *data, size_t size, uint32_t scale_numerator, const cwi_jpeg_window *window,
                           uint8_t *const planes[3], const size_t strides[3], const size_t lengths[3], uint32_t flags,
                           char message[200]) {
    struct jpeg_decompress_struct cinfo;
    cwi_jpeg_planes_context context;
    message[0] = 0;
    cinfo.err = jpeg_std_error(&context.error.base);
    context.error.base.error_exit = cwi_jpeg_error_exit;
    context.error.base.emit_message = cwi_jpeg_planes_count_warnings;
    context.error.message = message;
    // Row pointers for one iMCU row of each plane: at most 2 x 8 rows of luma (the largest
    // sampling factor this takes is 2, the largest DCT scale 8/8).
    JSAMPROW rows[3][16];
    JSAMPARRAY rows_of[3] = {rows[0], rows[1], rows[2]};
    if (setjmp(context.error.jump)) {
        jpeg_destroy_decompress(&cinfo);
        return -1;
    }
    jpeg_create_decompress(&cinfo);
    cinfo.client_data = &context;
    context.progress.progress_monitor = cwi_jpeg_planes_limit_scans;
    cinfo.progress = &context.progress;
    jpeg_mem_src(&cinfo, data, (unsigned long)size);
    jpeg_read_header(&cinfo, TRUE);
    jpeg_component_info *components = cinfo.comp_info;
    if (cinfo.num_components != 3 || cinfo.jpeg_color_space != JCS_YCbCr || cinfo.max_h_samp_factor > 2 ||
        cinfo.max_v_samp_factor > 2 || components[0].h_samp_factor != cinfo.max_h_samp_factor ||
        components[0].v_samp_factor != cinfo.max_v_samp_factor || components[1].h_samp_factor != 1 ||
        components[1].v_samp_factor != 1 || components[2].h_samp_factor != 1 || components[2].v_samp_factor != 1 ||
        scale_numerator < 1 || scale_numerator > 8) {
        snprintf(message, 200, "not a YCbCr JPEG this decodes to planes");
        jpeg_destroy_decompress(&cinfo);
        return -1;
    }
    int multiple_scans = jpeg_has_multiple_scans(&cinfo);
    cinfo.raw_data_out = TRUE;
    cinfo.scale_num = scale_numerator;
    cinfo.scale_denom = 8;
    cinfo.dct_method = JDCT_ISLOW;
    jpeg_start_decompress(&cinfo);
    // libjpeg decodes 4:2:0 chroma at twice the luma's DCT scale in place of upsampling it;
    // planes keep the chroma subsampled, so each chroma block takes the luma's scale and inverse
    // transform, as TurboJPEG's own planes decode does.
    int block = cinfo.min_DCT_scaled_size;
    for (int component = 1; component < 3; component++) {
        jpeg_component_info *info = &cinfo.comp_info[component];
        if (info->DCT_scaled_size != block) {
            info->DCT_scaled_size = block;
            info->MCU_sample_width = info->MCU_width * block;
            cinfo.idct->inverse_DCT[component] = cinfo.idct->inverse_DCT[0];
        }
    }
    JDIMENSION imcu_width = (JDIMENSION)(cinfo.max_h_samp_factor * DCTSIZE), imcu_height = (JDIMENSION)(cinfo.max_v_samp_factor * DCTSIZE);
    JDIMENSION imcu_columns = (cinfo.image_width + imcu_width - 1) / imcu_width;
    JDIMENSION imcu_rows = (cinfo.image_height + imcu_height - 1) / imcu_height;
    if (window->first_column > window->last_column || window->last_column >= imcu_columns ||
        window->first_row > window->last_row || window->last_row >= imcu_rows) {
        snprintf(message, 200, "the window is outside the image's %u x %u iMCUs", imcu_columns, imcu_rows);
        jpeg_destroy_decompress(&cinfo);
        return -1;
    }
    // A file of several scans has all its coefficients read before the first row anyway, and
    // libjpeg's block smoothing of an incomplete progressive file looks past a window's edge:
    // the caller decodes it whole.
    if (multiple_scans && (window->first_column != 0 || window->last_column + 1 != imcu_columns || window->first_row != 0 ||
                           window->last_row + 1 != imcu_rows)) {
        jpeg_destroy_decompress(&cinfo);
        return 1;
    }
    int ours = !multiple_scans && !(flags & CWI_JPEG_LIBJPEG_ENTROPY) && cwi_jpeg_entropy_install(&cinfo, &context.huffman) == 0;
    int lines[3];
    for (int component = 0; component < 3; component++) {
        lines[component] = components[component].v_samp_factor * block;
        size_t width = (size_t)(window->last_column - window->first_column + 1) * (size_t)(components[component].h_samp_factor * block);
        size_t height = (size_t)(window->last_row - window->first_row + 1) * (size_t)lines[component];
        if (strides[component] < width || lengths[component] < (height - 1) * strides[component] + width) {
            snprintf(message, 200, "plane %d is smaller than the window's blocks", component);
            jpeg_destroy_decompress(&cinfo);
            return -1;
        }
    }
    for (JDIMENSION row = 0; row <= window->last_row; row++) {
        int inside = row >= window->first_row;
        if (!multiple_scans) {
            cwi_jpeg_planes_columns(&cinfo, window, inside);
        }
        // Rows before the window are entropy-decoded (their codes come first) but not
        // transformed, so their pointers are never written through: any will do.
        JDIMENSION band = inside ? row - window->first_row : 0;
        for (int component = 0; component < 3; component++) {
            for (int line = 0; line < lines[component]; line++) {
                rows[component][line] = planes[component] + ((size_t)band * (size_t)lines[component] + (size_t)line) * strides[component];
            }
        }
        if (jpeg_read_raw_data(&cinfo, rows_of, (JDIMENSION)lines[0]) == 0) {
            snprintf(message, 200, "the data ended early");
            jpeg_destroy_decompress(&cinfo);
            return -1;
        }
    }
    int warned = context.error.base.num_warnings > 0 || (ours && (context.huffman.corrupt || context.huffman.insufficient));
    // The rows past the window are never read: a file damaged only there gives the window whole.
    jpeg_destroy_decompress(&cinfo);
    return warned ? 2 : 0;
}
