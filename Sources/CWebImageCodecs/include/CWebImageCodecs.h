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

/// Decodes a PNG of `width` x `height` (read first with cwi_png_read_header) into `out`, which
/// holds exactly width * height * 4 bytes of straight RGBA: every colour type and bit depth,
/// palette and tRNS expanded, 16-bit samples reduced to their high byte, Adam7 deinterlaced, no
/// gamma applied. Sets *has_alpha when the file has an alpha channel or tRNS. Returns 0 on
/// success, -1 with a reason in `message` (200 bytes).
int cwi_png_decode_rgba(const uint8_t *data, size_t size, uint8_t *out, size_t out_size,
                        uint32_t width, uint32_t height, int32_t *has_alpha, char *message);

/// Feeds the bytes of a PNG received so far (`width` x `height`, from cwi_png_read_header) to
/// libpng's progressive reader, writing the rows decoded into `out` (width * height * 4 bytes of
/// straight RGBA, zeroed by the caller, transformed as cwi_png_decode_rgba does). Sets *rows to
/// the rows complete (non-interlaced) or *passes to the Adam7 passes complete. Returns 0, or -1
/// when nothing could be decoded.
int cwi_png_decode_partial(const uint8_t *data, size_t size, uint8_t *out, size_t out_size,
                           uint32_t width, uint32_t height, int32_t *rows, int32_t *passes);

#endif
