#ifndef CWEBIMAGECODECS_H
#define CWEBIMAGECODECS_H

#include <stddef.h>
#include <stdint.h>

/// The header facts of an image, read without decoding any pixels.
typedef struct {
    uint32_t width;
    uint32_t height;
    /// Channels in the stored data (1 gray, 3 RGB/YCbCr, 4 CMYK/YCCK or RGBA).
    uint32_t components;
    /// JPEG: 1 when the file is progressive. PNG: 1 when it is Adam7 interlaced.
    int32_t progressive;
    /// PNG only: the bit depth; JPEG: 8.
    int32_t bit_depth;
    /// A short reason when the call failed; empty on success.
    char message[200];
} cwi_header_info;

/// Reads a JPEG header with classic libjpeg. Errors long-jump back here instead of calling
/// exit(), and warnings are not printed. Returns 0 on success, -1 on a corrupt or truncated header.
int cwi_jpeg_read_header(const uint8_t *data, size_t size, cwi_header_info *info);

/// Reads a PNG header (IHDR) with classic libpng, setjmp-protected and silent.
/// Returns 0 on success, -1 on failure.
int cwi_png_read_header(const uint8_t *data, size_t size, cwi_header_info *info);

#endif
