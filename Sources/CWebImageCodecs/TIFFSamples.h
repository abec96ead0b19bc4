// The sample reader for TIFF pages libtiff's RGBA interface refuses or would spoil (internal).
#ifndef CWI_TIFF_SAMPLES_H
#define CWI_TIFF_SAMPLES_H
#include <stdint.h>
#include <tiffio.h>

/// How a page stores its samples, as far as the sample reader takes it.
typedef struct {
    uint16_t bits;
    uint16_t format;
    uint16_t samples;
    uint16_t photometric;
    uint16_t planar;
    /// Colour samples per pixel: 1 (grey), 3 (RGB) or 4 (CMYK).
    uint16_t colors;
    /// Whether the sample after the colour samples is alpha, and whether it is associated.
    uint16_t has_alpha;
    uint16_t associated;
} cwi_tiff_layout;

/// Fills `layout` and returns 1 when the page is grey, RGB or CMYK (ink set CMYK) in 1-16 bit
/// unsigned, 8/16/32-bit signed, 32-bit unsigned or 32/64-bit float samples, in strips or tiles,
/// either planar configuration, with any compression libtiff decodes but old-style JPEG.
int cwi_tiff_sample_layout(TIFF *tif, cwi_tiff_layout *layout);

/// Reads the page into `out` (width x height RGBA, rows as stored; alpha as stored: premultiplied
/// when associated): 8 bits a sample, or with `wide` 16 (native-endian `uint16_t`). Unsigned
/// integer samples of up to 16 bits are scaled to 8 (or 16) bits from their full range; signed,
/// 32-bit and floating-point samples have no full range and are read on the 0-255 scale, clipped
/// and truncated, as libvips and Pillow render them (times 257 when wide).
/// Returns 0, or -1 with a message in `message`.
int cwi_tiff_read_samples(TIFF *tif, const cwi_tiff_layout *layout, uint32_t width, uint32_t height, int wide, uint8_t *out,
                          char *message, size_t message_size);

#endif
