// The codec floors under serve.py's PNG row, on one core, each the median-free mean of ROUNDS:
// libpng decoding the source PNG (any colour type, depth or interlace) to 8-bit RGBA row by row (its own transforms: what our direct path
// replaces), zlib inflating the source's image data alone, libdeflate inflating it alone; then
// the result's pixels (a 512-wide box reduction of the decoded image) encoded by libpng at zlib
// level 6 with adaptive filters (imgproxy's pngsave settings) and by libdeflate at level 6 and at
// every level 1-9 over the same filtered rows. Prints one JSON object of milliseconds and bytes.
// Built by scripts/compare/serve.py: cc -O2 png_floor.c -lpng16 -lz -ldeflate.
// Usage: png_floor PATH ROUNDS
#include <libdeflate.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "read_file.h"

static double now(void) {
    struct timespec clock;
    clock_gettime(CLOCK_MONOTONIC, &clock);
    return clock.tv_sec + clock.tv_nsec / 1e9;
}

typedef struct { const unsigned char *data; size_t size, offset; } source;

static void read_source(png_structp png, png_bytep out, size_t length) {
    source *from = png_get_io_ptr(png);
    if (from->size - from->offset < length) png_error(png, "short");
    memcpy(out, from->data + from->offset, length);
    from->offset += length;
}

typedef struct { unsigned char *bytes; size_t length, capacity; } sink;

static void write_sink(png_structp png, png_bytep data, size_t length) {
    sink *to = png_get_io_ptr(png);
    if (to->length + length > to->capacity) {
        to->capacity = (to->length + length) * 2;
        to->bytes = realloc(to->bytes, to->capacity);
    }
    memcpy(to->bytes + to->length, data, length);
    to->length += length;
}

static void flush_sink(png_structp png) { (void)png; }

static unsigned big_endian(const unsigned char *p) { return (unsigned)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3]; }

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    size_t size;
    unsigned char *data = read_file(argv[1], &size);
    int rounds = atoi(argv[2]);
    unsigned width = big_endian(data + 16), height = big_endian(data + 20);
    unsigned char *idat = malloc(size);
    size_t idat_size = 0;
    for (size_t offset = 8; offset + 12 <= size;) {
        unsigned length = big_endian(data + offset);
        if (memcmp(data + offset + 4, "IDAT", 4) == 0) {
            memcpy(idat + idat_size, data + offset + 8, length);
            idat_size += length;
        }
        offset += 12 + (size_t)length;
    }
    // Room for the widest rows (16-bit RGBA) and Adam7's extra filter bytes.
    size_t raw_size = (size_t)height * (1 + (size_t)width * 8) + (size_t)height * 8;
    unsigned char *raw = malloc(raw_size);
    unsigned char *pixels = malloc((size_t)width * height * 4);

    double start = now();
    for (int round = 0; round < rounds; round++) {
        png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
        png_infop info = png_create_info_struct(png);
        source from = {data, size, 0};
        png_set_read_fn(png, &from, read_source);
        png_read_info(png, info);
        png_set_expand(png);
        png_set_scale_16(png);
        png_set_gray_to_rgb(png);
        png_set_add_alpha(png, 0xFF, PNG_FILLER_AFTER);
        int passes = png_set_interlace_handling(png);
        png_read_update_info(png, info);
        for (int pass = 0; pass < passes; pass++) {
            for (unsigned y = 0; y < height; y++) png_read_row(png, pixels + (size_t)y * width * 4, NULL);
        }
        png_destroy_read_struct(&png, &info, NULL);
    }
    double libpng_decode = (now() - start) / rounds * 1000;

    start = now();
    for (int round = 0; round < rounds; round++) {
        uLongf length = raw_size;
        if (uncompress(raw, &length, idat, idat_size) != Z_OK) return 3;
    }
    double zlib_inflate = (now() - start) / rounds * 1000;

    struct libdeflate_decompressor *inflater = libdeflate_alloc_decompressor();
    start = now();
    for (int round = 0; round < rounds; round++) {
        size_t length;
        if (libdeflate_zlib_decompress(inflater, idat, idat_size, raw, raw_size, &length) != LIBDEFLATE_SUCCESS) return 4;
    }
    double libdeflate_inflate = (now() - start) / rounds * 1000;

    // The result: a box reduction to 512 wide, RGB.
    unsigned factor = (width + 511) / 512, out_width = width / factor, out_height = height / factor;
    unsigned char *small = malloc((size_t)out_width * out_height * 3);
    for (unsigned y = 0; y < out_height; y++)
        for (unsigned x = 0; x < out_width; x++)
            for (int c = 0; c < 3; c++) {
                unsigned sum = 0;
                for (unsigned dy = 0; dy < factor; dy++)
                    for (unsigned dx = 0; dx < factor; dx++) sum += pixels[(((size_t)y * factor + dy) * width + x * factor + dx) * 4 + c];
                small[((size_t)y * out_width + x) * 3 + c] = (unsigned char)(sum / (factor * factor));
            }

    sink encoded = {NULL, 0, 0};
    start = now();
    for (int round = 0; round < rounds; round++) {
        encoded.length = 0;
        png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
        png_infop info = png_create_info_struct(png);
        png_set_write_fn(png, &encoded, write_sink, flush_sink);
        png_set_IHDR(png, info, out_width, out_height, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                     PNG_FILTER_TYPE_DEFAULT);
        png_set_compression_level(png, 6);
        png_set_filter(png, 0, PNG_ALL_FILTERS);
        png_write_info(png, info);
        for (unsigned y = 0; y < out_height; y++) png_write_row(png, small + (size_t)y * out_width * 3);
        png_write_end(png, info);
        png_destroy_write_struct(&png, &info);
    }
    double libpng_encode = (now() - start) / rounds * 1000;

    // libdeflate alone over the rows libpng filtered (inflated back from libpng's own output).
    unsigned char *written_idat = malloc(encoded.length);
    size_t written_size = 0;
    for (size_t offset = 8; offset + 12 <= encoded.length;) {
        unsigned length = big_endian(encoded.bytes + offset);
        if (memcmp(encoded.bytes + offset + 4, "IDAT", 4) == 0) {
            memcpy(written_idat + written_size, encoded.bytes + offset + 8, length);
            written_size += length;
        }
        offset += 12 + (size_t)length;
    }
    size_t filtered_size = (size_t)out_height * (1 + out_width * 3), deflated_size = 0;
    unsigned char *filtered = malloc(filtered_size);
    if (libdeflate_zlib_decompress(inflater, written_idat, written_size, filtered, filtered_size, NULL) != LIBDEFLATE_SUCCESS) return 5;
    struct libdeflate_compressor *deflater = libdeflate_alloc_compressor(6);
    unsigned char *deflated = malloc(filtered_size * 2);
    start = now();
    for (int round = 0; round < rounds; round++) deflated_size = libdeflate_zlib_compress(deflater, filtered, filtered_size, deflated, filtered_size * 2);
    double libdeflate_deflate = (now() - start) / rounds * 1000;

    printf("{\"libpng_decode_ms\": %.3f, \"zlib_inflate_ms\": %.3f, \"libdeflate_inflate_ms\": %.3f, "
           "\"libpng_encode_ms\": %.3f, \"libpng_encode_bytes\": %zu, \"libdeflate_deflate_ms\": %.3f, "
           "\"libdeflate_deflate_bytes\": %zu, \"result\": \"%ux%u\", \"libdeflate_levels\": [",
           libpng_decode, zlib_inflate, libdeflate_inflate, libpng_encode, encoded.length, libdeflate_deflate, deflated_size,
           out_width, out_height);
    // Every libdeflate level over the same rows, beside libpng's zlib 6 above: which of its levels
    // makes the files zlib 6 makes (webimage's default level is chosen from these).
    for (int level = 1; level <= 9; level++) {
        struct libdeflate_compressor *leveled = libdeflate_alloc_compressor(level);
        start = now();
        for (int round = 0; round < rounds; round++) deflated_size = libdeflate_zlib_compress(leveled, filtered, filtered_size, deflated, filtered_size * 2);
        printf("%s{\"level\": %d, \"ms\": %.3f, \"bytes\": %zu}", level > 1 ? ", " : "", level, (now() - start) / rounds * 1000,
               deflated_size);
        libdeflate_free_compressor(leveled);
    }
    printf("]}\n");
    return 0;
}
