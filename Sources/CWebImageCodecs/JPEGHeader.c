// Classic libjpeg reports errors by longjmp, which Swift cannot call or survive:
// these wrappers own the setjmp so a bad file returns an error code instead of exiting.
#include "CWebImageCodecs.h"

#include <setjmp.h>
#include <stdio.h>
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

