// TIFF through libtiff on memory buffers, with libtiff's error and warning printing turned off.
#include "CWebImageCodecs.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tiffio.h>
#include "TIFFSamples.h"

typedef struct {
    const uint8_t *data;
    size_t size;
    size_t position;
} cwi_tiff_source;

// Copies up to `count` bytes from `data` at `*position` on; what reading a file does.
static tmsize_t cwi_tiff_copy_out(const uint8_t *data, size_t size, size_t *position, void *buffer, tmsize_t count) {
    if (count < 0 || *position >= size) return 0;
    size_t available = size - *position;
    size_t n = (size_t)count < available ? (size_t)count : available;
    memcpy(buffer, data + *position, n);
    *position += n;
    return (tmsize_t)n;
}

static tmsize_t cwi_tiff_read(thandle_t handle, void *buffer, tmsize_t count) {
    cwi_tiff_source *source = handle;
    return cwi_tiff_copy_out(source->data, source->size, &source->position, buffer, count);
}

static tmsize_t cwi_tiff_no_write(thandle_t handle, void *buffer, tmsize_t count) {
    (void)handle; (void)buffer; (void)count;
    return 0;
}

static toff_t cwi_tiff_seek(thandle_t handle, toff_t offset, int whence) {
    cwi_tiff_source *source = handle;
    uint64_t base = whence == SEEK_CUR ? source->position : whence == SEEK_END ? source->size : 0;
    source->position = (size_t)(base + offset);
    return source->position;
}

static int cwi_tiff_close(thandle_t handle) { (void)handle; return 0; }

static toff_t cwi_tiff_size(thandle_t handle) { return ((cwi_tiff_source *)handle)->size; }

static int cwi_tiff_map(thandle_t handle, void **base, toff_t *size) {
    (void)handle; (void)base; (void)size;
    return 0;
}

static void cwi_tiff_unmap(thandle_t handle, void *base, toff_t size) { (void)handle; (void)base; (void)size; }

static void cwi_tiff_silence(void) {
    TIFFSetErrorHandler(NULL);
    TIFFSetWarningHandler(NULL);
}

static TIFF *cwi_tiff_open_page(cwi_tiff_source *source, uint32_t page, cwi_tiff_info *info) {
    cwi_tiff_silence();
    TIFF *tif = TIFFClientOpen("memory", "rm", source, cwi_tiff_read, cwi_tiff_no_write, cwi_tiff_seek, cwi_tiff_close, cwi_tiff_size,
                               cwi_tiff_map, cwi_tiff_unmap);
    if (tif == NULL) {
        snprintf(info->message, sizeof(info->message), "not a readable TIFF");
        return NULL;
    }
    info->pages = TIFFNumberOfDirectories(tif);
    if (page > 0 && !TIFFSetDirectory(tif, (tdir_t)page)) {
        snprintf(info->message, sizeof(info->message), "no page %u", page);
        TIFFClose(tif);
        return NULL;
    }
    uint16_t orientation = ORIENTATION_TOPLEFT, extras = 0;
    uint16_t *kinds = NULL;
    if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &info->width) || !TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &info->height)) {
        snprintf(info->message, sizeof(info->message), "page %u has no size", page);
        TIFFClose(tif);
        return NULL;
    }
    TIFFGetFieldDefaulted(tif, TIFFTAG_ORIENTATION, &orientation);
    TIFFGetFieldDefaulted(tif, TIFFTAG_EXTRASAMPLES, &extras, &kinds);
    info->orientation = orientation >= 1 && orientation <= 8 ? orientation : 1;
    info->has_alpha = extras > 0 && kinds != NULL && (kinds[0] == EXTRASAMPLE_ASSOCALPHA || kinds[0] == EXTRASAMPLE_UNASSALPHA);
    return tif;
}

uint8_t *cwi_tiff_icc_profile(const uint8_t *data, size_t size, uint32_t *length) {
    cwi_tiff_info info;
    memset(&info, 0, sizeof(info));
    cwi_tiff_source source = {data, size, 0};
    TIFF *tif = cwi_tiff_open_page(&source, 0, &info);
    if (tif == NULL) return NULL;
    uint32_t count = 0;
    void *profile = NULL;
    uint8_t *copy = NULL;
    if (TIFFGetField(tif, TIFFTAG_ICCPROFILE, &count, &profile) && profile != NULL && count > 0 && (copy = malloc(count)) != NULL) {
        memcpy(copy, profile, count);
        *length = count;
    }
    TIFFClose(tif);
    return copy;
}

int cwi_tiff_read_info(const uint8_t *data, size_t size, uint32_t page, cwi_tiff_info *info) {
    memset(info, 0, sizeof(*info));
    cwi_tiff_source source = {data, size, 0};
    TIFF *tif = cwi_tiff_open_page(&source, page, info);
    if (tif == NULL) return -1;
    TIFFClose(tif);
    return 0;
}

// The page, when it is `width` x `height` (the size the caller allocated for); NULL with a message
// otherwise.
static TIFF *cwi_tiff_open_sized(cwi_tiff_source *source, uint32_t page, uint32_t width, uint32_t height, cwi_tiff_info *info) {
    TIFF *tif = cwi_tiff_open_page(source, page, info);
    if (tif == NULL || (info->width == width && info->height == height)) return tif;
    snprintf(info->message, sizeof(info->message), "page %u is %ux%u, not %ux%u", page, info->width, info->height, width, height);
    TIFFClose(tif);
    return NULL;
}

// Reads a page with the sample reader, from a fresh handle (after a failed attempt of libtiff's
// RGBA interface, the handle's strip state is not to be trusted).
static int cwi_tiff_decode_samples(cwi_tiff_source *source, uint32_t page, int wide, uint8_t *out, uint32_t width, uint32_t height,
                                   cwi_tiff_info *info) {
    source->position = 0;
    TIFF *tif = cwi_tiff_open_sized(source, page, width, height, info);
    if (tif == NULL) return -1;
    cwi_tiff_layout layout;
    int status = -1;
    if (cwi_tiff_sample_layout(tif, &layout)) {
        status = cwi_tiff_read_samples(tif, &layout, width, height, wide, out, info->message, sizeof(info->message));
        info->straight = (uint16_t)!layout.associated;
    }
    TIFFClose(tif);
    return status;
}

int cwi_tiff_decode_page(const uint8_t *data, size_t size, uint32_t page, uint32_t *raster, uint32_t width, uint32_t height,
                         cwi_tiff_info *info) {
    memset(info, 0, sizeof(*info));
    cwi_tiff_source source = {data, size, 0};
    TIFF *tif = cwi_tiff_open_sized(&source, page, width, height, info);
    if (tif == NULL) return -1;
    cwi_tiff_layout layout;
    int samples = cwi_tiff_sample_layout(tif, &layout);
    if (samples && layout.has_alpha && !layout.associated) {
        // libtiff's RGBA interface would premultiply this alpha in 8 bits, losing the colour of
        // faint pixels: the samples are read as stored instead.
        TIFFClose(tif);
        return cwi_tiff_decode_samples(&source, page, 0, (uint8_t *)raster, width, height, info);
    }
    char reason[1024] = "";
    // Asking for the file's own orientation leaves the rows as stored.
    int ok = TIFFRGBAImageOK(tif, reason) && TIFFReadRGBAImageOriented(tif, width, height, raster, info->orientation, 0);
    TIFFClose(tif);
    if (ok) return 0;
    // What the RGBA interface refuses (12- and 32-bit samples, floats) or cannot read (16-bit
    // CMYK) the sample reader may take.
    if (samples) return cwi_tiff_decode_samples(&source, page, 0, (uint8_t *)raster, width, height, info);
    if (reason[0] != 0) {
        snprintf(info->message, sizeof(info->message), "%s", reason);
    } else {
        snprintf(info->message, sizeof(info->message), "page %u could not be read", page);
    }
    return -1;
}

int cwi_tiff_page_bits(const uint8_t *data, size_t size, uint32_t page) {
    cwi_tiff_info info;
    memset(&info, 0, sizeof(info));
    cwi_tiff_source source = {data, size, 0};
    TIFF *tif = cwi_tiff_open_page(&source, page, &info);
    if (tif == NULL) return 0;
    cwi_tiff_layout layout;
    int bits = cwi_tiff_sample_layout(tif, &layout) && layout.format == SAMPLEFORMAT_UINT && layout.bits <= 16 && !layout.associated
                   ? layout.bits
                   : 0;
    TIFFClose(tif);
    return bits;
}

int cwi_tiff_decode_page16(const uint8_t *data, size_t size, uint32_t page, uint16_t *pixels, uint32_t width, uint32_t height,
                           cwi_tiff_info *info) {
    memset(info, 0, sizeof(*info));
    cwi_tiff_source source = {data, size, 0};
    return cwi_tiff_decode_samples(&source, page, 1, (uint8_t *)pixels, width, height, info);
}

static tmsize_t cwi_tiff_sink_write(thandle_t handle, void *buffer, tmsize_t count) {
    cwi_tiff_sink *sink = handle;
    if (count < 0) return -1;
    size_t end = sink->position + (size_t)count;
    if (end > sink->capacity) {
        size_t capacity = sink->capacity ? sink->capacity : 65536;
        while (capacity < end) capacity *= 2;
        uint8_t *grown = realloc(sink->data, capacity);
        if (grown == NULL) return -1;
        sink->data = grown;
        sink->capacity = capacity;
    }
    memcpy(sink->data + sink->position, buffer, (size_t)count);
    sink->position = end;
    if (end > sink->size) sink->size = end;
    return count;
}

static tmsize_t cwi_tiff_sink_read(thandle_t handle, void *buffer, tmsize_t count) {
    cwi_tiff_sink *sink = handle;
    return cwi_tiff_copy_out(sink->data, sink->size, &sink->position, buffer, count);
}

static toff_t cwi_tiff_sink_seek(thandle_t handle, toff_t offset, int whence) {
    cwi_tiff_sink *sink = handle;
    uint64_t base = whence == SEEK_CUR ? sink->position : whence == SEEK_END ? sink->size : 0;
    uint64_t target = base + offset;
    // Seeking past the end extends the file with zeros when written, as a file would.
    if (target > sink->size) {
        size_t gap = (size_t)(target - sink->size);
        sink->position = sink->size;
        uint8_t zeros[256] = {0};
        while (gap > 0) {
            size_t n = gap < sizeof(zeros) ? gap : sizeof(zeros);
            if (cwi_tiff_sink_write(sink, zeros, (tmsize_t)n) < 0) return (toff_t)-1;
            gap -= n;
        }
    }
    sink->position = (size_t)target;
    return sink->position;
}

static toff_t cwi_tiff_sink_size(thandle_t handle) { return ((cwi_tiff_sink *)handle)->size; }

int cwi_tiff_encode(const uint8_t *const *pages, uint32_t count, uint32_t width, uint32_t height, int alpha, int bits,
                    const uint8_t *profile, uint32_t profile_length, cwi_tiff_sink *sink) {
    if (bits != 8 && bits != 16) return -1;
    size_t sample_bytes = (size_t)bits / 8;
    memset(sink, 0, sizeof(*sink));
    cwi_tiff_silence();
    TIFF *tif = TIFFClientOpen("memory", "w", sink, cwi_tiff_sink_read, cwi_tiff_sink_write, cwi_tiff_sink_seek, cwi_tiff_close,
                               cwi_tiff_sink_size, cwi_tiff_map, cwi_tiff_unmap);
    if (tif == NULL) return -1;
    uint16_t channels = alpha ? 4 : 3;
    uint8_t *row = malloc((size_t)width * channels * sample_bytes);
    int ok = row != NULL;
    for (uint32_t page = 0; ok && page < count; page++) {
        TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, width);
        TIFFSetField(tif, TIFFTAG_IMAGELENGTH, height);
        TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, channels);
        TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, bits);
        TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_RGB);
        TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
        TIFFSetField(tif, TIFFTAG_COMPRESSION, COMPRESSION_ADOBE_DEFLATE);
        TIFFSetField(tif, TIFFTAG_PREDICTOR, PREDICTOR_HORIZONTAL);
        TIFFSetField(tif, TIFFTAG_ORIENTATION, ORIENTATION_TOPLEFT);
        TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, TIFFDefaultStripSize(tif, 0));
        if (alpha) {
            uint16_t kind = EXTRASAMPLE_UNASSALPHA;
            TIFFSetField(tif, TIFFTAG_EXTRASAMPLES, 1, &kind);
        }
        if (profile != NULL && profile_length > 0) TIFFSetField(tif, TIFFTAG_ICCPROFILE, profile_length, profile);
        if (count > 1) {
            TIFFSetField(tif, TIFFTAG_SUBFILETYPE, FILETYPE_PAGE);
            TIFFSetField(tif, TIFFTAG_PAGENUMBER, (uint16_t)page, (uint16_t)count);
        }
        for (uint32_t y = 0; ok && y < height; y++) {
            // libtiff writes 16-bit samples in the machine's byte order and says so in the header.
            size_t pixel = 4 * sample_bytes, kept = channels * sample_bytes;
            const uint8_t *source = pages[page] + (size_t)y * width * pixel;
            for (uint32_t x = 0; x < width; x++) memcpy(row + (size_t)x * kept, source + (size_t)x * pixel, kept);
            ok = TIFFWriteScanline(tif, row, y, 0) == 1;
        }
        if (ok) ok = TIFFWriteDirectory(tif) == 1;
    }
    free(row);
    TIFFClose(tif);
    if (!ok) {
        cwi_tiff_free(sink);
        return -1;
    }
    return 0;
}

void cwi_tiff_free(cwi_tiff_sink *sink) {
    free(sink->data);
    memset(sink, 0, sizeof(*sink));
}
