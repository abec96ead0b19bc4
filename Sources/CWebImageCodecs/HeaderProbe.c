// Classic libjpeg and libpng report errors by longjmp, which Swift cannot call or survive:
// these wrappers own the setjmp so a bad file returns an error code instead of exiting.
#include "CWebImageCodecs.h"

#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <jpeglib.h>
#include <png.h>

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

typedef struct {
    const uint8_t *data;
    size_t size;
    size_t offset;
} cwi_png_source;

static void cwi_png_read(png_structp png, png_bytep out, size_t length) {
    cwi_png_source *source = (cwi_png_source *)png_get_io_ptr(png);
    if (source->size - source->offset < length) {
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
    cwi_png_source source = {data, size, 0};
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
